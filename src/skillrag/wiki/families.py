"""Families: the products or topics of a corpus, found from the corpus itself (no model).

A *family* is the set of articles about one product or topic; its entity page lists every one of
them. Families are found in this order, each step taking only the articles the steps before left:

1. ``document``: the section-articles split from one document (``Article.parent``).
2. ``id-stem``: articles whose ids share a stem once the trailing number is removed
   (``doc_credit_cards_gold_rewards_card_003`` -> ``doc_credit_cards_gold_rewards_card``), when the
   stem is shared by at least two and at most half the articles (a stem shared by nearly all is a
   corpus prefix, not a product).
3. ``title``: "Entity: aspect" titles sharing the part before the colon (``Gold Card: Annual Fee``).
4. ``named-entity``: titles sharing a capitalised name of two words or more (``Blue Account at a
   glance``, ``Linking Blue Account with savings``).
5. ``cluster``: the rest, grouped by TF-IDF cosine similarity of title and body (threshold
   ``CLUSTER_MIN_SIMILARITY``), at most ``max_group`` articles per cluster. An article similar to
   none stays alone.

*Categories*: families whose keys share a token prefix (``business_checking_accounts`` in
``doc_business_checking_accounts_navy_blue``) are siblings; the category is the prefix where the
most families branch off. Sibling entities are what aspect pages compare. A family's readable name
comes from its members' titles (the most common capitalised span matching the key: ``Navy Blue
Account``), and its page title adds the category: ``Navy Blue Account (business checking)``.

*Facets* (``article_facets``): what tells sibling products apart in search results and filters, for
every backend: an article's ``category`` (its family's) and the ``customer_type`` that category (or,
without one, the family's name) is for: ``business`` or ``personal`` when it says so
(``CUSTOMER_WORDS``), and ``personal`` for a category whose ``business …`` twin the corpus also
has (``checking accounts`` beside ``business checking accounts``); else "" (not known: a general
family). Only the families of steps 1 and 2 have categories, so facets are computed from those steps
alone, the same ones ``find_families`` starts with.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from skillrag.corpus import Article
from skillrag.text import STOPWORDS_EN

__all__ = [
    "CLUSTER_MIN_SIMILARITY",
    "CUSTOMER_WORDS",
    "Facets",
    "Family",
    "article_facets",
    "clean_title",
    "document_title",
    "find_families",
    "group_key",
    "humanize_key",
]

#: Cosine similarity (TF-IDF of title + body) above which two leftover articles may share a cluster.
CLUSTER_MIN_SIMILARITY = 0.25

_NUM_TAIL = re.compile(r"[_\-.]?\d+$")
_KEY_SPLIT = re.compile(r"[_\-\s]+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'+\-]*|\([^)]*\)")
#: Words of titles that tell no family apart: the BM25 index's stop words and a few title words.
_STOP = STOPWORDS_EN | frozenset(
    ["from", "how", "internal", "what", "when", "your", "you", "can", "our", "we", "may", "vs", "versus", "faq"]
)
#: Words that never start a named entity on their own ("How", "Why" …) or join one as a connector.
_CONNECTORS = frozenset({"of", "and", "&", "+", "for", "the"})
_NOT_NAMES = frozenset(["how", "what", "why", "when", "where", "who", "which", "can", "do", "does", "is", "are", "your", "my", "our", "faq", "internal", "understanding", "getting", "using", "managing"])


def group_key(article_id: str) -> str:
    """The product / topic an id belongs to: a section's document id, else the id without its
    trailing number (``doc_cards_gold_003`` -> ``doc_cards_gold``)."""
    if "#" in article_id:
        return article_id.split("#", 1)[0]
    key = _NUM_TAIL.sub("", article_id)
    return key or article_id


def clean_title(title: str) -> str:
    """``title`` without an ``Internal:`` label."""
    return re.sub(r"^\s*internal\s*:\s*", "", title, flags=re.IGNORECASE).strip() or title.strip()


def document_title(article: Article) -> str:
    """The title of the document a section-article was split from (its own title for others)."""
    suffix = ": " + " > ".join(article.heading_path)
    if article.parent and article.heading_path and article.title.endswith(suffix):
        return article.title[: -len(suffix)]
    return article.title


def _key_tokens(key: str) -> list[str]:
    return [t for t in _KEY_SPLIT.split(re.sub(r"^doc_", "", key)) if t]


def humanize_key(key: str) -> str:
    """``doc_bank_accounts_bank_accounts_(general)`` -> ``Bank Accounts (general)`` (a repeated run of
    words is kept once)."""
    words = _key_tokens(key)
    changed = True
    while changed:
        changed = False
        for n in range(len(words) // 2, 0, -1):
            for i in range(len(words) - 2 * n + 1):
                if words[i : i + n] == words[i + n : i + 2 * n]:
                    del words[i + n : i + 2 * n]
                    changed = True
                    break
            if changed:
                break
    return " ".join(w if w.startswith("(") or w == "+" else w.capitalize() for w in words) or key


@dataclass
class Family:
    """One product or topic family. ``key`` is stable across rebuilds (a stem, a document id, or a
    normalised name); ``name`` is the readable entity name; ``category`` the readable category
    shared with sibling families ("" when none); ``found_by`` the step that found it."""

    key: str
    name: str
    found_by: str
    articles: list[Article] = field(default_factory=list)
    category: str = ""
    category_key: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The entity page title: ``Navy Blue Account (business checking)``."""
        return entity_title(self.name, self.category)

    def ids(self) -> list[str]:
        return [a.id for a in self.articles]


