"""Aspects: what sibling entities have in common (a referral programme, ATM fees, eligibility).

Within each category (sibling families, ``skillrag.wiki.families``; families with no category are
siblings of each other), an aspect is a **noun phrase** that titles use once the entity's name is
removed (``Dark Green Account Referral Program`` -> "Referral Program"). ``noun_phrases`` cuts a title
(a section's own heading) into runs of words at punctuation, stop words, numbers, contractions and the
entity's and category's own words; a run must end in a word the corpus uses as a noun (``word_uses``:
"the payment is", never "to open" or "an early payment"), so a lone verb or adjective ("Open",
"Early", "Friendly") is no aspect. A phrase's key is its words, singular, less generic words
(``guide``, ``program``, ``account`` …): "Referral Program" and "referrals" share ``{referral}``;
words are not stemmed, so "Eco-Friendly" is not "Referring Friends". A key used by titles is an aspect
when the titles and headings (levels 1–3, FAQ questions) of ``min_entities`` sibling families or more
(and at least ``MIN_ENTITY_SHARE`` of them) hold it; a title or heading holds every key its own
phrase contains ("Referral bonus details" is on the referral aspect; "Stop payments" and "Bonus
payment" stay apart, both on "Payment"). Aspects whose articles are (nearly) the same are merged; an
aspect is named by its largest key's most common phrase, or by a longer phrase most of its titles use
("Cash Back" rather than "Back"). Every family's lead article (its overview) also forms the
``Overview`` aspect, so a category can be compared in one read. A category of more than
``MAX_SIBLINGS`` families gets no aspect pages.

Articles of other families whose titles name both the category (``Checking Account``) and the aspect
(``Referral``) are added too: the general rules that apply to every sibling.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from skillrag.corpus import Article
from skillrag.text import STOP_WORDS
from skillrag.text import stem as _snowball
from skillrag.wiki._statements import article_parts, key_line
from skillrag.wiki.families import Family, clean_title

__all__ = [
    "OVERVIEW",
    "Aspect",
    "AspectMember",
    "WordUses",
    "find_aspects",
    "lead_article",
    "noun_phrases",
    "stem",
    "structure_from_json",
    "structure_to_json",
    "word_uses",
]

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
#: Words of titles that name nothing: the text layer's content stop words and a few title words.
_STOP = STOP_WORDS | frozenset(["internal", "faq", "faqs", "vs", "versus", "gets", "see", "seen", "good", "many",
                                "much", "new", "two", "well"])
#: Words of titles and headings that name no aspect of a product.
_GENERIC_WORDS = frozenset(["guide", "complete", "overview", "glance", "summary", "snapshot", "introduction", "intro", "started", "getting", "get", "start", "understanding", "understand", "explained", "explain", "explanation", "how", "what", "why", "when", "where", "who", "which", "work", "works", "working", "use", "using", "used", "tip", "tips", "practical", "best", "practice", "practices", "important", "note", "notes", "detail", "details", "key", "quick", "reference", "frequently", "asked", "question", "questions", "example", "examples", "common", "general", "information", "info", "help", "helpful", "thing", "things", "need", "know", "about", "more", "other", "new", "step", "steps", "process", "procedure", "procedures", "manage", "managing", "management", "program", "programme", "option", "options", "feature", "features", "benefit", "benefits", "account", "accounts", "card", "cards", "service", "services", "product", "products", "customer", "customers", "agent", "agents", "support", "contents", "table", "do", "make", "can", "will", "expect", "next", "your", "you", "our", "one", "two", "three", "first", "part", "section", "chapter", "document", "manual", "handbook", "happen", "happens", "arrive", "arrived"])
_GENERIC = frozenset(_snowball(w) for w in _GENERIC_WORDS)
_LEAD = re.compile(r"\b(?:at a glance|complete guide|overview|getting started|summary|snapshot|introduction|"
                   r"what is|welcome)\b", re.IGNORECASE)


def stem(word: str) -> str:
    """The Snowball (English) stem of a lower-case word (``skillrag.text.stem``)."""
    return _snowball(word)


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


_TOKEN = re.compile(r"[^\W_][\w'’]*(?:-[^\W_][\w'’]*)*|[^\w\s]+")
#: Words that directly follow one of these, and are directly followed by punctuation or a function word
#: (not "and"/"or": "our friendly and knowledgeable staff"), are used as nouns there ("the payment is",
#: "a referral.", "your eligibility for").
#: ("this"/"that" are left out: "this applies when", "that applies to" are pronouns before a verb.)
_DETERMINERS = frozenset(["the", "a", "an", "your", "our", "their", "its", "each", "every", "any", "no", "my",
                          "his", "her"])
_NOUN_USE = re.compile(r"\b(?:" + "|".join(sorted(_DETERMINERS)) + r")\s+([a-z][a-z-]*[a-z])"
                       r"(?=\s*(?:[.,;:?!)\n]|$)|\s+(?:is|are|was|were|will|can|may|must|should|has|have|of|for|to|in|"
                       r"on|at|by|with|from|that|which|if|when|as|you|we|it)\b)", re.IGNORECASE)


def _singular(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


_VERB_USE = re.compile(r"\b(?:to|can|cannot|will|must|should|may|please|is|are|was|were|be|been|being)\s+"
                       r"([a-z][a-z-]*[a-z])\b", re.IGNORECASE)
_MODIFIER_USE = re.compile(r"\b(?:" + "|".join(sorted(_DETERMINERS)) + r")\s+([a-z][a-z-]*[a-z])\s+([a-z]+)\b",
                           re.IGNORECASE)


@dataclass
class WordUses:
    """How words (lower case, singular) are used in a corpus: as a noun (right after a determiner and
    right before punctuation or a function word: "the payment is", "a referral."), as a verb or
    participle (after "to", a modal or a form of "be": "to open", "is calculated") and as a modifier
    (between a determiner and another content word: "an early payment", "a negative balance")."""

    noun: Counter[str]
    verb: Counter[str]
    modifier: Counter[str]

    def noun_like(self, word: str) -> bool:
        """Used as a noun somewhere; else never used as a verb or modifier and not an ``-ly``, ``-ed`` or ``-ing``
        form (a word the corpus says nothing about, such as "program" in a small corpus, counts)."""
        w = _singular(word)
        if self.noun[w]:
            return True
        return not (self.verb[w] or self.modifier[w] or w.endswith(("ly", "ed", "ing")))


def word_uses(texts: Sequence[str]) -> WordUses:
    """``WordUses`` of ``texts`` (article bodies and titles)."""
    noun: Counter[str] = Counter()
    verb: Counter[str] = Counter()
    modifier: Counter[str] = Counter()
    for t in texts:
        noun.update(_singular(m.group(1)) for m in _NOUN_USE.finditer(t))
        verb.update(_singular(m.group(1)) for m in _VERB_USE.finditer(t))
        modifier.update(_singular(m.group(1)) for m in _MODIFIER_USE.finditer(t) if m.group(2).lower() not in _STOP)
    return WordUses(noun, verb, modifier)


def _head(word: str) -> str:
    """The part of a compound that heads it: ``early-payment`` -> ``payment``."""
    return _singular(word.split("-")[-1])


def noun_phrases(phrase: str, skip: set[str], uses: WordUses) -> list[tuple[frozenset[str], str]]:
    """The noun phrases of a title's aspect phrase or a heading, each as ``(key, surface)``.

    A phrase is a maximal run of words, cut at punctuation, stop words, words with digits or
    apostrophes (``didn't``, ``CODE 82``) and the entity's own words (``skip``: stems); its last word
    (its head, in English) must be noun-like in the corpus (``uses``, ``WordUses.noun_like``), else
    trailing words are dropped until one is: "interest calculated" gives "interest", a lone verb or
    adjective ("open", "early", "friendly", "negative") gives nothing. ``key`` is the
    phrase's words (lower case, singular; not stems, so "friendly" is not "friend") less the generic
    ones (``guide``, ``program``, ``account``), so "Referral Program" and "referrals" share the key
    ``{referral}`` while "Stop payments" and "Bonus payment" do not; a phrase whose key is empty is
    dropped."""
    runs: list[list[str]] = [[]]
    for m in _TOKEN.finditer(phrase):
        tok = m.group(0)
        parts = [w for w in re.split(r"-", tok.lower()) if w]
        content = [w for w in parts if w not in _STOP]
        breaks = (not tok[0].isalnum() or any(c.isdigit() for c in tok) or "'" in tok or "’" in tok
                  or not content or {stem(w) for w in content} <= skip)
        if breaks:
            runs.append([])
        else:
            runs[-1].append(tok)
    out: list[tuple[frozenset[str], str]] = []
    for run in runs:
        while run and not uses.noun_like(_head(run[-1])):
            run = run[:-1]
        key = frozenset(_singular(w) for tok in run for w in re.split(r"-", tok.lower())
                        if w and w not in _STOP and _singular(w) not in _GENERIC_WORDS and w not in _GENERIC_WORDS)
        if key:
            out.append((key, " ".join(run)))
    return out


def _title_phrases(a: Article, f: Family, skip: set[str], uses: WordUses) -> list[tuple[frozenset[str], str]]:
    """The noun phrases of the article's title, less the entity's name (its own heading for a section)."""
    return noun_phrases(_aspect_phrase(a, f), skip, uses)


_QUESTION = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(?:Q:[ \t]*)?([A-Z][^\n]{8,150}\?)(?:\*\*)?[ \t]*$",
                       re.MULTILINE)


def _heading_phrases(a: Article, skip: set[str], uses: WordUses) -> list[tuple[frozenset[str], str, str]]:
    """``(key, surface, heading)`` of the noun phrases of each heading inside the article (levels 1–3)
    and of each question line of an FAQ (``- Q: Does the Purple Account have a referral program?``)."""
    heads = [s.heading for s in a.sections if s.level <= 3 and not (a.parent and s.start == 0)]
    heads += [m.group(1) for m in _QUESTION.finditer(a.body)]
    return [(key, surface, h) for h in heads for key, surface in noun_phrases(h, skip, uses)]


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


def _display(surfaces: Counter[str]) -> str:
    """The most common surface of a noun phrase (shorter first on a tie), first letter capitalised."""
    p, _c = min(surfaces.items(), key=lambda pc: (-pc[1], len(pc[0]), pc[0]))
    return p[:1].upper() + p[1:]


Members = dict[str, tuple[Family, Article, str | None]]
#: A longer phrase names an aspect when this share of the titles that name the aspect use it.
NAME_SHARE = 0.6


def _longer_name(name: str, key: frozenset[str], per_article: dict[str, Counter[str]]) -> str:
    """``name``, or the longest run of up to four words holding every word of ``key`` that at least
    ``NAME_SHARE`` of the titles naming the aspect use: "Cash Back" rather than "Back", "Referral
    Program" rather than "Referral"; "Stop payments" does not name an aspect most of whose titles
    say other payments."""
    seen: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for phrases in per_article.values():
        grams: set[str] = set()
        for p in phrases:
            words = p.split()
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + 4) + 1):
                    span = words[i:j]
                    norm = " ".join(_singular(w) for w in " ".join(span).lower().split())
                    if key <= {_singular(w) for tok in span for w in tok.lower().split("-")}:
                        grams.add(norm)
                        shown.setdefault(norm, " ".join(span))
        seen.update(grams)
    fit = [g for g, n in seen.items() if n >= NAME_SHARE * len(per_article)]
    if not fit:
        return name
    g = max(fit, key=lambda g: (len(g.split()), seen[g], -len(g), g))
    return shown[g][:1].upper() + shown[g][1:]


def _merge(groups: dict[frozenset[str], Members]) -> list[tuple[frozenset[str], frozenset[str], Members]]:
    """Merge aspects whose article sets overlap by ``MERGE_OVERLAP`` or more (largest first). Returns
    ``(primary key, all stems, members)``: the primary key is the largest aspect of the merge, the one
    that names it."""
    items = sorted(groups.items(), key=lambda kv: (-len(kv[1]), sorted(kv[0])))
    merged: list[tuple[frozenset[str], frozenset[str], Members]] = []
    for terms, members in items:
        for n, (k2, t2, m2) in enumerate(merged):
            inter = len(set(members) & set(m2))
            if inter / len(set(members) | set(m2)) >= MERGE_OVERLAP:
                merged[n] = (k2, t2 | terms, {**members, **m2})
                break
        else:
            merged.append((terms, terms, dict(members)))
    return merged


def find_aspects(families: Sequence[Family], *, min_entities: int = 2) -> list[Aspect]:
    """The aspects shared by at least ``min_entities`` sibling families (module doc), sorted by
    category then name. Members are in family order, then article order."""
    by_cat: dict[tuple[str, ...], list[Family]] = defaultdict(list)
    for f in families:
        if f.found_by not in ("cluster", "single"):
            by_cat[f.category_key].append(f)
    all_arts = [(f, a, {_singular(w) for w in _words(clean_title(a.title))}) for f in families for a in f.articles]
    uses = word_uses([a.body for _f, a, _s in all_arts] + [a.title for _f, a, _s in all_arts])
    aspects: list[Aspect] = []
    for cat_key, fams in sorted(by_cat.items()):
        if len(fams) < max(2, min_entities) or len(fams) > MAX_SIBLINGS:
            continue
        category = fams[0].category if cat_key else ""
        found: dict[frozenset[str], Members] = defaultdict(dict)
        surfaces: dict[frozenset[str], Counter[str]] = defaultdict(Counter)
        skips = {f.key: _excluded(f) for f in fams}
        titled = [(f, a, key, surface) for f in fams for a in f.articles
                  for key, surface in _title_phrases(a, f, skips[f.key], uses)]
        wider: dict[frozenset[str], dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for f in fams:  # aspects are named by the noun phrases of titles (a section's own heading) ...
            for a in f.articles:
                for key, surface in _title_phrases(a, f, skips[f.key], uses):
                    surfaces[key][surface] += 1
        for f, a, key, surface in titled:  # ... a title is on every aspect its phrase holds ("Referral bonus")
            for k in surfaces:
                if k <= key:
                    found[k].setdefault(a.id, (f, a, None))
                    wider[k][a.id][surface] += 1
        for f in fams:  # ... and headings inside articles add the siblings that cover them in a section
            for a in f.articles:
                for key, _surface, heading in _heading_phrases(a, skips[f.key], uses):
                    for k in surfaces:
                        if k <= key and a.id not in found[k]:
                            found[k][a.id] = (f, a, heading)
        need = max(min_entities, math.ceil(MIN_ENTITY_SHARE * len(fams)))
        groups = {key: members for key, members in found.items()
                  if len({m[0].key for m in members.values()}) >= need}
        cat_words = {_singular(w) for w in _words(category) if w not in _STOP}
        fam_keys = {f.key for f in fams}
        named: dict[str, tuple[str, frozenset[str], Members]] = {}
        for primary, terms, members in _merge(groups):
            name = _display(surfaces[primary])
            name = _longer_name(name, primary, wider[primary])
            if name.lower() in named:  # the same best description: the same aspect
                n0, t0, m0 = named[name.lower()]
                named[name.lower()] = (n0, t0 | terms, {**m0, **members})
            else:
                named[name.lower()] = (name, terms, members)
        for name, terms, members in named.values():
            # general articles outside the category whose titles name both the category and the aspect
            if cat_words:
                for f, a, title_words in all_arts:
                    if f.key not in fam_keys and cat_words <= title_words and any(
                            key <= title_words for key in _keys_of(terms, groups)):
                        members.setdefault(a.id, (f, a, None))
            aspects.append(_aspect(name, frozenset(stem(w) for w in terms), category, cat_key, members, families))
        overview = {lead_article(f).id: (f, lead_article(f), None) for f in fams}
        aspects.append(_aspect(OVERVIEW, frozenset(), category, cat_key, overview, families))
    return sorted(aspects, key=lambda x: (x.category, x.name != OVERVIEW, x.name.lower(), x.key))


def _keys_of(terms: frozenset[str], groups: dict[frozenset[str], Members]) -> list[frozenset[str]]:
    """The noun-phrase keys an aspect was merged from (those whose stems it holds)."""
    return [k for k in groups if k <= terms]


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


def structure_to_json(families: Sequence[Family], aspects: Sequence[Aspect]) -> str:
    """Families and aspects as JSON (article ids, not bodies), for ``structure_from_json``: a build
    that runs in many processes (the agent driver's scripts) finds them once."""
    fams = [{"key": f.key, "name": f.name, "found_by": f.found_by, "ids": f.ids(), "category": f.category,
             "category_key": list(f.category_key)} for f in families]
    asps = [{"key": a.key, "name": a.name, "terms": sorted(a.terms), "category": a.category,
             "category_key": list(a.category_key),
             "members": [[m.family.key, m.article.id, m.key_line, m.heading] for m in a.members]} for a in aspects]
    return json.dumps({"families": fams, "aspects": asps})


def structure_from_json(text: str, articles: Sequence[Article]) -> tuple[list[Family], list[Aspect]] | None:
    """The families and aspects ``structure_to_json`` wrote, over ``articles``; None when an article
    they name is not among ``articles`` (the corpus changed: find them again)."""
    by_id = {a.id: a for a in articles}
    data = json.loads(text)
    try:
        fams = [Family(key=f["key"], name=f["name"], found_by=f["found_by"], articles=[by_id[i] for i in f["ids"]],
                       category=f["category"], category_key=tuple(f["category_key"])) for f in data["families"]]
        fam = {f.key: f for f in fams}
        asps = [Aspect(key=a["key"], name=a["name"], terms=frozenset(a["terms"]), category=a["category"],
                       category_key=tuple(a["category_key"]),
                       members=[AspectMember(family=fam[fk], article=by_id[aid], key_line=kl, heading=h)
                                for fk, aid, kl, h in a["members"]]) for a in data["aspects"]]
    except KeyError:
        return None
    return fams, asps
