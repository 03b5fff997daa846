"""The extractive harness: a deterministic case briefing, retrieval only, no model.

It is what ``make demo`` runs and what every user without a model gets, and the baseline every model
must beat. For one case it:

1. reads the case for what the customer wants, the names and tools it mentions and the facts to check
   (``skillrag.harness._focus``), leaving out sentences about the conversation itself;
2. searches with at most five ``retrieve`` calls: the want, the case's details, the names it mentions,
   then up to two follow-up queries built from the best procedures read so far: a lookup for the
   plainest identifier their tools take that the case does not give ("retrieve account_id"), then a
   prerequisite ("The account must not have any pending disputes" leads to the dispute-history
   procedure);
3. confirms which names are products of the help center (a navigation-layer entity page has that title,
   or a retrieved article's title names it whole) and reads each one's overview article;
4. with a navigation layer: adds the staff procedures of the case's families to the reading order (the
   articles the entity pages of the best hits list, scored by BM25 of their title and one-line summary
   against the case: the family catalog), so a procedure written in the help center's words is read even
   when the customer's words do not retrieve it; when the case compares products, reads each sibling
   product's lead article from the category overview page and the sibling articles of the aspect page
   the want matches instead;
5. reads the best articles with ``get_article`` (the skill's fetch budget, up to ``max_fetch``), following
   article ids that a procedure names, and cuts them into passages (whole list items, whole sentences,
   small tables: ``skillrag.text.passages``), dropping what must not be quoted (text addressed to an AI agent,
   parameter lines, code, marketing lines, questions, glossary entries that repeat a quoted term); the
   rest is scored by BM25 (``bm25s``) against the case focus, with weight for numbered steps, tool names
   and rules; every tool a kept procedure tells the reader to use is quoted once (its most valuable
   line), unless it sits in another flow of a manual;
6. groups the chosen passages by procedure (article), procedures in relevance order and passages in the
   article's order, each with a ``why`` that names the case terms it matched (content words only) and
   the rule it states; says what the briefing does not decide and which case facts to check; and saves
   through the same ``save_output`` the LLM harness uses, so the same evidence contract applies.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skillrag.errors import ArticleNotFound, EmptyInputError, SkillragError
from skillrag.harness._focus import CaseFocus, case_focus, content_terms
from skillrag.harness._session import Session
from skillrag.search.fusion import reciprocal_rank_fusion
from skillrag.skill import Case, SavedOutput, Skill, hit_to_dict
from skillrag.text import BM25, STOP_WORDS, Analyzer, Passage, passages, uses_tool

__all__ = ["ExtractiveHarness", "case_focus", "plan_queries"]

#: Procedures scoring under this share of the best procedure's score are left out of the briefing.
PROCEDURE_FLOOR = 0.35
#: Passages under this relevance (0–1, BM25 against the case focus) share only common words with the case.
PASSAGE_FLOOR = 0.2
#: Words that mark a request to choose between products.
_CHOOSE = re.compile(
    r"\b(?:best|highest|lowest|most|least|cheapest|compare|comparison|which (?:one|card|account|plan|product)|"
    r"recommend\w*|looking for an?|options?|choose|pick|suits?|fits?)\b",
    re.IGNORECASE,
)
#: Title words of an overview article ("X at a glance", "X: Complete Guide", "Getting started with X").
_OVERVIEW = re.compile(
    r"\b(?:at a glance|overview|summary|complete guide|getting started|introduction|intro|basics|key facts|"
    r"all about|table of contents)\b",
    re.IGNORECASE,
)
#: … and words of a title that is often the next best thing ("X: specifications and requirements").
_OVERVIEW_WEAK = re.compile(r"\b(?:guide|about|specifications|requirements|features|apply|eligibility|welcome)\b",
                            re.IGNORECASE)
#: A line that states a prerequisite or a lookup another procedure must do first.
_PREREQUISITE = re.compile(r"\b(?:must|verify|verified|check|confirm|ensure|before|required|requires|only if|"
                           r"not have|no pending|pending|first|retrieve|look up|identity)\b", re.IGNORECASE)
_REQUIREMENT_HEADING = re.compile(r"\b(?:requirements?|prerequisites?|before|eligib\w*|verif\w*|checks?)\b",
                                  re.IGNORECASE)
#: A step that opens a procedure with a check the reader must do first.
_OPENING_STEP = re.compile(r"(?:step \d+:\s*)?(?:verify|check|confirm|ensure|validate|authenticate|retrieve|look up)\b",
                           re.IGNORECASE)
#: An identifier a tool takes as input ("card_id", "order_number").
_INPUT_ID = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:id|number|code)\b")
#: Titles of staff procedures (internal articles, protocols, processing steps): what a specialist acts on.
_STAFF = re.compile(r"\b(?:internal|procedures?|protocol|processing|process|guidelines?|playbook|runbook|sop)\b",
                    re.IGNORECASE)
#: A navigation-page summary that reads as a staff procedure: it tells agents what to do, or names a tool.
_STAFF_SUMMARY = re.compile(r"\b(?:agents?|procedures?|process|protocol|internal|tools?)\b", re.IGNORECASE)
#: Weight of a staff procedure's catalog match (its page summary against the case) in the reading order.
CATALOG_WEIGHT = 0.8
#: Fetches a comparison keeps for the sibling products' lead articles and aspect articles.
COMPARE_READS = 5
#: How a lookup follow-up query starts ("retrieve account_id").
_LOOKUP = "retrieve "
#: Title prefixes that label an article's kind rather than name a family ("FAQ: …", "Update: …").
_LABELS = frozenset({"faq", "faqs", "troubleshooting", "update", "note", "notice", "guide", "how to", "tip", "tips",
                     "news", "announcement", "reminder", "important", "new", "help", "q a", "overview"})
#: A capitalised phrase in a title (a product name: "Lime Green Account").
_TITLE_NAME = re.compile(r"(?:\b[A-Z][\w'+-]*[+]?\s+){1,4}[A-Z][\w'+-]*")
_ARTICLE_REF = re.compile(r"`([A-Za-z0-9][\w.#/-]{2,120})`|\(([a-z0-9][a-z0-9_.-]*-[a-z0-9_.-]+)\)")
_TITLE_SPLIT = re.compile(r"\s*(?::|\u2014|\u2013| - | \| )\s*")
_MARKUP = re.compile(r"\*\*|__")
_DISCLAIMER = (
    "Case briefing (retrieval only, no model). Every numbered line below is quoted word for word from the "
    "help center and checked by the evidence contract; procedures are listed most relevant first, passages "
    "in each article's own order. It is a starting point for a specialist, not a decision."
)


def plan_queries(focus: CaseFocus, max_queries: int = 3) -> list[tuple[str, str]]:
    """The first-round queries for a case, as ``(role, text)``: ``want`` (what the customer wants),
    ``detail`` (the case's other informative sentences, with any tool names) and ``names`` (the
    capitalised names it mentions), each only when it has content and differs from the ones before;
    at most ``max_queries``."""
    out: list[tuple[str, str]] = []
    if focus.want.strip():
        out.append(("want", focus.want))
    detail = " ".join(p for p in (focus.detail, " ".join(focus.tools)) if p).strip()
    if detail and detail != focus.want:
        out.append(("detail", detail))
    names = focus.product_names()
    if names:  # asked only for the names the first results confirm as products (see ``run``)
        out.append(("names", " ".join(names[:8])))
    if not out and focus.tools:
        out.append(("detail", " ".join(focus.tools)))
    return out[:max_queries]


@dataclass
class _Read:
    """One article read through ``get_article``."""

    id: str
    title: str
    body: str
    why_read: str  # "search", "catalog", "entity", "aspect", "reference", "follow-up"
    entity: str | None = None
    passages: list[Passage] = field(default_factory=list)
    follows: str | None = None  # the prerequisite line of another procedure that led here
    follow_terms: set[str] = field(default_factory=set)
    parent: str | None = None  # the id of that procedure


@dataclass
class _Group:
    """One procedure of the briefing: an article read and the passages chosen from it."""

    read: _Read
    score: float
    chosen: list[int] = field(default_factory=list)  # passage indexes into read.passages


def _norm_title(text: str) -> str:
    return " ".join(re.sub(r"[^\w+]+", " ", text.lower()).split())


def _starts_with(title: str, name: str) -> bool:
    t, n = _norm_title(title), _norm_title(name)
    t = t.removeprefix("the ")
    return bool(n) and (t == n or t.startswith(n + " "))


def _names_whole(title: str, name: str) -> bool:
    """True when ``title`` starts with ``name`` as a whole name: the title ends there, or goes on after a
    separator (":", a dash, a bracket) or with a word in lower case. "EcoCard: Apply" names "EcoCard";
    "Rho Bank Plus: Overview" does not name "Rho-Bank" (the capitalised "Plus" makes it a longer name)."""
    if not _starts_with(title, name):
        return False
    words = list(re.finditer(r"[\w+]+", title))
    if words and words[0].group(0).lower() == "the" and not _norm_title(name).startswith("the "):
        words = words[1:]
    n = len(_norm_title(name).split())
    if len(words) <= n:
        return True
    gap = title[words[n - 1].end() : words[n].start()]
    return bool(re.search(r"[:\u2014\u2013|(\[]|\s-\s", gap)) or not words[n].group(0)[:1].isupper()


def _same_product(title: str, name: str) -> bool:
    """True when ``title`` names product ``name``: the name's words appear in order, starting at the
    same first word, with at most two extra words before its last word ("Diamond Elite Savings Account"
    for "Diamond Elite Account"; not "Lime Green Account" for "Green Account")."""
    nw = _norm_title(name).split()
    tw = _norm_title(title).split()
    if not nw:
        return False
    for start in (i for i, w in enumerate(tw) if w == nw[0]):
        j, extra = 1, 0
        k = start + 1
        while j < len(nw) and k < len(tw):
            if tw[k] == nw[j]:
                j += 1
            elif j == len(nw) - 1 and extra < 2:
                extra += 1
            else:
                break
            k += 1
        if j == len(nw):
            prev = tw[start - 1] if start > 0 else ""
            # "Light Green Account" is not "Green Account": a capitalised word just before the name extends it
            before = _word_before(title, nw[0])
            if prev and before and before[:1].isupper() and prev not in STOP_WORDS:
                continue
            return True
    return False


def _word_before(title: str, first: str) -> str:
    words = re.findall(r"[\w+'-]+", title)
    for i, w in enumerate(words):
        if w.lower() == first and i > 0:
            return words[i - 1]
    return ""


def _id_family(aid: str) -> str:
    """An article id without its trailing number ("doc_gold_card_003" → "doc_gold_card")."""
    return re.sub(r"[_\-.]?\d+$", "", aid.split("#", 1)[0])


def _family(title: str) -> str | None:
    """The family a title names before its aspect ("Gold Rewards Card: Fees" → "gold rewards card"), or None."""
    parts = _TITLE_SPLIT.split(title, maxsplit=1)
    if len(parts) != 2 or not 0 < len(parts[0].split()) <= 6:
        return None
    head = _norm_title(parts[0])
    return None if _STAFF.search(head) or head in _LABELS else head


def _glossary_term(text: str) -> str:
    """The term a glossary entry defines ("`freeze_card`: Freezes a card" → "freeze_card")."""
    head = re.split(r"\s*(?::|\u2014|\u2013| - )\s*", _MARKUP.sub("", text).strip(" -*"), maxsplit=1)[0]
    return head.strip("` ").lower()


def _display(text: str) -> str:
    """A passage as one guidance line: bold markers dropped, whitespace collapsed, a table's cells
    joined with dashes and its rows with semicolons."""
    if text.lstrip().startswith("|"):
        rows = []
        for line in text.splitlines():
            if re.match(r"^\s*\|?\s*:?-{3,}", line):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(" \u2014 ".join(c for c in cells if c))
        return _MARKUP.sub("", "; ".join(r for r in rows if r))
    out = ""
    for ln in (x for x in text.splitlines() if x.strip()):
        item = re.match(r"^\s*(?:\d{1,3}[.)]|[-*+\u2022])\s+", ln)
        ln = ln[item.end():].strip() if item else ln.strip()
        # a lead-in and its list read "…: a; b; c"; a wrapped line just continues
        out += ln if not out else (("; " if item and not re.search(r"[:.!?]$", out) else " ") + ln)
    return " ".join(_MARKUP.sub("", out).split())


@dataclass(kw_only=True, eq=False)
class ExtractiveHarness:
    """Deterministic case briefing: retrieve → read → select → group → save; no model. See the module
    docstring.

    ``max_fetch`` caps the articles read (the skill's fetch budget caps it further); ``k`` is the hits
    asked of each ``retrieve`` call; ``max_snippets`` caps the snippets (the skill's ``max_snippets``
    caps it further); ``max_procedures`` caps the procedures (articles) quoted and ``per_procedure`` the
    snippets from one of them (the first procedure may take two more); ``max_entities`` caps the named
    products whose overview is read; ``follow_ups`` is how many follow-up queries it may spend;
    ``stemmer`` is the Snowball language of its ``analyzer`` (None: no stemming).
    """

    name = "extractive"

    max_fetch: int = 12
    k: int = 20
    max_snippets: int = 15
    max_procedures: int = 10
    per_procedure: int = 4
    max_entities: int = 4
    follow_ups: int = 2
    stemmer: str | None = "english"
    analyzer: Analyzer = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.analyzer = Analyzer(None, self.stemmer)

    # ------------------------------------------------------------------------------------------
    def run(self, session: Session, case: Case, skill: Skill, out_path=None) -> SavedOutput:
        """Brief one case through ``session``; returns the accepted output. Raises ``EmptyInputError``
        when the case gives nothing to search for or retrieval finds nothing to quote,
        ``ContractViolation`` if the save is rejected, ``BudgetExceeded`` when a budget runs out."""
        case = session.load_case(case.case_id)
        focus = case_focus(case, self.analyzer)
        first = plan_queries(focus, max_queries=min(3, session.queries_left))
        if not first:
            raise EmptyInputError(f"case {case.case_id!r}: nothing to search for (empty contact reason and notes)")
        cfg = skill.config
        state = _State(session, self, focus)
        for role, query in first:
            if role != "names":
                state.search(role, query, k=self.k)
        state.confirm_entities()
        names = state.entities or [n for n in focus.product_names() if " " in n]
        if names and session.queries_left > 0:  # the names, with what the case asks about them
            state.search("names", " ".join(names[:8] + state.aspect_terms()), k=max(self.k, 30))
            state.confirm_entities()
        state.score_catalog()
        state.read_plan()
        state.follow_up()
        state.fill()
        if not state.reads:
            raise EmptyInputError(f"case {case.case_id!r}: retrieval found no article to read")
        for r in state.reads:
            r.passages = passages(r.body, min_chars=cfg.min_snippet_chars,
                                  max_chars=min(cfg.max_snippet_chars, 1200))
        groups = self._select(state, min(self.max_snippets, cfg.max_snippets))
        if not any(g.chosen for g in groups):
            raise EmptyInputError(f"case {case.case_id!r}: the articles read hold no passage that matches the case")
        output = self._compose(case, state, groups)
        return session.save(output, out_path)

    # ------------------------------------------------------------------------------------------
    def _select(self, state: _State, limit: int) -> list[_Group]:
        """Score every passage of every article read, pick procedures and their passages.

        A passage's relevance is its BM25 score against the case focus (the want counted twice, the
        details, the confirmed product names), scaled to 0–1 over all passages read; for an article read
        as a follow-up it is at least 0.8 × its score against the prerequisite line that led there. Noise
        (``Passage.noise``) never counts. A procedure's score mixes its best and three best passages, its
        retrieval rank, its family-catalog match and whether it names a confirmed product or carries
        steps or tools; procedures under ``PROCEDURE_FLOOR`` × the best one's score are left out (at most
        ``max_procedures`` are kept, plus any prerequisite read for a kept one that tells the reader which
        tool to use, so that a lookup a kept procedure needs is not cut). Every procedure kept first gets
        its most valuable passage; then every tool a kept procedure tells the reader to use that no line
        quotes yet gets its most valuable line (at most ``per_procedure`` + 2 per procedure), unless the
        line sits in another flow of a manual (neither the article's title nor the line's section matches
        the case); the rest of the snippet budget goes by value (relevance plus weight for a tool the line
        tells the reader to use, steps, rules, and rules about a tier or product the case names), at most
        ``per_procedure`` per procedure (two more for the first).
        """
        flat: list[tuple[_Read, int]] = [(r, i) for r in state.reads for i in range(len(r.passages))]
        if not flat:
            return []
        focus = state.focus
        docs = [content_terms(r.passages[i].heading + " " + r.passages[i].text, self.analyzer) for r, i in flat]
        query = content_terms(focus.want, self.analyzer, exclude=focus.name_words) * 2
        query += content_terms(focus.detail, self.analyzer, exclude=focus.name_words)
        # names count once: a tier or product the case names ("Plus", "Gold Rewards Card") decides rules
        query += sorted({t for w in focus.name_words for t in content_terms(w, self.analyzer)})
        query += [t for e in state.entities for t in content_terms(e, self.analyzer)]
        index = None
        if any(docs):
            index = state.bm25.index([d or ["\u2205"] for d in docs])

        def scores_for(q: list[str]) -> np.ndarray:
            if index is None or not q:
                return np.zeros(len(flat))
            sc = np.asarray(index.get_scores(q), dtype=float)
            return sc / sc.max() if sc.max() > 0 else sc

        case_rel = scores_for(query)
        rel: dict[tuple[str, int], float] = {}
        follow_rel: dict[str, np.ndarray] = {}
        for n, (r, i) in enumerate(flat):
            v = float(case_rel[n])
            if r.follows:
                if r.id not in follow_rel:
                    follow_rel[r.id] = scores_for(sorted(r.follow_terms))
                v = max(v, 0.8 * float(follow_rel[r.id][n]))
            rel[(r.id, i)] = v
        state.passage_terms = {(r.id, i): set(docs[n]) for n, (r, i) in enumerate(flat)}

        best_fused = max(state.fused.values()) if state.fused else 1.0
        groups: list[_Group] = []
        for r in state.reads:
            idx = [i for i in range(len(r.passages)) if r.passages[i].noise is None]
            if not idx:
                continue
            matched = sorted((rel[(r.id, i)] for i in idx), reverse=True)
            mean3 = sum(matched[:3]) / min(3, len(matched))
            procedure = any(r.passages[i].is_step or r.passages[i].tools for i in idx)
            tt = set(content_terms(r.title, self.analyzer))
            title_cover = len(tt & focus.terms) / len(tt) if tt else 0.0
            score = (0.35 * matched[0] + 0.2 * mean3 + 0.25 * state.fused.get(r.id, 0.0) / best_fused
                     + 0.25 * title_cover + (0.15 if r.entity else 0.0) + (0.1 if procedure else 0.0)
                     + 0.3 * state.catalog.get(r.id, 0.0))
            groups.append(_Group(r, score))
        by_id = {g.read.id: g for g in groups}
        for g in groups:  # a prerequisite ranks with the procedure that needs it
            parent = by_id.get(g.read.parent or "")
            if parent is not None:
                g.score = max(g.score, 0.8 * parent.score)
        groups.sort(key=lambda g: -g.score)
        if not groups:
            return []
        floor = PROCEDURE_FLOOR * groups[0].score
        kept = [g for g in groups if g.score >= floor][: self.max_procedures]
        # a prerequisite read for a kept procedure stays when it tells the reader which tool to use
        kept_ids = {g.read.id for g in kept}
        kept += [g for g in groups if g not in kept and g.read.parent in kept_ids
                 and any(p.uses_tool and p.noise is None for p in g.read.passages)]
        groups = kept

        seen_text: set[str] = set()
        seen_terms: list[set[str]] = []
        quoted_tools: set[str] = set()

        def take(g: _Group, i: int) -> bool:
            p = g.read.passages[i]
            key = " ".join(p.text.lower().split())
            terms = state.passage_terms[(g.read.id, i)]
            if i in g.chosen or key in seen_text:
                return False
            if any(terms and len(terms & s) / len(terms | s) >= 0.85 for s in seen_terms):
                return False
            if p.glossary and (set(p.tools) & quoted_tools or _glossary_term(p.text) in quoted_tools):
                return False  # a glossary entry for a tool a procedure already names
            seen_text.add(key)
            seen_terms.append(terms)
            quoted_tools.update(t.lower() for t in p.tools)
            g.chosen.append(i)
            return True

        def relevant(g: _Group, i: int) -> bool:
            """Shares case terms with real weight, or is a step / tool / rule line of a section that does."""
            p = g.read.passages[i]
            if p.noise is not None:
                return False
            if rel[(g.read.id, i)] >= PASSAGE_FLOOR or p.uses_tool or (p.is_rule and names_case(p)):
                return True  # a tool a kept procedure uses is one of its decisive lines
            if not (p.is_step or p.tools or p.is_rule):
                return False
            same = [j for j, q in enumerate(g.read.passages) if q.heading == p.heading and q.noise is None]
            return any(rel[(g.read.id, j)] >= 2 * PASSAGE_FLOOR for j in same)

        named = {w for w in focus.name_words if len(w) > 2} | {e.lower() for e in state.entities}

        def names_case(p: Passage) -> bool:
            low = p.text.lower()
            return any(re.search(rf"\b{re.escape(w)}\b", low) for w in named)

        def article_matches(g: _Group) -> bool:
            """The article as a whole is a procedure for the case: its title shares a third of its
            content terms with the case, or its family catalog entry matches the case well."""
            tt = set(content_terms(g.read.title, self.analyzer))
            return bool(tt) and len(tt & focus.terms) / len(tt) >= 1 / 3 or state.catalog.get(g.read.id, 0.0) >= 0.5

        def section_rel(g: _Group, heading: str) -> float:
            """The best case relevance of a passage under ``heading`` in ``g``'s article."""
            return max((rel[(g.read.id, j)] for j, q in enumerate(g.read.passages)
                        if q.heading == heading and q.noise is None), default=0.0)

        def value(g: _Group, i: int) -> float:
            p = g.read.passages[i]
            v = rel[(g.read.id, i)] + 0.2 * bool(p.tools) + 0.6 * p.uses_tool + 0.15 * p.is_step + 0.1 * p.is_rule
            v += 0.3 * (p.is_rule and names_case(p))  # a rule about the tier or product the case names decides it
            return (v - 0.3 * p.glossary) * (0.5 + 0.5 * g.score / groups[0].score)

        total = 0
        cands = sorted((-value(g, i), gi, i) for gi, g in enumerate(groups) for i in range(len(g.read.passages))
                       if relevant(g, i))
        # every procedure kept first gets its most valuable passage (a tool line wins ties), then the rest by value
        for gi, g in enumerate(groups):
            for _, cgi, i in cands:
                if total >= limit:
                    break
                if cgi == gi:
                    if take(g, i):
                        total += 1
                    break
        # then every tool a kept procedure tells the reader to use, once (its most valuable line)
        for _, gi, i in cands:
            if total >= limit:
                break
            g, p = groups[gi], groups[gi].read.passages[i]
            if not p.uses_tool or p.glossary or len(g.chosen) >= self.per_procedure + 2:
                continue
            if not (article_matches(g) or section_rel(g, p.heading) >= 2 * PASSAGE_FLOOR):
                continue  # another flow of a manual that holds several
            if {t.lower() for t in p.tools} - quoted_tools and take(g, i):
                total += 1
        for _, gi, i in cands:
            if total >= limit:
                break
            g = groups[gi]
            if len(g.chosen) >= self.per_procedure + (2 if gi == 0 else 0):
                continue
            if take(g, i):
                total += 1
        for g in groups:
            g.chosen.sort(key=lambda i: g.read.passages[i].position)
        return [g for g in groups if g.chosen]

    # ------------------------------------------------------------------------------------------
    def _why(self, state: _State, g: _Group, i: int, n: int) -> str:
        """Why snippet ``n`` (its guidance line number) was chosen: the case terms it matched (content
        words only), the tool it names, the rule it states, where it sits in its article."""
        p = g.read.passages[i]
        bits: list[str] = []
        matched: list[str] = [e for e in state.entities if e.lower() in p.text.lower()]
        terms = state.passage_terms.get((g.read.id, i), set())
        seen: set[str] = set()
        for word in re.findall(r"(?u)\b[\w][\w'\-]*\b", p.text):
            low = word.lower()
            if low in STOP_WORDS or len(low) < 3 or low.isdigit() or low in state.focus.name_words:
                continue
            stems = content_terms(low, self.analyzer)
            if stems and stems[0] in state.focus.terms and stems[0] in terms and stems[0] not in seen:
                seen.add(stems[0])
                matched.append(low)
        if matched:
            bits.append("matches case terms: " + ", ".join(dict.fromkeys(matched[:5])))
        if p.tools:
            bits.append("names tool " + ", ".join(p.tools[:3]))
        if p.rule is not None:
            label = {"limit": "a limit", "amount": "an amount", "condition": "a condition"}[p.rule.kind]
            bits.append(f"states {label} ({p.rule.phrase})")
        if p.is_step:
            where = p.heading or g.read.title
            bits.append(f"item {p.step_no} of the article's '{where}' list" if p.step_no else "a procedure step")
        elif not matched:
            bits.append(f"part of '{p.heading or g.read.title}', a section that matches the case")
        return f"Supports step {n} ({g.read.title}): " + "; ".join(bits) + "."

    def _compose(self, case: Case, state: _State, groups: list[_Group]) -> dict[str, Any]:
        lines = [_DISCLAIMER, ""]
        if state.entities:
            lines.append("Named in the case and found in the help center: " + ", ".join(state.entities) + ".")
            lines.append("")
        snippets: list[dict[str, str]] = []
        rule_refs: list[int] = []
        n = 0
        for gno, g in enumerate(groups, 1):
            lines.append(f"Procedure {gno}: {g.read.title} [{g.read.id}]")
            heading = None
            for i in g.chosen:
                p = g.read.passages[i]
                n += 1
                if p.heading and p.heading != heading:
                    lines.append(f"  {p.heading}")
                    heading = p.heading
                lines.append(f"  {n}. {_display(p.text)}")
                if p.rule is not None and p.rule.kind in ("condition", "limit"):
                    rule_refs.append(n)
                snippets.append({"source_article": g.read.id, "source_title": g.read.title, "text": p.text,
                                 "why": self._why(state, g, i, n)})
            lines.append("")
        lines.append("What this briefing does not decide:")
        if len(state.entities) > 1 or state.comparing:
            lines.append("- which product fits the customer: the passages describe the products; a specialist "
                         "compares them against the customer's needs.")
        else:
            lines.append("- which product or option fits the customer.")
        refs = ", ".join(str(r) for r in rule_refs[:8])
        lines.append("- whether the customer is eligible or meets the conditions"
                     + (f" quoted in {refs}" if refs else "") + ".")
        lines.append("- whether each procedure applies to this case; if none covers the request, escalate "
                     "rather than improvise.")
        if state.focus.facts:
            lines += ["", "Facts stated in the case to check against the customer's records before acting:"]
            lines += [f"- {f}" for f in state.focus.facts[:6]]
        cited = list(dict.fromkeys(s["source_article"] for s in snippets))
        return {
            "case_id": case.case_id,
            "guidance": "\n".join(lines).rstrip(),
            "snippets": snippets,
            "n_snippets": len(snippets),
            "articles_consulted": list(dict.fromkeys([r.id for r in state.reads] + cited)),
            "meta": {"harness": self.name, "deterministic": True, "model": None,
                     "queries": [{"role": role, "query": q} for role, q in state.queries],
                     "reads": [{"id": r.id, "why": r.why_read} for r in state.reads]},
        }