def _norm_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def entity_title(name: str, category: str) -> str:
    """``name`` plus the category in brackets when the name does not already say it. The category's
    head noun is dropped when the name ends with it and two words remain (``Navy Blue Account`` +
    ``business checking accounts`` -> ``Navy Blue Account (business checking)``)."""
    if not category:
        return name
    cat = category.split()
    words = re.findall(r"[a-z0-9]+", name.lower())
    name_words = {_singular(w) for w in words}
    if words and len(cat) >= 3 and _singular(cat[-1].lower()) == _singular(words[-1]):
        cat = cat[:-1]
    if all(_singular(w.lower()) in name_words for w in cat):
        return name
    return f"{name} ({' '.join(cat)})"


# -- step 1 and 2: documents and id stems -------------------------------------------------------------


def _by_document(arts: list[Article]) -> tuple[list[Family], list[Article]]:
    docs: dict[str, list[Article]] = defaultdict(list)
    rest = []
    for a in arts:
        (docs[a.parent] if a.parent else rest).append(a)
    fams = [Family(key=doc, name=document_title(members[0]), found_by="document",
                   articles=sorted(members, key=lambda a: (a.parent_offset, a.id)))
            for doc, members in sorted(docs.items())]
    return fams, rest


def _by_stem(arts: list[Article], total: int) -> tuple[list[Family], list[Article]]:
    stems: dict[str, list[Article]] = defaultdict(list)
    for a in arts:
        stems[group_key(a.id)].append(a)
    fams, rest = [], []
    cap = max(3, total // 2)
    for key, members in sorted(stems.items()):
        if 2 <= len(members) <= cap and key != members[0].id:
            fams.append(Family(key=key, name=humanize_key(key), found_by="id-stem", articles=members))
        else:
            rest.extend(members)
    return fams, rest


# -- step 3 and 4: titles --------------------------------------------------------------------------


def _named_families(groups: dict[str, list[Article]], names: dict[str, Counter[str]], found_by: str,
                    rest: list[Article]) -> tuple[list[Family], list[Article]]:
    """A family for each of the ``groups`` (normalised name -> articles) of two articles or more, named
    by its most frequent spelling in ``names`` (ties: the first in sort order), in key order; the
    articles of a group of one are added to ``rest``. Returns ``(families, rest)``."""
    fams = []
    for key, members in sorted(groups.items()):
        if len(members) >= 2:
            name = min(names[key].items(), key=lambda kv: (-kv[1], kv[0]))[0]
            fams.append(Family(key=key, name=name, found_by=found_by, articles=members))
        else:
            rest.extend(members)
    return fams, rest


def _title_entity(title: str) -> str | None:
    """The part of ``Entity: aspect`` before the colon (at most 6 words), else None."""
    t = clean_title(title)
    if ":" not in t:
        return None
    head = t.split(":", 1)[0].strip()
    n = len(head.split())
    return head if 1 <= n <= 6 and head.lower() not in _NOT_NAMES else None


def _by_title(arts: list[Article]) -> tuple[list[Family], list[Article]]:
    heads: dict[str, list[Article]] = defaultdict(list)
    names: dict[str, Counter[str]] = defaultdict(Counter)
    rest = []
    for a in arts:
        head = _title_entity(a.title)
        if head is None:
            rest.append(a)
            continue
        key = " ".join(_norm_words(head))
        heads[key].append(a)
        names[key][head] += 1
    return _named_families(heads, names, "title", rest)


def capitalised_names(title: str) -> list[str]:
    """Capitalised spans of two words or more in ``title`` (``"Blue Account with Gold Savings"`` ->
    ``["Blue Account", "Gold Savings"]``); a span may hold ``of``/``and``/``&``/``+`` between
    capitalised words. A span that starts the title is also given without its first word, which may
    be capitalised only because it starts a sentence (``Linking Blue Savings`` -> ``Blue Savings``)."""
    words = clean_title(title).replace(":", " : ").split()
    out: list[str] = []
    run: list[str] = []
    start = [0]

    def flush(at: int) -> None:
        while run and run[-1].lower() in _CONNECTORS:
            run.pop()
        spans = [run[:], run[1:]] if start[0] == 0 else [run[:]]  # "Linking Blue Savings": also "Blue Savings"
        for span in spans:
            caps = [w for w in span if w[:1].isupper() or w[:1].isdigit()]
            if len(caps) >= 2 and span[0].lower() not in _NOT_NAMES and span[0].lower() not in _CONNECTORS:
                out.append(" ".join(span))
        run.clear()
        start[0] = at

    for i, w in enumerate(words):
        bare = w.strip(",.;!?'\"“”")
        if bare and (bare[:1].isupper() or (bare[:1].isdigit() and run)) and bare != ":":
            if not run:
                start[0] = i
            run.append(bare)
        elif run and bare.lower() in _CONNECTORS:
            run.append(bare)
        else:
            flush(i + 1)
    flush(len(words))
    return out


def _by_named_entity(arts: list[Article]) -> tuple[list[Family], list[Article]]:
    names: dict[str, Counter[str]] = defaultdict(Counter)
    has: dict[str, list[str]] = {}
    for a in arts:
        found = list(dict.fromkeys(" ".join(_norm_words(n)) for n in capitalised_names(a.title)))
        has[a.id] = found
        for n in capitalised_names(a.title):
            names[" ".join(_norm_words(n))][n] += 1
    support = Counter(k for ks in has.values() for k in ks)
    groups: dict[str, list[Article]] = defaultdict(list)
    rest = []
    for a in arts:
        shared = [k for k in has[a.id] if support[k] >= 2]
        if not shared:
            rest.append(a)
            continue
        best = min(shared, key=lambda k: (-support[k], -len(k), k))
        groups[best].append(a)
    return _named_families(groups, names, "named-entity", rest)


# -- step 5: clustering ----------------------------------------------------------------------------


def _tfidf(texts: Sequence[str]) -> np.ndarray:
    """``(n, vocab)`` L2-normalised TF-IDF rows (log-scaled term frequency, smoothed idf)."""
    from scipy import sparse

    toks = [[w for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in _STOP and len(w) > 2] for t in texts]
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for i, ts in enumerate(toks):
        for w, c in Counter(ts).items():
            rows.append(i)
            cols.append(vocab.setdefault(w, len(vocab)))
            vals.append(1.0 + math.log(c))
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(len(texts), max(1, len(vocab))), dtype=np.float64)
    df = np.bincount(m.indices, minlength=m.shape[1])
    idf = np.log((1 + len(texts)) / (1 + df)) + 1.0
    m = m @ sparse.diags(idf)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.diags(1 / norms) @ m


