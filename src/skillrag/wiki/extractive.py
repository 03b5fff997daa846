"""The extractive builder: a deterministic navigation layer taken from the articles themselves (no model).

Grouping (merged entities): articles whose ids share a stem once the trailing number is removed
(``doc_credit_cards_gold_rewards_card_003`` -> ``doc_credit_cards_gold_rewards_card``) form one group;
a group larger than ``max_group`` is split greedily by title-word overlap (Jaccard) into sub-pages.
Intent comes from each article's overview/summary/purpose/scope section (else its first sentence);
*does not solve* from the sources' own negative statements; each procedure step is a sentence or list
item of an article section, linked to that article with a type read from the section heading
(a tool name in the sentence makes it a ``tool`` link). Same articles, same layer, byte for byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from skillrag.corpus import Article
from skillrag.wiki.page import Link, LinkType, Page, SourceRef, Step, slugify
from skillrag.wiki.variants import apply_variant

__all__ = ["build_extractive", "classify_link", "extractive_page", "group_articles", "group_key"]

_NUM_TAIL = re.compile(r"[_\-.]?\d+$")
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "internal", "is", "it", "of", "on", "or", "the", "to", "what", "when", "with", "your", "you", "this", "that", "can", "our", "we", "may", "not"]
)
_INTENT_HEADS = ("overview", "summary", "purpose", "scope", "about", "introduction", "what is", "snapshot")
_NEGATIVE = re.compile(
    r"\b(does not|do not|doesn't|don't|cannot|can't|not eligible|not available|not covered|not supported|"
    r"is not|are not|never|only for|excluded)\b",
    re.IGNORECASE,
)
_TOOL = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+_\d{3,}\b")
#: Heading keywords -> link type, first match wins.
_HEADING_TYPES: tuple[tuple[LinkType, tuple[str, ...]], ...] = (
    (LinkType.escalation, ("escalat", "contact", "dispute", "complaint", "support code", "transfer to")),
    (LinkType.troubleshooting, ("troubleshoot", "common reason", "problem", "issue", "error", "resolve", "declin")),
    (LinkType.eligibility, ("eligib", "qualif", "requirement", "prerequisite", "who can", "before you", "availab")),
    (LinkType.fee, ("fee", "charge", "cost", "apr", "apy", "interest", "rate", "price", "rebate", "reward")),
    (LinkType.limit, ("limit", "cap", "threshold", "timeline", "timing", "processing time", "cadence", "minimum")),
    (LinkType.procedure, ("procedure", "how to", "steps", "process", "opening", "closing", "apply", "setup",
                          "set up", "request", "submit", "using", "how it works", "what to do")),
    (LinkType.policy, ("policy", "rule", "term", "important", "note", "restriction", "compliance", "must")),
    (LinkType.definition, ("overview", "what is", "about", "definition", "summary", "snapshot", "purpose",
                           "key specification", "feature", "benefit")),
)
_MAX_STEP_CHARS = 240
_STEPS_PER_SECTION = 2
_STEPS_PER_ARTICLE = 8


def group_key(article_id: str) -> str:
    """The id with its trailing number removed: the product / topic the article belongs to."""
    key = _NUM_TAIL.sub("", article_id)
    return key or article_id


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]


def clean_title(title: str) -> str:
    return re.sub(r"^\s*internal\s*:\s*", "", title, flags=re.IGNORECASE).strip() or title.strip()


def _humanize_key(key: str) -> str:
    words = [w for w in re.split(r"[_\s]+", re.sub(r"^doc_", "", key)) if w]
    changed = True
    while changed:  # collapse repeated runs: bank accounts bank accounts (general) -> bank accounts (general)
        changed = False
        for n in range(len(words) // 2, 0, -1):
            for i in range(len(words) - 2 * n + 1):
                if words[i : i + n] == words[i + n : i + 2 * n]:
                    del words[i + n : i + 2 * n]
                    changed = True
                    break
            if changed:
                break
    return " ".join(w if w.startswith("(") else w.capitalize() for w in words) or key


def group_articles(articles: Iterable[Article], *, max_group: int = 5, merge: bool = True) -> list[list[Article]]:
    """Articles grouped into pages (each group sorted by id; groups in id order).

    ``merge=False`` gives one group per article (the ``no-merge`` variant).
    """
    arts = sorted(articles, key=lambda a: a.id)
    if not merge:
        return [[a] for a in arts]
    by_key: dict[str, list[Article]] = {}
    for a in arts:
        by_key.setdefault(group_key(a.id), []).append(a)
    groups: list[list[Article]] = []
    for key in sorted(by_key):
        members = by_key[key]
        if len(members) <= max_group:
            groups.append(members)
            continue
        # split into m = ceil(n / max_group) balanced parts; each article joins the part whose title
        # words overlap its own most (Jaccard), an empty part scoring a small constant so that an
        # article unlike every started part starts a new one
        m = -(-len(members) // max_group)
        room = -(-len(members) // m)
        key_words = set(_words(key))
        clusters: list[tuple[list[Article], Counter[str]]] = [([], Counter()) for _ in range(m)]
        for a in members:
            toks = set(_words(clean_title(a.title))) - key_words
            best, best_score = 0, -1.0
            for i, (mem, cnt) in enumerate(clusters):
                if len(mem) >= room:
                    continue
                common = set(cnt)
                score = len(toks & common) / max(1, len(toks | common)) if mem else 0.05
                if score > best_score:
                    best, best_score = i, score
            clusters[best][0].append(a)
            clusters[best][1].update(toks)
        groups.extend(mem for mem, _ in clusters)
    return groups


def _units(text: str) -> list[str]:
    """Sentences and list items of a block of Markdown, markup removed."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "|", "```", "---")):
            continue
        line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        line = re.sub(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", line).strip()
        if not line:
            continue
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line) if s.strip())
    return out


def _cut(text: str, n: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " …"


def classify_link(heading: str, sentence: str = "") -> LinkType:
    """The link type of a sentence from a section with this heading: a tool name in the sentence wins,
    then keywords of the heading, then keywords of the sentence, else ``reference``."""
    if _TOOL.search(sentence):
        return LinkType.tool
    for text in (heading.lower(), sentence.lower()):
        for kind, keys in _HEADING_TYPES:
            if any(k in text for k in keys):
                return kind
    return LinkType.reference


def _article_parts(art: Article) -> list[tuple[str, str]]:
    """``(heading, text)`` of the article's leaf sections (the text before the first heading too)."""
    secs = sorted(art.sections, key=lambda s: s.start)
    if not secs:
        return [(art.title, art.body)]
    parts: list[tuple[str, str]] = []
    if secs[0].start > 0 and art.body[: secs[0].start].strip():
        parts.append((art.title, art.body[: secs[0].start]))
    for i, s in enumerate(secs):
        end = secs[i + 1].start if i + 1 < len(secs) else len(art.body)
        end = min(end, s.end) if s.end > s.start else end
        parts.append((s.heading, art.body[s.start : end]))
    return parts


def _is_statement(unit: str) -> bool:
    """A full sentence rather than a lead-in (``"Follow these steps:"``) or a label (``"Fee: $0"``)."""
    return len(unit.split()) >= 6 and not unit.rstrip().endswith(":")


def _intent_sentence(art: Article) -> str:
    """The first full sentence of an overview/summary/purpose/scope section, else of the article."""
    pools = [_units(text) for head, text in _article_parts(art) if any(k in head.lower() for k in _INTENT_HEADS)]
    pools.append(_units(art.body))
    for units in pools:
        for u in units:
            if _is_statement(u):
                return u
    return clean_title(art.title)


def extractive_page(group: list[Article], page_id: str, title: str, *, variant: str = "full") -> Page:
    """One page over ``group`` (see the module docstring for how each field is taken)."""
    intents = []
    for art in group:
        s = _intent_sentence(art)
        if s not in intents:
            intents.append(s)
    intent = _cut(" ".join(intents[:3]), 400)
    solves = tuple(dict.fromkeys(clean_title(a.title) for a in group))
    negatives: list[str] = []
    steps: list[Step] = []
    for art in group:
        n_art = 0
        for head, text in _article_parts(art):
            units = _units(text)
            for u in units:
                if len(negatives) < 3 and _NEGATIVE.search(u) and len(u) <= 220 and u not in negatives:
                    negatives.append(u)
            for u in ([u for u in units if not u.endswith(":")] or units)[:_STEPS_PER_SECTION]:
                if n_art >= _STEPS_PER_ARTICLE:
                    break
                label = clean_title(head)
                text_ = _cut(f"{label}: {u}" if label.lower() not in u.lower() else u, _MAX_STEP_CHARS)
                steps.append(Step(text=text_, links=(Link(type=classify_link(head, u), article_id=art.id),)))
                n_art += 1
        if n_art == 0:  # an article with no prose still gets one linked step
            steps.append(Step(text=clean_title(art.title), links=(Link(type=LinkType.reference, article_id=art.id),)))
    page = Page(
        id=page_id,
        title=title,
        intent=intent,
        solves=solves,
        does_not_solve=tuple(_cut(n, 220) for n in negatives),
        steps=tuple(steps),
        sources=tuple(SourceRef(id=a.id, title=clean_title(a.title)) for a in group),
        variant=variant,
        builder="extractive",
        built_from={a.id: a.content_hash for a in group},
    )
    return apply_variant(page, variant, {a.id: a for a in group})


def _titles(groups: list[list[Article]], merge: bool) -> list[str]:
    out = []
    keys = Counter(group_key(h[0].id) for h in groups if len(h) > 1)
    for g in groups:
        if len(g) == 1:
            out.append(clean_title(g[0].title))
            continue
        base = _humanize_key(group_key(g[0].id))
        siblings = keys[group_key(g[0].id)]
        if siblings <= 1 or not merge:
            out.append(base)
            continue
        key_words = set(_words(group_key(g[0].id)))
        cnt = Counter(w for a in g for w in set(_words(clean_title(a.title))) - key_words)
        top = [w for w, _ in sorted(cnt.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
        out.append(f"{base}: {', '.join(top)}" if top else base)
    return out


def assign_page_ids(titles: list[str], groups: list[list[Article]], taken: set[str] | None = None) -> list[str]:
    """A unique page id per group: the slug of its title (single articles: of the article id)."""
    used = set(taken or ())
    ids = []
    for title, g in zip(titles, groups, strict=True):
        base = slugify(re.sub(r"^doc_", "", g[0].id) if len(g) == 1 else title)
        pid, n = base, 2
        while pid in used:
            pid, n = f"{base}-{n}", n + 1
        used.add(pid)
        ids.append(pid)
    return ids


def build_extractive(
    articles: Iterable[Article],
    *,
    variant: str = "full",
    max_group: int = 5,
    on_page: Callable[[Page], None] | None = None,
) -> list[Page]:
    """The whole extractive layer for ``articles`` (pages sorted by id)."""
    merge = variant != "no-merge"
    groups = group_articles(articles, max_group=max_group, merge=merge)
    titles = _titles(groups, merge)
    ids = assign_page_ids(titles, groups)
    pages = []
    for pid, title, g in zip(ids, titles, groups, strict=True):
        page = extractive_page(g, pid, title, variant=variant)
        pages.append(page)
        if on_page:
            on_page(page)
    return sorted(pages, key=lambda p: p.id)
