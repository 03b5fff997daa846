"""Aspects: what sibling entities have in common (a referral programme, ATM fees, eligibility).

Within each category (sibling families, ``skillrag.wiki.families``; families with no category are
siblings of each other), every article contributes the *aspect words* of its title (the words left
once the entity's name is removed: ``Dark Green Account Referral Program`` -> ``referral``) and of
its section headings (``## Business Referral Program`` in the Navy Blue guide). Words are Snowball
stems; stop words, the entity's and the category's own words and generic words (``guide``,
``overview``, ``tips`` …) are left out. A word found in the articles of ``min_entities`` sibling
families or more is an aspect; aspects whose articles are (nearly) the same are merged. Every
family's lead article (its overview) also forms the ``Overview`` aspect, so a category can be
compared in one read. A category of more than ``MAX_SIBLINGS`` families gets no aspect pages.

Articles of other families whose titles name both the category (``Checking Account``) and the aspect
(``Referral``) are added too: the general rules that apply to every sibling.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from skillrag.corpus import Article
from skillrag.wiki._text import article_parts, key_line
from skillrag.wiki.families import Family, clean_title

__all__ = ["OVERVIEW", "Aspect", "AspectMember", "find_aspects", "lead_article", "stem"]

#: The aspect every category gets: each family's lead (overview) article.
OVERVIEW = "Overview"
#: Two aspects whose article sets overlap at least this much (Jaccard) are merged into one.
MERGE_OVERLAP = 0.5
#: An aspect must be shared by at least this share of a category's families (and two of them must
#: name it in a title).
MIN_ENTITY_SHARE = 0.2
#: A category with more sibling families than this gets no aspect pages (a comparison across
#: hundreds of entities is no page an agent can read).
MAX_SIBLINGS = 100
_STEMMER = Stemmer.Stemmer("english")
_STOP = frozenset(STOPWORDS_EN) | frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "internal", "faq", "faqs", "vs", "versus", "get", "gets", "got", "see", "seen", "good", "many", "much", "also", "may", "might", "must", "new", "one", "two", "via", "per", "like", "well"])
#: Words of titles and headings that name no aspect of a product.
_GENERIC = frozenset(_STEMMER.stemWords(["guide", "complete", "overview", "glance", "summary", "snapshot", "introduction", "intro", "started", "getting", "get", "start", "understanding", "understand", "explained", "explain", "explanation", "how", "what", "why", "when", "where", "who", "which", "work", "works", "working", "use", "using", "used", "tip", "tips", "practical", "best", "practice", "practices", "important", "note", "notes", "detail", "details", "key", "quick", "reference", "frequently", "asked", "question", "questions", "example", "examples", "common", "general", "information", "info", "help", "helpful", "thing", "things", "need", "know", "about", "more", "other", "new", "step", "steps", "process", "procedure", "procedures", "manage", "managing", "management", "program", "programme", "option", "options", "feature", "features", "benefit", "benefits", "account", "accounts", "card", "cards", "service", "services", "product", "products", "customer", "customers", "agent", "agents", "support", "contents", "table", "do", "make", "can", "will", "expect", "next", "your", "you", "our", "one", "two", "three", "first", "part", "section", "chapter", "document", "manual", "handbook", "happen", "happens", "arrive", "arrived"]))
_LEAD = re.compile(r"\b(?:at a glance|complete guide|overview|getting started|summary|snapshot|introduction|"
                   r"what is|welcome)\b", re.IGNORECASE)


def stem(word: str) -> str:
    """The Snowball (English) stem of a lower-case word."""
    return _STEMMER.stemWord(word)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _words(text) if w not in _STOP and not w.isdigit() and len(w) > 1}


@dataclass
class AspectMember:
    """One article of one family for an aspect, with its key line and the heading it was found under
    (None when the title named the aspect)."""

    family: Family
    article: Article
    key_line: str
    heading: str | None = None


@dataclass
class Aspect:
    """An aspect shared by sibling families: ``name`` (``Referral Program``), the stems that define
    it, the category (readable, "" for category-less siblings) and one member per matching article."""

    key: str
    name: str
    terms: frozenset[str]
    category: str
    category_key: tuple[str, ...]
    members: list[AspectMember] = field(default_factory=list)

    def families(self) -> list[str]:
        return list(dict.fromkeys(m.family.key for m in self.members))

    def ids(self) -> list[str]:
        return [m.article.id for m in self.members]


def lead_article(f: Family) -> Article:
    """The family's overview: the first article whose title says so (``at a glance``, ``complete
    guide``, ``overview`` …), else its first article."""
    for a in f.articles:
        if _LEAD.search(a.title):
            return a
    return f.articles[0]


def _aspect_phrase(a: Article, f: Family) -> str:
    """The part of the title that is not the entity: after ``Entity:``, else the title without the
    family's name; for a section, its own heading."""
    if a.parent and a.heading_path:
        return a.heading_path[-1]
    t = clean_title(a.title)
    if ":" in t and len(t.split(":", 1)[0].split()) <= 6:
        return t.split(":", 1)[1]
    return re.sub(re.escape(f.name), " ", t, flags=re.IGNORECASE)