class _State:
    """What one briefing run has searched and read so far, and its reading plan."""

    def __init__(self, session: Session, harness: ExtractiveHarness, focus: CaseFocus) -> None:
        self.session = session
        self.h = harness
        self.focus = focus
        self.queries: list[tuple[str, str]] = []
        self.hits: dict[str, list[dict[str, Any]]] = {}
        self.titles: dict[str, str] = {}
        #: the fusion constant of every query's ranks: the workspace's ``search.rrf_k``
        self.rrf_k = session.tools.workspace.config.search.rrf_k
        #: the BM25 parameters of passage and catalogue scoring: the workspace's (``search.bm25_k1``, ``bm25_b``)
        self.bm25 = BM25.of(session.tools.workspace.config.search)
        #: each query's ranking and weight, in query order (``fused``)
        self.rankings: list[tuple[list[str | None], float]] = []
        self._fused: dict[str, float] | None = None
        self.entities: list[str] = []
        self.entity_words: frozenset[str] = frozenset()
        self.comparing = bool(_CHOOSE.search(focus.want))
        self.reads: list[_Read] = []
        self.failed: set[str] = set()
        self.passage_terms: dict[tuple[str, int], set[str]] = {}
        self.pages = _NavLayer.load(session)
        self.catalog: dict[str, float] = {}

    # -- budgets ------------------------------------------------------------------------------
    @property
    def fetch_limit(self) -> int:
        return min(self.h.max_fetch, self.session.budgets.max_fetches)

    def fetches_left(self) -> int:
        return max(0, min(self.session.fetches_left, self.fetch_limit - len(self.reads)))

    def read_ids(self) -> set[str]:
        return {r.id for r in self.reads} | self.failed

    # -- tools --------------------------------------------------------------------------------
    def search(self, role: str, query: str, k: int, weight: float = 1.0) -> list[dict[str, Any]]:
        if self.session.queries_left <= 0:
            return []
        ranked = getattr(self.session, "search", None)
        if callable(ranked):  # the retrieve tool with navigation pages (wiki backend)
            result = ranked(query, k)
            hits = [hit_to_dict(h) for h in result]
            self.pages.add_hits(getattr(result, "pages", []) or [])
        else:
            hits = self.session.retrieve(query, k)
        self.queries.append((role, query))
        self.hits[role] = hits
        ranking: list[str | None] = []
        for hit in hits:
            aid = hit["article_id"]
            self.titles.setdefault(aid, hit.get("title") or aid)
            # the names query counts only for articles about the products the case names (the others
            # keep their rank, so the named ones below them are not promoted)
            named = role != "names" or self._product_kind(self.titles[aid]) == "named"
            ranking.append(aid if named else None)
        self.rankings.append((ranking, weight))
        self._fused = None
        return hits

    @property
    def fused(self) -> dict[str, float]:
        """``article id -> score``: the reciprocal rank fusion (``search.fusion``, ``search.rrf_k``) of
        every query's ranks, each weighted (follow-up queries count half), in the order the queries
        first found them."""
        if self._fused is None:
            fused = dict(reciprocal_rank_fusion([r for r, _ in self.rankings], k=self.rrf_k,
                                                weights=[w for _, w in self.rankings]))
            found = dict.fromkeys(a for r, _ in self.rankings for a in r if a is not None)
            self._fused = {a: fused[a] for a in found}
        return self._fused

    def aspect_terms(self, limit: int = 4) -> list[str]:
        """Words of the want that recur in the titles of its best hits: what the case asks about the
        products it names ("ATM fees" of the Blue and Green accounts)."""
        counts: dict[str, int] = defaultdict(int)
        words: dict[str, str] = {}
        for hit in self.hits.get("want", [])[:10]:
            for w in set(re.findall(r"(?u)\b[a-z][\w-]+\b", hit.get("title", "").lower())):
                if w in STOP_WORDS or w in self.entity_words:
                    continue
                stems = content_terms(w, self.h.analyzer)
                if stems and stems[0] in self.focus.want_terms:
                    counts[stems[0]] += 1
                    words.setdefault(stems[0], w)
        best = sorted((t for t, c in counts.items() if c >= 2), key=lambda t: -counts[t])
        return [words[t] for t in best[:limit]]

    def read(self, aid: str, why: str, entity: str | None = None) -> _Read | None:
        if aid in self.read_ids() or self.fetches_left() <= 0:
            return None
        try:
            view = self.session.get_article(aid)
        except ArticleNotFound:
            self.failed.add(aid)
            return None
        r = _Read(view.id, view.title, view.text, why, entity)
        self.titles[view.id] = view.title
        self.reads.append(r)
        return r

    # -- plan ---------------------------------------------------------------------------------
    def confirm_entities(self) -> None:
        """Keep the names that are products of the help center: an entity page has that title, or a
        retrieved article's title starts with it."""
        titles = list(self.titles.values()) + self.pages.entity_titles()
        for name in self.focus.product_names():
            # a one-word name must start a title ("EcoCard: …"); mid-title it is more often the company
            if any(_names_whole(t, name) if " " not in name else _same_product(t, name) for t in titles):
                # a shorter name inside a longer confirmed one ("Light Blue" in "Light Blue Account") adds nothing
                if any(name.lower() in e.lower() for e in self.entities):
                    continue
                self.entities = [e for e in self.entities if e.lower() not in name.lower()] + [name]
        words = {w for e in self.entities for w in re.findall(r"(?u)\b\w+\b", e.lower())}
        self.entity_words = frozenset(words)

    def _overview(self, name: str) -> str | None:
        """The overview article of product ``name``: from its entity page, else from the hits whose
        titles start with the name (the lead article a category overview page lists first, then an
        "at a glance" / "overview" / "getting started" title)."""
        cands = self.pages.entity_articles(name) or [(a, t) for a, t in self.titles.items() if _starts_with(t, name)]
        cands = [(a, t) for a, t in cands if a not in self.read_ids()]
        if not cands:
            return None
        rank = {a: n for n, a in enumerate(sorted(self.fused, key=lambda a: -self.fused[a]))}

        leads = self.pages.lead_ids()

        def key(item: tuple[str, str]) -> tuple[int, int, int]:
            aid, title = item
            rest = title[len(name):] if _starts_with(title, name) else title
            tier = -1 if aid in leads else 0 if _OVERVIEW.search(rest) else 1 if _OVERVIEW_WEAK.search(rest) else 2
            return (tier, len(rest.split()), rank.get(aid, 10_000))

        return min(cands, key=key)[0]

    def score_catalog(self) -> None:
        """Score the staff procedures of the case's families (``_NavLayer.family_catalog`` of the best
        ten hits of the ``want`` and ``detail`` queries) by BM25 of their title and page summary against
        the case focus (the want counted twice), scaled to the best one (0–1): ``self.catalog``. A
        procedure is an article whose title or summary reads as staff work (``_STAFF``,
        ``_STAFF_SUMMARY``) or names a tool. Needs a navigation layer with entity pages; else empty.
        A comparison skips it: product facts decide one, and a procedure that shares only the
        products' words ("cash back") is another flow."""
        if self.comparing:
            return
        top = [h["article_id"] for role in ("want", "detail") for h in self.hits.get(role, [])[:10]]
        cat = self.pages.family_catalog(list(dict.fromkeys(top)))
        if not cat:
            return
        ids = list(cat)
        docs = [content_terms(t + " " + summ, self.h.analyzer) or ["\u2205"] for t, summ in cat.values()]
        index = self.bm25.index(docs)
        excl = self.focus.name_words
        query = content_terms(self.focus.want, self.h.analyzer, exclude=excl) * 2
        query += content_terms(self.focus.detail, self.h.analyzer, exclude=excl)
        if not query:
            return
        sc = np.asarray(index.get_scores(query), dtype=float)
        best = 0.0
        for aid, v in zip(ids, sc, strict=True):
            title, summ = cat[aid]
            title = self.titles.get(aid, title)
            if v > 0 and (_STAFF.search(title) or _STAFF_SUMMARY.search(summ) or uses_tool(summ)):
                self.catalog[aid] = float(v)
                best = max(best, float(v))
                self.titles.setdefault(aid, title)
        self.catalog = {a: v / best for a, v in self.catalog.items()} if best > 0 else {}

    def ranked(self) -> list[str]:
        """Articles found so far, in reading order: the reciprocal rank fusion of every query's ranks,
        plus how much of the title the case covers, plus a staff procedure's title, plus its catalog
        match (``score_catalog``), plus a named product; an article about a product of the same kind
        that the case does not name comes later."""
        if not self.fused and not self.catalog:
            return []
        top = max(self.fused.values(), default=1.0)
        score: dict[str, float] = {}
        for aid in dict.fromkeys([*self.fused, *self.catalog]):
            f = self.fused.get(aid, 0.0)
            title = self.titles.get(aid, "")
            tt = set(content_terms(title, self.h.analyzer))
            cover = len(tt & self.focus.terms) / len(tt) if tt else 0.0
            v = f / top + 0.25 * cover + 0.2 * bool(_STAFF.search(title)) + CATALOG_WEIGHT * self.catalog.get(aid, 0.0)
            kind = self._product_kind(title)
            if kind == "named":
                v += 0.2
            elif kind == "other":
                v -= 0.35
            score[aid] = v
        return sorted(score, key=lambda a: (-score[a], a))

    def _found_by(self, aid: str) -> str:
        """How an article in the reading order was found: ``search`` (a retrieve hit) or ``catalog``
        (only its family's navigation page lists it, see ``score_catalog``)."""
        return "search" if aid in self.fused else "catalog"

    def _product_kind(self, title: str) -> str | None:
        """``named`` when ``title`` is about a product the case names, ``other`` when it names another
        product of the same kind (same head noun: "Lime Green Account" when the case names "Green
        Account"), else None."""
        if not self.entities:
            return None
        if any(_same_product(title, e) for e in self.entities):
            return "named"
        heads = {e.split()[-1].lower() for e in self.entities}
        for m in _TITLE_NAME.finditer(title):
            words = [w for w in m.group(0).split() if w.lower() not in STOP_WORDS]
            if len(words) >= 2 and words[-1].lower() in heads:
                return "other"
        return None

    def read_plan(self) -> None:
        """First reads: the best hits, then the overview of each named product, then (comparisons) the
        sibling articles an aspect page lists; leave room for follow-ups and references."""
        reserve = min(len(self.entities), self.h.max_entities)
        follow = 3 if self.session.queries_left > 0 else 0
        first = max(2, self.fetch_limit - reserve - follow - (COMPARE_READS if self.comparing else 0))
        for aid in self.ranked():
            if len(self.reads) >= first or self.fetches_left() <= 0:
                break
            if self._family_full(aid):
                continue
            self.read(aid, self._found_by(aid), self._entity_of(aid))
        for name in self.entities[: self.h.max_entities]:
            if any(r.entity == name for r in self.reads if r.why_read == "entity"):
                continue
            aid = self._overview(name)
            if aid:
                self.read(aid, "entity", name)
        if self.comparing:
            self._read_leads()
        if self.comparing:  # one article per sibling product from the aspect page the want matches
            seen_families: set[str] = {_id_family(r.id) for r in self.reads}
            taken = 0
            for aid in self.pages.aspect_articles(self.focus.want, self.h.analyzer):
                fam = _id_family(aid)
                if taken >= 4 or fam in seen_families:
                    continue
                seen_families.add(fam)
                if self.read(aid, "aspect", self._entity_of(aid)):
                    taken += 1

    def _read_leads(self, limit: int = 4) -> None:
        """A comparison reads the lead article of each sibling product first (the category overview
        page's list, ``_NavLayer.lead_articles``): products named in their titles, the ones retrieval
        found first, at most ``limit``, one per family."""
        top = [h["article_id"] for role in ("want", "detail") for h in self.hits.get(role, [])[:10]]
        leads = [(a, t) for a, t in self.pages.lead_articles(list(dict.fromkeys(top)), self.focus.want_terms,
                                                             self.h.analyzer)
                 if a not in self.read_ids() and _TITLE_NAME.match(t.strip()) and not t.rstrip().endswith("?")]
        leads.sort(key=lambda item: -self.fused.get(item[0], 0.0))
        families: set[str] = set()
        taken = 0
        for aid, title in leads:
            if taken >= limit or self.fetches_left() <= 0:
                break
            if _id_family(aid) in families:
                continue
            families.add(_id_family(aid))
            self.titles.setdefault(aid, title)
            if self.read(aid, "aspect", self._entity_of(aid)):
                taken += 1

    def _family_full(self, aid: str, cap: int = 2) -> bool:
        """True when ``cap`` articles of the same family (the title's "Entity:" prefix) were read already."""
        fam = _family(self.titles.get(aid, ""))
        return fam is not None and sum(1 for r in self.reads if _family(r.title) == fam) >= cap

    def _entity_of(self, aid: str) -> str | None:
        title = self.titles.get(aid, "")
        return next((e for e in self.entities if _starts_with(title, e) or e.lower() in title.lower()), None)

    def follow_up(self) -> None:
        """Follow the article ids the best procedures name, then ask for their prerequisites: first the
        opening prerequisite of the best procedure (its first step or requirement: "Verify customer
        identity"), then the prerequisite line that names most terms nothing read so far covers."""
        procedures = [r for r in self.reads if r.why_read in ("search", "catalog", "entity")]
        for r in procedures[:4]:
            for m in _ARTICLE_REF.finditer(r.body):
                ref = m.group(1) or m.group(2)
                if ref in self.titles or ("-" in ref and "_" not in ref):
                    if self.fetches_left() <= 1:
                        return
                    self.read(ref, "reference", self._entity_of(ref))
        for n in range(self.h.follow_ups + (1 if "names" not in self.hits else 0)):
            if self.session.queries_left <= 0 or self.fetches_left() <= 0:
                return
            found = self._inputs() if n == 0 else self._prerequisite(opening=True) if n == 1 else None
            found = found or self._prerequisite(opening=False)
            if not found:
                continue
            line, new, parent = found
            query = " ".join(_display(line).split()[:30])
            hits = self.search("follow-up", query, self.h.k, weight=0.5)
            lookup = line.startswith(_LOOKUP)
            if lookup:  # a lookup: the best-ranked procedure (a tool in its preview, or a staff title)
                order = [i for i in range(min(len(hits), 3)) if uses_tool(hits[i].get("preview", ""))
                         or _STAFF.search(hits[i].get("title", ""))] or [0]
            else:  # what the follow-up adds: hits whose titles carry the line's new terms, best rank first
                order = sorted(range(min(len(hits), 10)), key=lambda i: (
                    -len(set(content_terms(hits[i].get("title", ""), self.h.analyzer)) & new), i))
            taken = 0
            for i in order:
                if taken >= 1 or self.fetches_left() <= 0 or i >= len(hits):
                    break
                aid = hits[i]["article_id"]
                if taken and not lookup and not set(content_terms(hits[i].get("title", ""), self.h.analyzer)) & new:
                    break
                r = self.read(aid, "follow-up", self._entity_of(aid))
                if r is not None:
                    r.follows, r.parent = line, parent
                    r.follow_terms = set(content_terms(line, self.h.analyzer))
                    taken += 1

    def _procedures(self) -> list[_Read]:
        """Articles read from search or references that are staff procedures (they tell the reader to
        use a tool, or their title says internal / procedure / protocol …), best retrieval rank first."""
        order = {a: n for n, a in enumerate(self.ranked())}
        procs = [r for r in self.reads if r.why_read in ("search", "catalog", "reference")
                 and (uses_tool(r.body) or _STAFF.search(r.title))]
        return sorted(procs, key=lambda r: order.get(r.id, 10_000))

    def _inputs(self) -> tuple[str, set[str], str] | None:
        """The identifiers the best procedures' tools take (``card_id``, ``account_id``) that the case
        does not give: the follow-up finds the procedure that looks them up."""
        case_text = (self.focus.want + " " + self.focus.detail).lower()
        counts: dict[str, int] = defaultdict(int)
        procs = self._procedures()[:3]
        for r in procs:
            for m in _INPUT_ID.finditer(r.body):
                if m.group(0) not in case_text:
                    counts[m.group(0)] += 1
        asked = " ".join(q for role, q in self.queries if role == "follow-up")
        # the identifier the procedures need most, the plainest first ("account_id" before "source_account_id")
        ids = [i for i in sorted(counts, key=lambda i: (-counts[i], len(i), i)) if i not in asked][:1]
        if not ids:
            return None
        words = {w for i in ids for w in i.split("_")[:-1] if w not in STOP_WORDS}
        return _LOOKUP + " ".join(ids), set(content_terms(" ".join(words), self.h.analyzer)), procs[0].id

    def _prerequisite(self, *, opening: bool) -> tuple[str, set[str], str] | None:
        """A prerequisite line of the best procedures read with terms no title read (and no follow-up
        asked) covers, and those new terms: with ``opening`` the first such step or requirement of the
        best procedure, else the one with most new terms in the best two."""
        covered = set(self.focus.want_terms)
        for r in self.reads:
            covered |= set(content_terms(r.title, self.h.analyzer))
        asked = {" ".join(q.split()) for role, q in self.queries if role == "follow-up"}
        for role, q in self.queries:
            if role == "follow-up":
                covered |= set(content_terms(q, self.h.analyzer))
        best: tuple[str, set[str], str] | None = None
        for r in self._procedures()[: 2]:
            for p in passages(r.body):
                if p.noise or " ".join(_display(p.text).split()[:30]) in asked or not _PREREQUISITE.search(p.text):
                    continue
                # a numbered step, or a line under a requirements / prerequisites / eligibility heading
                if not (p.is_step or _REQUIREMENT_HEADING.search(p.heading)):
                    continue
                new = set(content_terms(p.text, self.h.analyzer)) - covered
                if opening:  # the first prerequisite the procedure has the reader do ("Verify customer identity")
                    if new and _OPENING_STEP.match(_display(p.text)):
                        return p.text, new, r.id
                    continue
                if len(new) >= 2 and (best is None or len(new) > len(best[1])):
                    best = (p.text, new, r.id)
        return best

    def fill(self) -> None:
        for cap in (2, 10_000):
            for aid in self.ranked():
                if self.fetches_left() <= 0:
                    return
                if not self._family_full(aid, cap):
                    self.read(aid, self._found_by(aid), self._entity_of(aid))