def _by_cluster(arts: list[Article], max_group: int) -> list[Family]:
    """Greedy single-link clustering: the most similar pairs first, a merge only while both sides
    fit in ``max_group``; articles similar to none stay alone."""
    if not arts:
        return []
    arts = sorted(arts, key=lambda a: a.id)
    m = _tfidf([f"{a.title}\n{a.title}\n{a.body}" for a in arts])
    pairs: list[tuple[float, int, int]] = []
    for start in range(0, len(arts), 256):
        block = (m[start : start + 256] @ m.T).toarray()
        for r, row in enumerate(block):
            i = start + r
            for j in np.flatnonzero(row >= CLUSTER_MIN_SIMILARITY):
                if j > i:
                    pairs.append((-float(row[j]), i, int(j)))
    parent = list(range(len(arts)))
    size = [1] * len(arts)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, i, j in sorted(pairs):
        ri, rj = find(i), find(j)
        if ri != rj and size[ri] + size[rj] <= max_group:
            parent[rj] = ri
            size[ri] += size[rj]
    groups: dict[int, list[Article]] = defaultdict(list)
    for i, a in enumerate(arts):
        groups[find(i)].append(a)
    fams = []
    for members in sorted(groups.values(), key=lambda g: g[0].id):
        if len(members) == 1:
            a = members[0]
            fams.append(Family(key=a.id, name=clean_title(a.title), found_by="single", articles=members))
        else:
            fams.append(Family(key=members[0].id, name=_cluster_name(members), found_by="cluster", articles=members))
    return fams


