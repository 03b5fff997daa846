"""The extractive harness: deterministic, no model. The baseline every model must beat.

For one case it (1) derives 3–5 queries from the case (the contact reason, the reason path, the
named entities and tool names, the most informative note/message sentences), (2) runs them through
``retrieve`` and fuses the rankings by reciprocal rank fusion (k = 60, Cormack et al., 2009),
(3) reads the best articles with ``get_article``, (4) cuts their bodies into candidate passages
(list items, numbered steps, sentences; each an exact slice of the body), (5) scores every
passage by BM25 (``bm25s``) against the case text plus small bonuses for numbered steps, rules and
tool names, and (6) orders the chosen passages by article rank and position into numbered
guidance, one step per passage, each backed by that passage as a verbatim snippet. The output is
saved through the same ``save_output`` the LLM harness uses, so the same contract applies.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import bm25s
import numpy as np

from skillrag.errors import ArticleNotFound, EmptyInputError
from skillrag.harness._session import Session
from skillrag.search.tokenize import Analyzer
from skillrag.skill import Case, SavedOutput, Skill

__all__ = ["ExtractiveHarness", "Passage", "case_queries", "split_passages"]

RRF_K = 60
#: Passages longer than this (characters) are cut into sentences.
LINE_LIMIT = 320
#: The whole-case query is clipped to this many characters (the retriever handles long queries).
WHOLE_CASE_CHARS = 1500
_LIST_MARK = re.compile(r"^(\s*)(?:(\d{1,3})[.)]|[-*+\u2022])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*\S)\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(`*])")
_TOOL = re.compile(r"`([^`\s][^`]{1,60})`|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")
_RULE = re.compile(
    r"\b(must|never|only|required|requires|cannot|can't|do not|don't|not eligible|eligible|unless|"
    r"before|always|prohibited|mandatory|at least|at most|no more than|within)\b",
    re.IGNORECASE,
)
_ENTITY = re.compile(r"\b(?:[A-Z][\w+\-']*[+]?)(?:\s+(?:of\s+|the\s+)?[A-Z][\w+\-']*[+]?)+")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_MARKUP = re.compile(r"\*\*|__")
_WORD = re.compile(r"(?u)\b\w\w+\b")
_CLOSING = (
    "Check each step against the quoted passages; if they do not cover the customer's request, "
    "escalate rather than improvise."
)


@dataclass(frozen=True)
class Passage:
    """A candidate snippet: ``body[start:end]`` of article ``article_id`` (exact slice), the nearest
    heading above it, its order in the article, and its kind flags."""

    article_id: str
    start: int
    end: int
    text: str
    heading: str
    position: int
    is_step: bool
    tools: tuple[str, ...]
    is_rule: bool


def split_passages(
    article_id: str, body: str, *, min_chars: int = 15, max_chars: int = 2000
) -> list[Passage]:
    """Candidate passages of ``body``: each list item / numbered step / short line whole, longer
    lines cut into sentences. Every ``Passage.text == body[start:end]``. Headings and table rules
    are skipped; passages shorter than ``min_chars`` or longer than ``max_chars`` are dropped."""
    out: list[Passage] = []
    heading = ""
    offset = 0
    for line in body.splitlines(keepends=True):
        line_start = offset
        offset += len(line)
        content = line.rstrip("\r\n")
        if not content.strip() or _TABLE_RULE.match(content):
            continue
        h = _HEADING.match(content)
        if h:
            heading = _MARKUP.sub("", h.group(1)).strip()
            continue
        mark = _LIST_MARK.match(content)
        is_step = bool(mark and mark.group(2))
        lead = mark.end() if mark else len(content) - len(content.lstrip())
        text_start = line_start + lead
        text = content[lead:].rstrip()
        if not text:
            continue
        pieces: list[tuple[int, int]]
        if len(text) <= LINE_LIMIT:
            pieces = [(text_start, text_start + len(text))]
        else:
            pieces = []
            pos = 0
            for m in _SENT_END.finditer(text):
                pieces.append((text_start + pos, text_start + m.start()))
                pos = m.end()
            pieces.append((text_start + pos, text_start + len(text)))
        for s, e in pieces:
            chunk = body[s:e]
            stripped = chunk.strip()
            if not stripped:
                continue
            s += len(chunk) - len(chunk.lstrip())
            e = s + len(stripped)
            if not (min_chars <= len(stripped) <= max_chars):
                continue
            tools = tuple(dict.fromkeys(a or b for a, b in _TOOL.findall(stripped)))
            out.append(
                Passage(
                    article_id=article_id,
                    start=s,
                    end=e,
                    text=body[s:e],
                    heading=heading,
                    position=len(out),
                    is_step=is_step,
                    tools=tools,
                    is_rule=bool(_RULE.search(stripped)),
                )
            )
    return out


def _case_text(case: Case) -> str:
    parts = [case.contact_reason, " ".join(case.contact_reason_path), *case.case_notes]
    parts += [m.content for m in case.case_messages if m.role.lower() not in ("agent", "assistant", "system")]
    return "\n".join(p for p in parts if p)


def _clip(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0]


def case_queries(case: Case, analyzer: Analyzer, *, max_queries: int = 5) -> list[str]:
    """3–5 search queries for ``case`` (fewer when the case is thin, never more than ``max_queries``):
    the whole case text (clipped to ``WHOLE_CASE_CHARS``), the contact reason, the reason path, the
    named entities and tool names, then the note / customer-message sentences that add the most terms
    not yet covered; near-duplicates (term-set Jaccard > 0.8) are dropped."""
    cands: list[str] = []
    whole = _clip(_case_text(case), WHOLE_CASE_CHARS)
    if whole:
        cands.append(whole)
    reason = _clip(case.contact_reason)
    if reason:
        cands.append(reason)
    if case.contact_reason_path:
        cands.append(_clip(" ".join(case.contact_reason_path), 200))
    text = _case_text(case)
    entities: list[str] = []
    for m in _ENTITY.finditer(text):
        words = [w for w in m.group(0).split() if not (len(w) > 1 and w.isupper())]  # drop SHOUTED words
        phrase = " ".join(words)
        if len(words) > 1 and len(phrase) > 3 and phrase.lower() not in (e.lower() for e in entities):
            entities.append(phrase)
    entities += [a or b for a, b in _TOOL.findall(text)]
    if entities:
        cands.append(_clip(" ".join(dict.fromkeys(entities)), 200))
    covered = {t for q in cands[1 if whole else 0 :] for t in analyzer.terms(q)}  # the whole case covers all
    sentences: list[str] = []
    sources = list(case.case_notes) + [
        m.content for m in case.case_messages if m.role.lower() not in ("agent", "assistant", "system")
    ]
    for src in sources:
        sentences += [s.strip() for s in _SENTENCE.findall(src) if len(s.strip()) >= 20]
    while len(cands) < 5 and sentences:
        best, gain = None, 0
        for s in sentences:
            new = len(set(analyzer.terms(s)) - covered)
            if new > gain:
                best, gain = s, new
        if best is None or gain < 2:
            break
        cands.append(_clip(best, 240))
        covered |= set(analyzer.terms(best))
        sentences.remove(best)
    out: list[str] = []
    seen: list[set[str]] = []
    for q in cands:
        terms = set(analyzer.terms(q))
        if not terms:
            continue
        if any(len(terms & s) / len(terms | s) > 0.8 for s in seen):
            continue
        seen.append(terms)
        out.append(q)
    return out[:max_queries]


def _display(text: str) -> str:
    """A passage as a guidance line: bold markers dropped, a table row's cells joined with dashes."""
    flat = " ".join(_MARKUP.sub("", text).split())
    if flat.startswith("|"):
        flat = " \u2014 ".join(c.strip() for c in flat.strip("|").split("|") if c.strip())
    return flat.rstrip(":")