class _NavLayer:
    """The workspace's navigation layer as the briefing uses it: entity pages (one per product family,
    listing all its articles) and aspect pages (one aspect across sibling products). Pages are navigation,
    never evidence. A layer without page kinds (or no layer) gives nothing, and the briefing falls back to
    article titles."""

    def __init__(self, pages: list[Any]) -> None:
        self.entities = [p for p in pages if getattr(p, "kind", "topic") == "entity"]
        self.aspects = [p for p in pages if getattr(p, "kind", "topic") == "aspect"]
        self._known = {getattr(p, "id", None) or getattr(p, "page_id", None) for p in pages}

    def add_hits(self, pages: list[Any]) -> None:
        """Take in the navigation pages a ``retrieve`` call ranked (``PageHit``: page_id, kind, title,
        intent, articles)."""
        for p in pages:
            pid = getattr(p, "page_id", None) or getattr(p, "id", None)
            if pid in self._known:
                continue
            self._known.add(pid)
            if getattr(p, "kind", "topic") == "entity":
                self.entities.append(p)
            elif getattr(p, "kind", "topic") == "aspect":
                self.aspects.append(p)

    @classmethod
    def load(cls, session: Session) -> _NavLayer:
        """The layer's pages as the skill's scope may see them (``corpus.ScopedArticles.page``, the check
        ``retrieve`` applies): a page derived from articles outside it is reduced or left out."""
        ws = getattr(session.tools, "workspace", None)
        scope = getattr(session.tools, "articles", None)
        if ws is None or scope is None:
            return cls([])
        try:
            from skillrag.wiki import load_pages

            return cls([p for p in (scope.page(x) for x in load_pages(ws)) if p is not None])
        except (SkillragError, OSError):
            return cls([])

    def entity_titles(self) -> list[str]:
        return [p.title for p in self.entities]

    @staticmethod
    def _sources(page: Any) -> list[tuple[str, str]]:
        return [(a, t) for a, t, _ in _NavLayer._listed(page)]

    @staticmethod
    def _listed(page: Any) -> list[tuple[str, str, str]]:
        """``(id, title, summary)`` of every article a page lists (``Page.sources`` or ``PageHit.articles``)."""
        out = []
        for s in list(getattr(page, "sources", None) or getattr(page, "articles", None) or []):
            aid = getattr(s, "id", None) or getattr(s, "article_id", None)
            if aid:
                out.append((aid, getattr(s, "title", "") or aid, getattr(s, "summary", "") or ""))
        if not out and callable(getattr(page, "article_ids", None)):
            out = [(a, a, "") for a in page.article_ids()]
        return out

    def family_catalog(self, article_ids: list[str]) -> dict[str, tuple[str, str]]:
        """``{id: (title, summary)}`` for every article listed by the entity pages that list any of
        ``article_ids`` (the families the case's best hits belong to), in the order those hits came."""
        listed = [(p, self._listed(p)) for p in self.entities]
        out: dict[str, tuple[str, str]] = {}
        seen: set[int] = set()
        for aid in article_ids:
            for n, (_, arts) in enumerate(listed):
                if n not in seen and any(a == aid for a, _, _ in arts):
                    seen.add(n)
                    for a, t, summ in arts:
                        out.setdefault(a, (t, summ))
        return out

    def entity_articles(self, name: str) -> list[tuple[str, str]]:
        for p in self.entities:
            if _starts_with(p.title, name):
                return self._sources(p)
        return []

    def lead_ids(self) -> set[str]:
        """Every article a category overview page (an aspect page titled "Overview …") lists as a
        product's lead article."""
        return {a for p in self.aspects if _OVERVIEW.search(getattr(p, "title", "")) for a, _ in self._sources(p)}

    def lead_articles(self, hit_ids: list[str], want_terms: frozenset[str] = frozenset(),
                      analyzer: Analyzer | None = None) -> list[tuple[str, str]]:
        """``(id, title)`` of the lead articles on the category overview page (an aspect page whose title
        says "Overview", listing each sibling product's lead article) that covers the most families of
        ``hit_ids`` (the entity pages listing them) plus the most ``want_terms`` in its title ("Overview
        across business checking accounts" for a business account); ``[]`` without such a page."""
        family_of: dict[str, int] = {}
        for n, p in enumerate(self.entities):
            for a, _ in self._sources(p):
                family_of.setdefault(a, n)
        hit_families = {family_of[a] for a in hit_ids if a in family_of}
        best, score = None, 0
        for p in self.aspects:
            title = getattr(p, "title", "")
            if not _OVERVIEW.search(title):
                continue
            have = {family_of[a] for a, _ in self._sources(p) if a in family_of}
            if not have & hit_families:
                continue
            named = len(set(content_terms(title, analyzer)) & want_terms) if analyzer is not None else 0
            if len(have & hit_families) + named > score:
                best, score = p, len(have & hit_families) + named
        return self._sources(best) if best is not None else []

    def aspect_articles(self, want: str, analyzer: Analyzer) -> list[str]:
        """The articles of the aspect page that best matches ``want`` (shares most content terms)."""
        terms = set(content_terms(want, analyzer))
        best, overlap = None, 1
        for p in self.aspects:
            have = set(content_terms(p.title + " " + getattr(p, "intent", ""), analyzer))
            if len(terms & have) > overlap:
                best, overlap = p, len(terms & have)
        return [a for a, _ in self._sources(best)] if best is not None else []