def _cluster_name(members: list[Article]) -> str:
    """The title words most members share, in the order of the first title that has them, else
    the first title."""
    counts = Counter(w for a in members for w in {w.lower() for w in re.findall(r"[A-Za-z0-9]+", a.title)}
                     if w.lower() not in _STOP)
    common = {w for w, c in counts.items() if c >= max(2, math.ceil(len(members) / 2))}
    for a in members:
        words = [w for w in re.findall(r"[A-Za-z0-9]+", clean_title(a.title)) if w.lower() in common]
        if words:
            return " ".join(words[:5]).capitalize()
    return clean_title(members[0].title)


# -- categories and names ----------------------------------------------------------------------------


def _categories(fams: list[Family]) -> None:
    """Set ``category_key`` / ``category`` of stem and document families (module doc)."""
    keyed = [f for f in fams if f.found_by in ("id-stem", "document")]
    toks = {f.key: _key_tokens(f.key) for f in keyed}
    if len(keyed) < 2:
        return
    common = 0  # tokens every key shares: a corpus prefix, not a category
    first = next(iter(toks.values()))
    while common < len(first) and all(len(t) > common and t[common] == first[common] for t in toks.values()):
        common += 1
    children: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for t in toks.values():
        for n in range(common + 1, len(t)):
            children[tuple(t[:n])].add(t[n])
    for f in keyed:
        t = toks[f.key]
        best: tuple[int, int] | None = None
        for n in range(common + 1, len(t)):
            branch = len(children[tuple(t[:n])])
            if branch >= 2 and (best is None or branch > best[0]):
                best = (branch, n)
        if best is not None:
            f.category_key = tuple(t[: best[1]])
            f.category = " ".join(t[common : best[1]]).replace("_", " ")


def _tail(f: Family) -> list[str]:
    t = _key_tokens(f.key)
    n = len(f.category_key) - (1 if f.category_key and f.category_key[0] == "doc" else 0)
    return [w.lower() for w in (t[n:] if f.category_key else t)]


def _bare(word: str) -> str:
    return _singular(word.strip(":,.;").lower())


def _spans(title: str, tail: set[str], category: set[str], head: str) -> list[list[str]]:
    """Runs of title words that are words of ``tail``; a capitalised category word just before a run
    joins it (``BNPL Bronze``), and so does the category's head noun just after it unless the run
    ends at a colon (``Navy Blue Account`` for the tail ``navy blue`` in ``… accounts``)."""
    words = clean_title(title).split()
    out, i = [], 0
    while i < len(words):
        if _bare(words[i]) not in tail:
            i += 1
            continue
        span = []
        if i > 0 and words[i - 1][:1].isupper() and _bare(words[i - 1]) in category \
                and not words[i - 1].endswith(":"):
            span.append(words[i - 1].strip(":,.;"))
        colon = False
        while i < len(words) and _bare(words[i]) in tail:
            span.append(words[i].strip(":,.;"))
            colon = words[i].endswith(":")
            i += 1
            if colon:
                break
        if not colon and i < len(words) and head and _bare(words[i]) == head:
            span.append(words[i].strip(":,.;"))
            i += 1
        out.append(span)
    return out


def _capitalised(span: list[str]) -> bool:
    return all(w[:1].isupper() or w[:1].isdigit() or w.startswith("(") for w in span)


def _best_span(f: Family, tail: list[str]) -> str | None:
    """The span of the family's titles that holds every word of ``tail`` and occurs most often (a
    span also counts for the longer spans it starts); capitalised spans win over others."""
    tail_set = {_singular(w) for w in tail}
    cat_words = [w.lower() for w in f.category.split()]
    category = {_singular(w) for w in cat_words}
    head = _singular(cat_words[-1]) if cat_words else ""
    votes: Counter[str] = Counter()
    caps: dict[str, bool] = {}
    for a in f.articles:
        for span in _spans(a.title, tail_set, category, head):
            if tail_set <= {_bare(w) for w in span}:
                name = " ".join(span)
                votes[name] += 1
                caps[name] = _capitalised(span)
    if any(caps.values()):
        votes = Counter({c: v for c, v in votes.items() if caps[c]})
    if not votes:
        return None
    score = {c: sum(v for s, v in votes.items() if c == s or c.startswith(s + " ")) for c in votes}
    return min(score, key=lambda c: (-score[c], -len(c), c))