def _excluded(f: Family) -> set[str]:
    return _stems(f.name) | _stems(f.category) | _stems(" ".join(f.category_key)) | _stems(f.key.replace("_", " "))


def _surface(phrase: str, skip: set[str]) -> str:
    """``phrase`` without the entity's words and without stop words at either end."""
    words = [w for w in re.split(r"\s+", phrase.strip(" :-—?")) if w]
    words = [w for w in words if not (_stems(w) and _stems(w) <= skip)]
    while words and re.sub(r"\W", "", words[0].lower()) in _STOP:
        words.pop(0)
    while words and re.sub(r"\W", "", words[-1].lower()) in _STOP:
        words.pop()
    return " ".join(words)


def _title_terms(a: Article, f: Family, skip: set[str]) -> tuple[set[str], str]:
    """``(aspect stems, surface phrase)`` of the article's title (its own heading for a section)."""
    phrase = _aspect_phrase(a, f)
    return _stems(phrase) - skip - _GENERIC, _surface(phrase, skip)


_QUESTION = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(?:Q:[ \t]*)?([A-Z][^\n]{8,150}\?)(?:\*\*)?[ \t]*$",
                       re.MULTILINE)


def _heading_terms(a: Article, skip: set[str]) -> list[tuple[set[str], str]]:
    """``(aspect stems, heading)`` of each heading inside the article (levels 1–3) and of each
    question line of an FAQ (``- Q: Does the Purple Account have a referral program?``)."""
    out = []
    for s in a.sections:
        if s.level <= 3 and not (a.parent and s.start == 0):
            terms = _stems(s.heading) - skip - _GENERIC
            if terms:
                out.append((terms, s.heading))
    for m in _QUESTION.finditer(a.body):
        terms = _stems(m.group(1)) - skip - _GENERIC
        if terms:
            out.append((terms, m.group(1)))
    return out


def _section_text(a: Article, heading: str | None) -> list[str]:
    """The text an aspect was found in: the section under ``heading``, the few lines after an FAQ
    question, else the whole article."""
    if heading is None:
        return [a.body]
    found = [t for h, t in article_parts(a) if h == heading]
    if found:
        return found
    i = a.body.find(heading)
    if i >= 0:
        return [a.body[i + len(heading) : i + len(heading) + 400]]
    return [a.body]


def _name(phrases: Counter[str], terms: frozenset[str]) -> str:
    """The most common surface phrase holding every term (at most 5 words), else the term's most
    common surface word."""
    fitting = [(c, p) for p, c in phrases.items()
               if terms <= _stems(p) and len(p.split()) <= 5]
    if fitting:
        _c, p = min(fitting, key=lambda cp: (-cp[0], len(cp[1]), cp[1]))
        p = re.sub(r"\s+", " ", p).strip()
        return p[:1].upper() + p[1:]
    words = Counter(w for p in phrases for w in _words(p) if stem(w) in terms)
    return (words.most_common(1)[0][0] if words else min(terms)).capitalize()


def _names(named: dict[str, tuple[frozenset[str], dict]], phrases: dict[str, Counter[str]]) -> list[str]:
    """The display names of ``named`` (keys are lower-cased names), in key order."""
    out = []
    for key, (terms, _) in sorted(named.items()):
        surface: Counter[str] = Counter()
        for t in terms:
            surface.update(phrases[t])
        fitting = [p for p in surface if p.lower() == key]
        out.append(fitting[0][:1].upper() + fitting[0][1:] if fitting else key.capitalize())
    return out


