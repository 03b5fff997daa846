"""The extractive builder: a deterministic navigation layer taken from the articles themselves (no model).

Pages (``skillrag.wiki.page`` kinds):

* one **entity** page per family (``skillrag.wiki.families``: a split document, an id stem, an
  "Entity: aspect" title, a shared name), listing **every** article of the family with a one-line
  summary, its procedures consolidated (one or two steps per article, round robin, at most
  ``max_steps`` steps: only the procedure text is capped, never the article list);
* one **aspect** page per aspect shared by sibling families (``skillrag.wiki.aspects``), one step per
  member article giving the family and the article's key line (amount, condition or tool);
* one **topic** page per clustered group or lone article.

Fields are the articles' own words: the title is the entity's readable name (``Navy Blue Account
(business checking)``); the intent is the articles' purpose statements (the lead article's first), except
on the page of a general family ("Credit Cards (general)": many topics, no one purpose), whose intent
says what its titles are most often about;
*does not solve* holds only explicit exclusions (``It does not cover billing disputes …``) and is
otherwise empty; each step links to the article it comes from with a type read from the section
heading (a tool name makes it a ``tool`` link). Same articles, same layer, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from skillrag.corpus import Article
from skillrag.text import has_figure
from skillrag.wiki._statements import (
    article_parts,
    classify_link,
    cut,
    exclusions,
    first_statement,
    has_tool,
    purpose_statements,
    summary_line,
    units,
)
from skillrag.wiki.aspects import _GENERIC, _STOP, OVERVIEW, Aspect, find_aspects, lead_article, stem
from skillrag.wiki.families import Family, clean_title, find_families, group_key, humanize_key
from skillrag.wiki.page import Link, LinkType, Page, SourceRef, Step, slugify
from skillrag.wiki.variants import apply_variant

__all__ = [
    "MAX_STEPS",
    "aspect_page",
    "aspect_page_id",
    "aspect_title",
    "build_extractive",
    "classify_link",
    "clean_title",
    "entity_page",
    "group_key",
    "humanize_key",
    "topic_page",
]

#: Procedure steps on one entity page (the article list is never capped).
MAX_STEPS = 40
_MAX_STEP_CHARS = 240
_STEPS_PER_SECTION = 2
_STEPS_PER_ARTICLE = 8
_INTENT_CHARS = 400
_PROCEDURAL = (LinkType.procedure, LinkType.eligibility, LinkType.escalation, LinkType.troubleshooting,
               LinkType.tool)


def _label(art: Article) -> str:
    """How a source is named on its own family's page: a section by its heading path."""
    return " > ".join(art.heading_path) if art.parent and art.heading_path else clean_title(art.title)


def _ref(art: Article, summary: str, *, short: bool = False) -> SourceRef:
    return SourceRef(id=art.id, title=_label(art) if short else clean_title(art.title), summary=summary)


_SELF = re.compile(r"\bthis (?:article|guide|page|section|manual|handbook|document|procedure|policy)\b", re.IGNORECASE)


def _intent(arts: Sequence[Article], lead: Article, name: str, title: str) -> str:
    """What the page is for, in the articles' words: purpose statements of the lead article, then
    those of the others that name the entity or speak of themselves ("this guide …"), two at most.
    Without any: ``title: `` and the lead article's first facts (or first sentence)."""
    found: list[str] = []
    for art in [lead, *[a for a in arts if a.id != lead.id]]:
        for s in purpose_statements(art):
            if s not in found and (art is lead or name.lower() in s.lower() or _SELF.search(s)):
                found.append(s)
        if len(found) >= 2:
            break
    if found:
        return cut(" ".join(found[:2]), _INTENT_CHARS)
    facts = [u for u in units(lead.body) if has_figure(u) and len(u.split()) >= 3][:3]
    first = first_statement(lead)
    # joined with "; ": a fact's own closing full stop would read ".;" (found by a new user)
    what = "; ".join(f.rstrip().rstrip(".;") for f in facts) + "." if facts else (first or summary_line(lead))
    return cut(f"{title}: {what}", _INTENT_CHARS)


_GENERAL = re.compile(r"\(general\)|\bgeneral\b", re.IGNORECASE)
#: Title topics named in the intent of a general family's page.
_GENERAL_TOPICS = 6


def is_general(family: Family) -> bool:
    """A family of general articles, named so ("Credit Cards (general)"): articles on many topics
    that apply across the category's products, not one product with one purpose."""
    return bool(_GENERAL.search(family.name))