def _entity_name(f: Family) -> str:
    """For an id-stem family: the best title span holding every word of the key's tail (the words
    after the category), else the humanised tail (``Credit Card Account Logistics``). Without a
    category, the longest tail end (two words or more) a title spells out names the family and the
    words before it become its category (``Rho Bank Plus (personal subscriptions)``)."""
    tail = _tail(f)
    if not tail:
        return humanize_key(f.key)
    if f.category_key:
        return _best_span(f, tail) or humanize_key("_".join(tail))
    for n in range(len(tail), 1, -1):
        name = _best_span(f, tail[-n:])
        if name:
            if n < len(tail):
                f.category = " ".join(tail[:-n]).replace("_", " ")
            return name
    return humanize_key("_".join(tail))


def _keyed_families(arts: list[Article]) -> tuple[list[Family], list[Article]]:
    """Steps 1 and 2 (documents, id stems) over ``arts`` (sorted by id), with their categories and the
    stem families' names: ``(families, the articles left for steps 3-5)``."""
    fams, rest = _by_document(arts)
    stem_fams, rest = _by_stem(rest, len(arts))
    fams += stem_fams
    _categories(fams)
    for f in stem_fams:
        f.name = _entity_name(f)
    return fams, rest


def find_families(articles: Iterable[Article], *, max_group: int = 5) -> list[Family]:
    """The families of ``articles`` (module doc), each with its articles sorted (documents: in
    document order; others: by id), families sorted by key. Every article is in exactly one family."""
    arts = sorted(articles, key=lambda a: a.id)
    fams, rest = _keyed_families(arts)
    title_fams, rest = _by_title(rest)
    named, rest = _by_named_entity(rest)
    fams += title_fams + named + _by_cluster(rest, max_group)
    for f in fams:
        if f.found_by != "document":
            f.articles.sort(key=lambda a: a.id)
    return sorted(fams, key=lambda f: f.key)


# -- facets ------------------------------------------------------------------------------------------

#: Words of a category (or family name) that say which customers its products are for.
CUSTOMER_WORDS = {"business": "business", "commercial": "business", "corporate": "business",
                  "personal": "personal", "consumer": "personal"}
#: The customer type of a category whose twin names the other type (``checking accounts`` beside
#: ``business checking accounts`` is for personal customers).
_TWIN = {"business": "personal", "personal": "business"}


@dataclass(frozen=True)
class Facets:
    """What tells an article's product apart from its siblings: its family's ``category`` (lower case,
    ``"business checking accounts"``; "" when the family has none) and the ``customer_type`` it is for
    (``"business"`` | ``"personal"``; "" when the corpus does not say). See the module doc."""

    category: str = ""
    customer_type: str = ""


def _customer_word(text: str) -> str:
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in CUSTOMER_WORDS:
            return CUSTOMER_WORDS[w]
    return ""


def article_facets(articles: Iterable[Article]) -> dict[str, Facets]:
    """``{article id: Facets}`` for every article (module doc: *Facets*). The one rule behind the facets
    on search hits and pages and the ``categories`` / ``customer_types`` filters, on every backend;
    computed from ids, titles and parents only (steps 1 and 2 of ``find_families``)."""
    arts = sorted(articles, key=lambda a: a.id)
    fams, rest = _keyed_families(arts)
    cats = {f.category.lower() for f in fams if f.category}
    out: dict[str, Facets] = {}
    for f in fams:
        cat = f.category.lower()
        kind = _customer_word(cat) if cat else _customer_word(f.name)
        if not kind and cat:
            twins = {CUSTOMER_WORDS[w] for w in CUSTOMER_WORDS if f"{w} {cat}" in cats}
            kind = _TWIN[twins.pop()] if len(twins) == 1 else ""
        for a in f.articles:
            out[a.id] = Facets(cat, kind)
    for a in rest:
        out[a.id] = Facets("", _customer_word(a.title))
    return out