class ExtractiveHarness:
    """Deterministic retrieve → read → select → save; no model. See the module docstring.

    ``max_fetch`` caps the articles read (and the fetch budget caps it further); ``target_snippets``
    is how many snippets it aims for (capped by the skill's ``max_snippets``); ``per_article`` caps
    snippets from one article; ``cover_articles`` first takes the best passage of every article read
    that shares terms with the case, then fills up by score.
    """

    name = "extractive"

    def __init__(
        self,
        *,
        max_fetch: int = 8,
        target_snippets: int = 12,
        per_article: int = 5,
        cover_articles: bool = True,
        stopwords: str | None = "en",
        stemmer: str | None = "english",
    ) -> None:
        self.max_fetch = max_fetch
        self.target_snippets = target_snippets
        self.per_article = per_article
        self.cover_articles = cover_articles
        self.analyzer = Analyzer(stopwords, stemmer)

    def run(self, session: Session, case: Case, skill: Skill, out_path=None) -> SavedOutput:
        """Run one case through ``session``; returns the accepted output. Raises ``EmptyInputError``
        when retrieval finds nothing to quote, ``ContractViolation`` if the save is rejected,
        ``BudgetExceeded`` when a budget runs out."""
        case = session.load_case(case.case_id)
        cfg = skill.config
        queries = case_queries(case, self.analyzer, max_queries=min(5, session.budgets.max_queries))
        if not queries:
            raise EmptyInputError(
                f"case {case.case_id!r}: nothing to search for (empty contact reason and notes)"
            )
        fused: dict[str, float] = defaultdict(float)
        titles: dict[str, str] = {}
        for q in queries:
            for rank, hit in enumerate(session.retrieve(q), 1):
                fused[hit["article_id"]] += 1.0 / (RRF_K + rank)
                titles.setdefault(hit["article_id"], hit.get("title") or hit["article_id"])
        ranked = sorted(fused, key=lambda a: (-fused[a], a))
        n_fetch = min(self.max_fetch, session.budgets.max_fetches, len(ranked))
        articles: list[tuple[str, str, str]] = []  # (id, title, body)
        for aid in ranked[:n_fetch]:
            try:
                view = session.get_article(aid)
            except ArticleNotFound:
                continue
            articles.append((view.id, view.title, view.text))
        passages: list[Passage] = []
        for aid, _title, body in articles:
            passages += split_passages(
                aid, body, min_chars=cfg.min_snippet_chars, max_chars=min(cfg.max_snippet_chars, 1200)
            )
        if not passages:
            raise EmptyInputError(f"case {case.case_id!r}: the retrieved articles hold no quotable passage")
        chosen, qset = self._select(case, passages, [a for a, _, _ in articles], fused, cfg.max_snippets)
        title_of = {aid: title for aid, title, _ in articles}
        output = self._compose(case, chosen, title_of, [a for a, _, _ in articles], qset)
        return session.save(output, out_path)

    def _select(
        self,
        case: Case,
        passages: list[Passage],
        order: list[str],
        fused: dict[str, float],
        max_snippets: int,
    ) -> tuple[list[Passage], set[str]]:
        corpus = [self.analyzer.terms(p.heading + " " + p.text) for p in passages]
        query = self.analyzer.terms(_case_text(case))
        scores = np.zeros(len(passages))
        if query and any(corpus):
            bm25 = bm25s.BM25()
            bm25.index([c or ["\u2205"] for c in corpus], show_progress=False)
            scores = np.asarray(bm25.get_scores(query), dtype=float)
        top = float(scores.max()) if len(scores) and scores.max() > 0 else 1.0
        rel = scores / top
        best_fused = max(fused.values()) if fused else 1.0
        rank_of = {a: i for i, a in enumerate(order)}
        qset = set(query)
        art_rel: dict[str, float] = defaultdict(float)
        for i, p in enumerate(passages):
            art_rel[p.article_id] = max(art_rel[p.article_id], float(rel[i]))

        def article_weight(aid: str) -> float:
            return 0.5 * art_rel[aid] + 0.5 * fused.get(aid, 0.0) / best_fused

        def structure(p: Passage) -> float:
            return 0.3 * p.is_step + 0.2 * bool(p.tools) + 0.1 * p.is_rule

        def eligible(i: int) -> bool:
            # shares terms with the case, or is a step / rule / tool line of an article that clearly does
            p = passages[i]
            return rel[i] > 0 or (structure(p) > 0 and art_rel[p.article_id] >= 0.5)

        def score(i: int) -> float:
            p = passages[i]
            w = article_weight(p.article_id)
            return float(rel[i]) + w * structure(p) + 0.2 * w

        cands = [i for i in range(len(passages)) if eligible(i)]
        ranked = sorted(cands, key=lambda i: (-score(i), rank_of[passages[i].article_id], i))
        if not ranked:  # nothing shares a term with the case: fall back to the top article's first passages
            ranked = [i for i, p in enumerate(passages) if p.article_id == order[0]] or list(
                range(len(passages))
            )
        floor = 0.25 * score(ranked[0])
        limit = min(self.target_snippets, max_snippets)
        per_article: dict[str, int] = defaultdict(int)
        seen: set[str] = set()
        picked: list[int] = []

        def take(i: int) -> bool:
            p = passages[i]
            key = " ".join(p.text.split()).lower()
            if key in seen or per_article[p.article_id] >= self.per_article or len(picked) >= limit:
                return False
            seen.add(key)
            per_article[p.article_id] += 1
            picked.append(i)
            return True

        # first the best passage of each article the case clearly touches, so that every relevant
        # article read is cited; then the rest by score
        if self.cover_articles:
            best_of: dict[str, int] = {}
            for i in ranked:
                best_of.setdefault(passages[i].article_id, i)
            for aid in order:
                i = best_of.get(aid)
                if i is not None and score(i) >= floor and rel[i] > 0:
                    take(i)
        for i in ranked:
            if len(picked) >= limit or (picked and score(i) < floor):
                break
            take(i)
        chosen = [passages[i] for i in picked]
        chosen.sort(key=lambda p: (rank_of[p.article_id], p.position))
        return chosen, qset

    def _why(self, n: int, p: Passage, title: str, qset: set[str]) -> str:
        bits = []
        if p.is_step:
            bits.append("a numbered procedure step")
        if p.tools:
            bits.append("names " + ", ".join(p.tools[:3]))
        if p.is_rule:
            bits.append("states a condition or rule")
        shared: list[str] = []
        for word in _WORD.findall(p.text):
            terms = self.analyzer.terms(word)
            if terms and terms[0] in qset and word.lower() not in shared:
                shared.append(word.lower())
        shared = shared[:5]
        if shared:
            bits.append("shares case terms (" + ", ".join(shared) + ")")
        what = "; ".join(bits) or "closest passage in the article"
        return f"Backs step {n} ({title}): {what}."

    def _compose(
        self,
        case: Case,
        chosen: list[Passage],
        title_of: dict[str, str],
        consulted: list[str],
        qset: set[str],
    ) -> dict:
        lines = [f"Guidance for: {_clip(case.contact_reason, 200)}", ""]
        snippets = []
        for n, p in enumerate(chosen, 1):
            title = title_of.get(p.article_id, p.article_id)
            where = f"{title} \u203a {p.heading}" if p.heading else title
            lines.append(f"{n}. {_display(p.text)} [{where}]")
            snippets.append(
                {
                    "source_article": p.article_id,
                    "source_title": title,
                    "text": p.text,
                    "why": self._why(n, p, title, qset),
                }
            )
        lines += ["", _CLOSING]
        cited = list(dict.fromkeys(p.article_id for p in chosen))
        return {
            "case_id": case.case_id,
            "guidance": "\n".join(lines),
            "snippets": snippets,
            "n_snippets": len(snippets),
            "articles_consulted": list(dict.fromkeys(consulted + cited)),
            "meta": {"harness": self.name, "deterministic": True},
        }