def _general_intent(family: Family) -> str:
    """The intent of a general family's page: what its titles are most often about (the title words,
    or pairs of adjacent title words such as "cash back", found in the most titles, less stop words,
    generic words and the family's own name), not the purpose statement of one of its articles, which
    would describe that article alone."""
    skip = {stem(w) for w in re.findall(r"[a-z0-9]+", f"{family.name} {family.category}".lower())}
    titles: dict[str, set[str]] = {}  # topic (a word, or two adjacent words) -> ids of the titles naming it
    pos: dict[str, int] = {}  # the earliest place in a title where the topic starts
    for a in family.articles:
        words = [w for w in re.findall(r"[a-z][a-z-]*[a-z]|\S", clean_title(a.title).lower())]
        keep = [w if len(w) > 1 and w not in _STOP and stem(w) not in _GENERIC and stem(w) not in skip else ""
                for w in words]
        for i, w in enumerate(keep):
            if w:
                for t in [w] + ([f"{w} {keep[i + 1]}"] if i + 1 < len(keep) and keep[i + 1] else []):
                    titles.setdefault(t, set()).add(a.id)
                    pos[t] = min(pos.get(t, i), i)
    n = {t: len(ids) for t, ids in titles.items()}
    pairs = sorted((t for t in n if " " in t), key=lambda t: (-n[t], pos[t], t))  # "cash back dispute": "cash back"
    for pair in pairs:  # "cash back" stands for "cash" and "back" when most titles saying either say both
        first, second = pair.split()
        if n[pair] >= 2 and n[first] and n[second] and 2 * n[pair] >= min(n[first], n[second]):
            n[first] = n[second] = 0
        else:
            n[pair] = 0
    ranked = sorted((t for t in n if n[t] >= 2), key=lambda t: (-n[t], t))
    topics = ranked[:_GENERAL_TOPICS]
    where = family.category or "every product"
    about = f"; most often about {', '.join(topics)}" if topics else ""
    return cut(f"{family.title}: {len(family.articles)} general articles whose rules apply across {where}{about}.",
               _INTENT_CHARS)


def _exclusions(arts: Sequence[Article], limit: int = 3) -> tuple[str, ...]:
    out: list[str] = []
    for art in arts:
        for s in exclusions(art):
            if s not in out:
                out.append(s)
    return tuple(cut(s, 220) for s in out[:limit])


def _step_candidates(art: Article) -> list[Step]:
    """An article's procedural units first (steps, rules, escalations, tool calls), then its facts
    with an amount, then its first statement; each as a step linked to the article."""
    procedural: list[Step] = []
    facts: list[Step] = []
    for head, text in article_parts(art):
        label = clean_title(head)
        for u in [u for u in units(text) if not u.endswith(":")][:_STEPS_PER_SECTION + 1]:
            kind = classify_link(head, u)
            step = Step(text=cut(f"{label}: {u}" if label.lower() not in u.lower() else u, _MAX_STEP_CHARS),
                        links=(Link(type=kind, article_id=art.id),))
            if kind in _PROCEDURAL or has_tool(u):
                procedural.append(step)
            elif has_figure(u):
                facts.append(step)
    out = procedural + facts
    if not out:
        first = first_statement(art) or clean_title(art.title)
        out = [Step(text=cut(first, _MAX_STEP_CHARS), links=(Link(type=LinkType.reference, article_id=art.id),))]
    return out


def _round_robin(per_article: list[list[Step]], cap: int) -> tuple[Step, ...]:
    """Up to two steps per article, one per article per round, article order kept; at most ``cap``."""
    picked: list[list[Step]] = [[] for _ in per_article]
    total = 0
    for rnd in range(2):
        for i, cands in enumerate(per_article):
            if total >= cap:
                break
            if rnd < len(cands):
                picked[i].append(cands[rnd])
                total += 1
    return tuple(s for steps in picked for s in steps)


def entity_page(family: Family, page_id: str, *, variant: str = "full", max_steps: int = MAX_STEPS) -> Page:
    """The entity page of ``family``: every article listed, procedures consolidated (module doc)."""
    arts = family.articles
    short = family.found_by == "document"
    page = Page(
        id=page_id,
        title=family.title,
        kind="entity",
        intent=(_general_intent(family) if is_general(family)
                else _intent(arts, lead_article(family), family.name, family.title)),
        solves=tuple(dict.fromkeys(_label(a) for a in arts)),
        does_not_solve=_exclusions(arts),
        steps=_round_robin([_step_candidates(a) for a in arts], max_steps),
        sources=tuple(_ref(a, summary_line(a), short=short) for a in arts),
        variant=variant,
        builder="extractive",
        built_from={a.id: a.content_hash for a in arts},
    )
    return apply_variant(page, variant, {a.id: a for a in arts})


def aspect_title(aspect: Aspect) -> str:
    """``Referral Program across checking accounts``; without a category, the entities' names (up to
    three) or their number."""
    if aspect.category:
        return f"{aspect.name} across {aspect.category}"
    fams = list(dict.fromkeys(m.family.name for m in aspect.members))
    return f"{aspect.name} across {', '.join(fams) if len(fams) <= 3 else f'{len(fams)} products'}"