def _merge(groups: dict[frozenset[str], dict[str, tuple[Family, Article, str | None]]]
           ) -> dict[frozenset[str], dict[str, tuple[Family, Article, str | None]]]:
    """Merge aspects whose article sets overlap by ``MERGE_OVERLAP`` or more (largest first)."""
    items = sorted(groups.items(), key=lambda kv: (-len(kv[1]), sorted(kv[0])))
    merged: list[tuple[frozenset[str], dict[str, tuple[Family, Article, str | None]]]] = []
    for terms, members in items:
        for n, (t2, m2) in enumerate(merged):
            inter = len(set(members) & set(m2))
            if inter / len(set(members) | set(m2)) >= MERGE_OVERLAP:
                merged[n] = (t2 | terms, {**members, **m2})
                break
        else:
            merged.append((terms, dict(members)))
    return dict(merged)


def find_aspects(families: Sequence[Family], *, min_entities: int = 2) -> list[Aspect]:
    """The aspects shared by at least ``min_entities`` sibling families (module doc), sorted by
    category then name. Members are in family order, then article order."""
    by_cat: dict[tuple[str, ...], list[Family]] = defaultdict(list)
    for f in families:
        if f.found_by not in ("cluster", "single"):
            by_cat[f.category_key].append(f)
    all_arts = [(f, a, _stems(clean_title(a.title))) for f in families for a in f.articles]
    aspects: list[Aspect] = []
    for cat_key, fams in sorted(by_cat.items()):
        if len(fams) < max(2, min_entities) or len(fams) > MAX_SIBLINGS:
            continue
        category = fams[0].category if cat_key else ""
        found: dict[str, dict[str, tuple[Family, Article, str | None]]] = defaultdict(dict)
        phrases: dict[str, Counter[str]] = defaultdict(Counter)
        skips = {f.key: _excluded(f) for f in fams}
        for f in fams:  # aspects are named by titles (a section's own heading) ...
            for a in f.articles:
                terms, phrase = _title_terms(a, f, skips[f.key])
                for t in terms:
                    found[t][a.id] = (f, a, None)
                    phrases[t][phrase] += 1
        for f in fams:  # ... and headings inside articles add the siblings that cover them in a section
            for a in f.articles:
                for terms, heading in _heading_terms(a, skips[f.key]):
                    for t in terms & set(found):
                        if a.id not in found[t]:
                            found[t][a.id] = (f, a, heading)
                            phrases[t][_surface(heading, skips[f.key])] += 1
        need = max(min_entities, math.ceil(MIN_ENTITY_SHARE * len(fams)))
        groups = {frozenset([t]): members for t, members in found.items()
                  if len({m[0].key for m in members.values()}) >= need
                  and any(m[2] is None for m in members.values())}
        cat_stems = _stems(category)
        fam_keys = {f.key for f in fams}
        named: dict[str, tuple[frozenset[str], dict[str, tuple[Family, Article, str | None]]]] = {}
        for terms, members in sorted(_merge(groups).items(), key=lambda kv: sorted(kv[0])):
            surface: Counter[str] = Counter()
            for t in terms:
                surface.update(phrases[t])
            name = _name(surface, terms)
            if name.lower() in named:  # the same best description: the same aspect
                t0, m0 = named[name.lower()]
                named[name.lower()] = (t0 | terms, {**m0, **members})
            else:
                named[name.lower()] = (terms, members)
        for name, (terms, members) in ((n, named[n.lower()]) for n in _names(named, phrases)):
            # general articles outside the category that name both the category and the aspect
            if cat_stems:
                for f, a, title_stems in all_arts:
                    if f.key not in fam_keys and cat_stems <= title_stems and title_stems & terms:
                        members.setdefault(a.id, (f, a, None))
            aspects.append(_aspect(name, terms, category, cat_key, members, families))
        overview = {lead_article(f).id: (f, lead_article(f), None) for f in fams}
        aspects.append(_aspect(OVERVIEW, frozenset(), category, cat_key, overview, families))
    return sorted(aspects, key=lambda x: (x.category, x.name != OVERVIEW, x.name.lower(), x.key))


def _aspect(name: str, terms: frozenset[str], category: str, cat_key: tuple[str, ...],
            members: dict[str, tuple[Family, Article, str | None]], families: Sequence[Family]) -> Aspect:
    order = {f.key: i for i, f in enumerate(families)}
    rows = sorted(members.values(), key=lambda m: (order.get(m[0].key, 0), m[1].parent_offset, m[1].id))
    key = "overview" if not terms else "-".join(sorted(terms))
    asp = Aspect(key=key, name=name, terms=terms, category=category, category_key=cat_key)
    for f, a, heading in rows:
        asp.members.append(AspectMember(family=f, article=a, heading=heading,
                                        key_line=key_line(_section_text(a, heading), set(terms), stem)))
    return asp