def aspect_page_id(aspect: Aspect) -> str:
    """A page id that stays put while the aspect's members change: its name and category."""
    return slugify(f"{aspect.name} {aspect.category}".strip())


def aspect_page(aspect: Aspect, page_id: str, *, variant: str = "full") -> Page:
    """The aspect page: for each sibling family, its article(s) on the aspect with the key line."""
    names = list(dict.fromkeys(m.family.name for m in aspect.members))
    what = "the overview article" if aspect.name == OVERVIEW else aspect.name.lower()
    intent = cut(f"Compare {what} across {aspect.category or 'products'}: {len(names)} "
                 f"{'entities' if len(names) != 1 else 'entity'} ({', '.join(names)}), one key line each.",
                 _INTENT_CHARS)
    steps = []
    for m in aspect.members:
        line = m.key_line or summary_line(m.article)
        steps.append(Step(text=cut(f"{m.family.name}: {line}", _MAX_STEP_CHARS),
                          links=(Link(type=classify_link(m.heading or m.article.title, line), article_id=m.article.id),)))
    arts = [m.article for m in aspect.members]
    page = Page(
        id=page_id,
        title=aspect_title(aspect),
        kind="aspect",
        intent=intent,
        solves=tuple(dict.fromkeys(clean_title(a.title) for a in arts)),
        steps=tuple(steps),
        sources=tuple(_ref(m.article, m.key_line or summary_line(m.article)) for m in aspect.members),
        variant=variant,
        builder="extractive",
        built_from={a.id: a.content_hash for a in arts},
    )
    return apply_variant(page, variant, {a.id: a for a in arts})


def topic_page(group: list[Article], page_id: str, title: str, *, variant: str = "full") -> Page:
    """A topic page over ``group`` (a cluster or one article): up to two steps per section and eight
    per article."""
    steps: list[Step] = []
    for art in group:
        n_art = 0
        for head, text in article_parts(art):
            us = units(text)
            for u in ([u for u in us if not u.endswith(":")] or us)[:_STEPS_PER_SECTION]:
                if n_art >= _STEPS_PER_ARTICLE:
                    break
                label = clean_title(head)
                steps.append(Step(text=cut(f"{label}: {u}" if label.lower() not in u.lower() else u, _MAX_STEP_CHARS),
                                  links=(Link(type=classify_link(head, u), article_id=art.id),)))
                n_art += 1
        if n_art == 0:
            steps.append(Step(text=clean_title(art.title), links=(Link(type=LinkType.reference, article_id=art.id),)))
    page = Page(
        id=page_id,
        title=title,
        kind="topic",
        intent=_intent(group, group[0], title, title),
        solves=tuple(dict.fromkeys(clean_title(a.title) for a in group)),
        does_not_solve=_exclusions(group),
        steps=tuple(steps),
        sources=tuple(_ref(a, summary_line(a)) for a in group),
        variant=variant,
        builder="extractive",
        built_from={a.id: a.content_hash for a in group},
    )
    return apply_variant(page, variant, {a.id: a for a in group})


def _unique(base: str, used: set[str]) -> str:
    pid, n = base, 2
    while pid in used:
        pid, n = f"{base}-{n}", n + 1
    used.add(pid)
    return pid


def build_extractive(
    articles: Iterable[Article],
    *,
    variant: str = "full",
    max_group: int = 5,
    max_steps: int = MAX_STEPS,
    on_page: Callable[[Page], None] | None = None,
) -> list[Page]:
    """The whole extractive layer for ``articles`` (pages sorted by id): entity pages, aspect pages,
    topic pages (module doc). ``no-merge`` makes one topic page per article and nothing else.
    ``max_group`` caps a cluster of otherwise unrelated articles; ``max_steps`` the procedure steps
    of an entity page."""
    arts = sorted(articles, key=lambda a: a.id)
    used: set[str] = set()
    pages: list[Page] = []
    if variant == "no-merge":
        for a in arts:
            pages.append(topic_page([a], _unique(slugify(re.sub(r"^doc_", "", a.id)), used), clean_title(a.title),
                                    variant=variant))
    else:
        families = find_families(arts, max_group=max_group)
        for f in families:
            if f.found_by in ("cluster", "single"):
                base = slugify(re.sub(r"^doc_", "", f.articles[0].id)) if len(f.articles) == 1 else slugify(f.name)
                pages.append(topic_page(f.articles, _unique(base, used), f.name, variant=variant))
            else:
                pages.append(entity_page(f, _unique(slugify(f.title), used), variant=variant, max_steps=max_steps))
        for asp in find_aspects(families):
            pages.append(aspect_page(asp, _unique(aspect_page_id(asp), used), variant=variant))
    pages.sort(key=lambda p: p.id)
    if on_page:
        for p in pages:
            on_page(p)
    return pages
