"""States EVIDENCE_RETRIEVAL → EVIDENCE_VERIFIED: turn proposed spans into evidence units that code
has checked, and find the claims and conflicts they carry.

A proposed span becomes an ``EvidenceUnit`` only if (in this order, first failure wins):

1. it cites an article of an accepted candidate (retrieval is restricted to candidates);
2. it is verbatim in that article's body (``skill.contract.locate``; offsets are into the raw body);
3. it is at least ``min_chars`` long (the evidence contract's shortest snippet);
4. the subject the proposer names for it is one of the candidates (no subject drift), and that
   candidate holds the article; when several candidates share the name (one per organisation, the
   question naming none), the article's owner is the candidate, and if it belongs to several, the
   span must name the organisation (``Harbor Bank's Gold Card``) or it is dropped as ambiguous;
5. (a question that asks an attribute) nothing else is its subject: the span names no look-alike
   (``Business Gold Rewards Card``), no other product of the kind (``Silver Rewards Card``), no
   sibling product even without its head noun (``Saver Plus``, when the scope names a ``Saver
   Plus Account``: ``sibling_names``), no issuer other than the candidate's (``the Gold Rewards
   Card from Brightwater Bank`` is not Harbor Bank's) and no other organisation unless it names the
   candidate's too; a span that names no subject (nor does its table's header) takes its subject
   from its headings, innermost first: the first heading that names the subject or something else
   decides;
6. its subject is established: the article's title names the candidate (the article is about
   it), the span itself or its table's header names it, or (an attribute question) the article's
   body names the candidate and nothing else of its kind — a span from an article about many
   products that does not name the candidate cannot be attributed to it; for an existence question
   (no attribute asked) the span must name the subject itself and no other subject of its kind;
7. it does not name a year when the question asks about a different one (time scope).

Everything else is kept in ``dropped_evidence`` with its reason.

Claims: each unit's values (``text.find_values``: money, percentages, durations, data amounts,
URLs, dates; a zero in words, ``no annual fee`` / ``Annual fee: none``: ``text.zero_value``),
attached to an attribute — the label before a colon (``Late payment fee: $32.50``; all values
after it; a label that is the question's attribute plus the subject's own name or a unit, ``Acme
Bank Gold Card annual fee:``, counts as the attribute; with no typed value and an attribute that
names no kind, the text after it), for a table row its table's header (the attribute names a
column: the row's cell in it; the attribute names the row: the first cell with a wanted value, in
the subject's column when the header names one), or, for a sentence that (with a heading that is a
label of the attribute) holds every word of the question's attribute, that attribute (the first
value of each kind after the attribute's words, or a range such as ``$17,500 to $112,500``).
``answering_claims`` are those that give a value of the asked attribute, of a kind it asks for
(``text.value_kinds``); ``value_spans`` finds, in code, every span of the candidates' articles
that has one. A conflict is one (subject, attribute, kind of value) with more than one distinct
value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from skillrag.corpus.model import Article
from skillrag.evidence.mentions import (
    FUNCTION_WORDS,
    find_mentions,
    innermost_section,
    named_subjects,
    norm_name,
    other_entities,
    same_org,
    section_path,
    stem_terms,
)
from skillrag.evidence.model import Candidate, Claim, Conflict, DroppedEvidence, EvidenceUnit, SubjectClass
from skillrag.evidence.question import ENTITY_SUFFIXES, is_topic
from skillrag.evidence.steps import ClaimProposal, EvidenceProposal
from skillrag.skill.contract import locate, normalize
from skillrag.text import TableRow, Value, find_values, kind_of, stem, table_rows, value_kinds, zero_value
from skillrag.text import units as text_units

__all__ = [
    "FOUND_BY_CODE",
    "answering_claims",
    "check_claim_proposals",
    "check_evidence",
    "claims_from_units",
    "find_conflicts",
    "sibling_names",
    "value_spans",
]

#: The ``why`` of an evidence unit that code found (``value_spans``), not the reasoner.
FOUND_BY_CODE = "found by code"

_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")


def _strip_owner(key: str, parent: str | None, *, any_owner: bool = False) -> str:
    """``brightwater bank gold card`` → ``gold card`` when the leading organisation is ``parent``
    (whichever it is with ``any_owner``)."""
    words = key.split()
    for i, w in enumerate(words[:-1]):
        if w in ENTITY_SUFFIXES:
            if any_owner or (parent and same_org(" ".join(words[: i + 1]), parent)):
                return " ".join(words[i + 1 :])
            break
    if parent and key.startswith(norm_name(parent) + " "):
        return key[len(norm_name(parent)) + 1 :]
    return key


def _head(subject: SubjectClass) -> str | None:
    """The head noun of a product's name (``Card``), None for a topic or a plain common noun."""
    words = re.sub(r"\([^()]*\)", "", subject.name).split()
    if not words or is_topic(subject.name):
        return None
    if words[-1][:1].islower() and not any(w[:1].isupper() for w in words):
        return None  # a plain common noun ("mortgage", "founder"): no product names to confuse
    return words[-1]


def _other_subjects(
    text: str, subject: SubjectClass, names: Sequence[str], parent: str | None = None
) -> list[str]:
    """Names of other subjects of the subject's kind in ``text`` (``Silver Rewards Card`` beside
    ``Gold Rewards Card``): capitalised names ending in the same head noun."""
    head = _head(subject)
    if head is None:
        return []
    bare = re.sub(r"\([^()]*\)", "", subject.name)
    ok = {norm_name(re.sub(r"\([^()]*\)", "", n)) for n in names} | {norm_name(bare)}
    parent = parent or subject.parent_entity
    others = []
    for found in named_subjects(text, head):
        key = _strip_owner(norm_name(found), parent)
        if key in ok or len(key.split()) < 2 or all(w in FUNCTION_WORDS for w in key.split()[:-1]):
            continue
        others.append(found)
    return others


def sibling_names(
    subject: SubjectClass, names: Sequence[str], parent: str | None, articles: Sequence[Article]
) -> list[str]:
    """Other products of the subject's kind that ``articles`` name (``Saver Plus Account``), as
    they write them without the head noun when two words or more are left (``Saver Plus``): a
    span or heading naming one is about that product, even without its head noun. A short form
    inside the subject's own name is left out."""
    head = _head(subject)
    if head is None:
        return []
    out: dict[str, str] = {}
    own = norm_name(re.sub(r"\([^()]*\)", "", subject.name))
    attr = stem_terms(subject.attribute)
    for art in articles:
        for text in (art.title, art.body):
            if head.lower() not in text.lower():
                continue
            for found in _other_subjects(text, subject, names, parent):
                key = _strip_owner(norm_name(found), parent, any_owner=True)
                if key == own:
                    continue  # the same product of another organisation: not a sibling
                short = " ".join(found.split()[-len(key.split()) : -1])
                key = norm_name(short)
                if len(key.split()) >= 2 and key not in own and not stem_terms(short) <= attr:
                    out.setdefault(key, short)
    return list(out.values())


def _mismatch(
    text: str,
    subject: SubjectClass,
    names: Sequence[str],
    parent: str | None,
    siblings: Sequence[str],
) -> str | None:
    """What else ``text`` (a span or a heading) is about, or None: a look-alike of the subject, a
    sibling product (with or without its head noun), or another organisation when it does not also
    name ``parent``."""
    own = [m for n in names for m in find_mentions(n, text, allowed_prefix=parent)]
    look = [m.full_name for m in own if m.extended_by]
    if look:
        return look[0]
    others = _other_subjects(text, subject, names, parent)
    if others:
        return others[0]
    spans = [(m.start, m.end) for m in own]
    for short in siblings:
        for m in find_mentions(short, text):
            # written as a proper name ("Saver Plus"), not the same words in a sentence ("no annual fee")
            proper = all(w[:1].isupper() for w in re.split(r"[\s\-\u2010\u2011]+", m.text) if w)
            if proper and not any(a < m.end and m.start < b for a, b in spans):
                return short
    if parent and not any(not m.extended_by for m in find_mentions(parent, text)):
        orgs = other_entities(text, parent)
        if orgs:
            return orgs[0]
    return None


def _names(text: str, names: Sequence[str], parent: str | None) -> bool:
    return any(not m.extended_by for n in names for m in find_mentions(n, text, allowed_prefix=parent))


def _row_at(art: Article, start: int, end: int) -> TableRow | None:
    """The table row of ``art`` that holds ``art.body[start:end]``, if the span is in one."""
    return next((r for r in table_rows(art.body) if r.start <= start and end <= r.end), None)


def _about(art: Article, text: str, names: Sequence[str], parent: str | None) -> bool:
    """True when the span's subject is established: the article's title names one of ``names``
    (the article is about it) or the span itself does."""
    for n in names:
        if any(not m.extended_by for m in find_mentions(n, art.title, allowed_prefix=parent)):
            return True
        if any(not m.extended_by for m in find_mentions(n, text, allowed_prefix=parent)):
            return True
    return False


def _sole_subject(
    art: Article, subject: SubjectClass, names: Sequence[str], parent: str | None, siblings: Sequence[str]
) -> bool:
    """True when ``art``'s body names the subject and nothing else of its kind (no look-alike, no
    other product, no sibling, no other organisation): a span of it that names no subject is
    about the subject even when the title does not name it."""
    return _names(art.body, names, parent) and _mismatch(art.body, subject, names, parent, siblings) is None


def _candidate_for(
    said: str, article_id: str, text: str, candidates: Sequence[Candidate], subject: SubjectClass
) -> tuple[Candidate | None, str]:
    """The candidate a span is about: the one the proposer names (by label or name) that holds the
    article; among several same-named holders, the one whose organisation the span names."""
    key = norm_name(said)
    named = [c for c in candidates if norm_name(c.label) == key] or [
        c for c in candidates if norm_name(c.name) == key
    ]
    if not named and norm_name(subject.name) == key and len({c.name for c in candidates}) == 1:
        named = list(candidates)
    if not named:
        return None, f"subject drift: the span is about {said!r}, the question about {subject.name!r}"
    holders = [c for c in named if article_id in c.article_ids]
    if not holders:
        owners = ", ".join(repr(c.label) for c in candidates if article_id in c.article_ids)
        return None, f"subject drift: the span is said to be about {said!r}, but its article is {owners}'s"
    if len(holders) == 1:
        return holders[0], ""
    issuers = [m.issuer for c in holders for m in find_mentions(c.name, text) if m.issuer]
    picked = [c for c in holders if any(same_org(i, c.parent_entity) for i in issuers)]
    if len(picked) == 1:
        return picked[0], ""
    return None, (
        f"subject ambiguous: the span does not say which of {', '.join(repr(c.label) for c in holders)} it is about"
    )


def _context_mismatch(
    art: Article,
    start: int,
    text: str,
    subject: SubjectClass,
    names: Sequence[str],
    parent: str | None,
    siblings: Sequence[str],
    in_header: bool,
) -> str | None:
    """Why a span is about something other than the subject, or None. The span itself first: a
    look-alike, a sibling product or another organisation in it. A span that does not name the
    subject (nor does its table's header) takes its subject from its headings, the innermost
    first: the first that names the subject or something else decides (else the title does,
    ``_about``)."""
    other = _mismatch(text, subject, names, parent, siblings)
    if other:
        return f"the span names {other!r}"
    if _names(text, names, parent) or in_header:
        return None
    for sec in section_path(art.sections, start):
        if _names(sec.heading, names, parent):
            return None
        other = _mismatch(sec.heading, subject, names, parent, siblings)
        if other:
            return f"the span is under the heading {sec.heading!r}, about {other!r}"
    return None


def check_evidence(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    proposals: Sequence[EvidenceProposal],
    articles: Sequence[Article],
    *,
    min_chars: int = 15,
    max_units: int = 15,
    siblings: Sequence[str] | None = None,
) -> tuple[list[EvidenceUnit], list[DroppedEvidence]]:
    """Verify ``proposals`` (module doc); returns ``(units, dropped)``, at most ``max_units`` units,
    duplicates (same article, same normalised text) merged. ``siblings``: the short names of the
    subject's sibling products (``sibling_names``; None: those ``articles`` name)."""
    by_id = {a.id: a for a in articles}
    allowed = {aid for c in candidates for aid in c.article_ids}
    all_names = list(dict.fromkeys(c.name for c in candidates))
    units: list[EvidenceUnit] = []
    dropped: list[DroppedEvidence] = []
    seen: set[tuple[str, str]] = set()

    def drop(p: EvidenceProposal, reason: str) -> None:
        dropped.append(DroppedEvidence(article_id=p.article_id, text=p.text, reason=reason))

    for p in proposals:
        art = by_id.get(p.article_id)
        if p.article_id not in allowed or art is None:
            drop(p, "cites an article outside the candidate subjects' articles")
            continue
        where = locate(p.text, art.body)
        if where is None:
            drop(p, "not a verbatim substring of the article body")
            continue
        start, end = where
        text = art.body[start:end]
        if len(normalize(text)) < min_chars:
            drop(p, f"shorter than the evidence contract's {min_chars} characters")
            continue
        cand, why = _candidate_for(p.subject, art.id, text, candidates, subject)
        if cand is None:
            drop(p, why)
            continue
        label = cand.label
        parent = cand.parent_entity or subject.parent_entity
        names = [cand.name]
        row = _row_at(art, start, end)
        in_header = row is not None and any(_names(h, names, parent) for h in row.header)
        if subject.attribute is not None:
            if siblings is None:
                siblings = sibling_names(subject, all_names, subject.parent_entity, articles)
            mismatch = _context_mismatch(art, start, text, subject, names, parent, siblings, in_header)
            if mismatch:
                drop(p, f"subject mismatch: {mismatch}, not {label!r}")
                continue
        established = _about(art, text, names, parent) or in_header
        if not established and subject.attribute is not None:
            established = _sole_subject(art, subject, names, parent, siblings or [])
        if not established:
            drop(
                p,
                f"subject not established: the span does not name {label!r} and the article's "
                "title is not about it",
            )
            continue
        if subject.attribute is None:
            # an existence question: the span must name the subject itself; other names beside it
            # (a list of the bank's cards) do not change what it says about the subject
            look = [
                m.full_name for n in names for m in find_mentions(n, text, allowed_prefix=parent) if m.extended_by
            ]
            others = look + _other_subjects(text, subject, names, parent)
            others = [] if _names(text, names, parent) else others or [f"no mention of {label}"]
            if others:
                drop(p, f"subject mismatch: the span names {others[0]!r}, not {label!r}")
                continue
        if subject.scope.time:
            years = set(_YEAR.findall(text))
            if years and subject.scope.time not in years:
                drop(
                    p,
                    f"scope mismatch: the span is about {', '.join(sorted(years))}, "
                    f"the question about {subject.scope.time}",
                )
                continue
        key = (art.id, normalize(text))
        if key in seen:
            continue
        seen.add(key)
        if len(units) >= max_units:
            drop(p, f"over the limit of {max_units} evidence units")
            continue
        sec = innermost_section(art.sections, start)
        units.append(
            EvidenceUnit(
                article_id=art.id,
                title=art.title,
                section=sec.heading if sec else None,
                start=start,
                end=end,
                text=text,
                subject=label,
                why=p.why,
            )
        )
    return units, dropped


_LABEL = re.compile(r"^\s*(?:\*\*)?([^:\n|*]{2,80}?)(?:\*\*)?\s*:(?:\*\*)?\s")
_CELL_LABEL = re.compile(r"^\|\s*([^|\n]{2,80}?)\s*\|")
_RANGE_JOIN = re.compile(r"\s*(?:to|through|-|–|—|and)\s*$")
_WORD = re.compile(r"[A-Za-z0-9]+")
#: Most characters between the attribute's words and the value they govern in a sentence.
NEAR_CHARS = 60
_CLAUSE = re.compile(r"[,;:()\[\]]")
#: Words (as stems) that may stand between an attribute and its value in a sentence.
_LINK_WORDS = frozenset(
    stem(w)
    for w in [
        "is",
        "are",
        "was",
        "were",
        "be",
        "will",
        "of",
        "at",
        "to",
        "a",
        "an",
        "the",
        "for",
        "on",
        "per",
        "costs",
        "cost",
        "charged",
        "set",
        "equal",
        "equals",
        "just",
        "only",
        "currently",
        "now",
        "totals",
        "total",
        "fixed",
        "flat",
        "amount",
        "amounts",
        "up",
        "typically",
        "usually",
        "generally",
        "range",
        "from",
        "between",
        "within",
    ]
)


def _phrase_span(text: str, attr: set[str]) -> tuple[int, int] | None:
    """The first short run of words (at most ``len(attr) + 2``) holding every attribute word."""
    toks = [(m.start(), m.end(), stem(m.group())) for m in _WORD.finditer(text)]
    for i in range(len(toks)):
        if toks[i][2] not in attr:
            continue
        seen: set[str] = set()
        for j in range(i, min(len(toks), i + len(attr) + 2)):
            if toks[j][2] in attr:
                seen.add(toks[j][2])
            if seen == attr:
                return toks[i][0], toks[j][1]
    return None


def _with_range(text: str, same: Sequence[Value], first: Value) -> list[Value]:
    nxt = next((v for v in same if v.start > first.start), None)
    if nxt and _RANGE_JOIN.match(text[first.start + len(first.text) : nxt.start]):
        return [first, nxt]
    return [first]


def _values_near(text: str, span: tuple[int, int], link: AbstractSet[str]) -> list[Value]:
    """Per kind, the value right after the attribute phrase (``late fee of $35``), else right
    before it (``a $2.50 monthly fee``): within ``NEAR_CHARS``, and only linking words
    (``is``, ``of``, the subject's own name …) in between; with its range partner."""
    values = find_values(text)

    def same_clause(a: int, b: int) -> bool:
        if not 0 <= b - a <= NEAR_CHARS or _CLAUSE.search(text, a, b):
            return False
        return all(stem(w) in link for w in _WORD.findall(text[a:b]))

    out: list[Value] = []
    for kind in dict.fromkeys(v.kind for v in values):
        same = [v for v in values if v.kind == kind]
        after = [v for v in same if same_clause(span[1], v.start)]
        before = [v for v in same if same_clause(v.start + len(v.text), span[0])]
        if after:
            out += _with_range(text, same, after[0])
        elif before:
            out.append(before[-1])
    return out


#: Words (as stems) a table header or label may add to the attribute and still name it (``Annual fee (USD)``).
_UNIT_WORDS = frozenset(stem(w) for w in ["usd", "eur", "gbp", "amount", "value", "gb", "mb", "percent", "pct", "apr",
                                           "apy"])


def _label_of(label: str, subject: SubjectClass, attr: set[str], own: set[str]) -> str:
    """The claim's attribute: the label as written, or the question's attribute when the label is
    that attribute plus the subject's own name or a unit (``Acme Bank Gold Card annual fee``)."""
    label = label.strip().strip("*").strip()
    said = stem_terms(label)
    if attr and attr <= said and not (said - attr - own - _UNIT_WORDS):
        return (subject.attribute or label).lower()
    return label.lower()


def _wanted(values: Sequence[Value], kinds: frozenset[str] | None) -> list[Value]:
    return [v for v in values if kinds is None or v.kind in kinds]


def _cell_values(text: str, kinds: frozenset[str] | None) -> list[Value]:
    values = find_values(text)
    if not _wanted(values, kinds):
        zero = zero_value(text, 0, 0, kinds)  # a cell reading "None" or "Free"
        values += [zero] if zero else []
    return values


def _row_claims(
    subject: SubjectClass, u: EvidenceUnit, row: TableRow, attr: set[str], own: set[str]
) -> list[tuple[str, list[Value]]]:
    """(attribute, values) a table row states. The attribute names a column (``| Card | Annual
    fee |``): the row's cell in that column. Else it names the row (``| Annual fee | $95 |``): the
    first cell, from the left, holding a value of a wanted kind, in the subject's column when the
    header names it, and in no column when the header names other subjects only."""
    cells, header = row.cells, row.header
    if not cells:
        return []
    kinds = value_kinds(subject.attribute)
    if not attr:
        return [(cells[0].text.lower(), [v for c in cells[1:] for v in find_values(c.text)])]
    by_column = [
        (_label_of(h, subject, attr, own), _cell_values(cells[j].text, kinds))
        for j, h in enumerate(header)
        if 0 < j < len(cells) and attr <= stem_terms(h)
    ]
    if by_column:
        return by_column
    if not attr <= stem_terms(cells[0].text):
        return []
    names = [subject.name, re.sub(r"\s*\([^()]*\)$", "", u.subject)]
    parent = subject.parent_entity
    cols = [j for j in range(1, len(cells)) if j < len(header) and _names(header[j], names, parent)]
    if not cols and not any(_other_subjects(h, subject, names, parent) for h in header[1:]):
        cols = list(range(1, len(cells)))
    for j in cols:
        values = _cell_values(cells[j].text, kinds)
        if _wanted(values, kinds):
            return [(_label_of(cells[0].text, subject, attr, own), values)]
    return []


def _text_claims(
    subject: SubjectClass, u: EvidenceUnit, attr: set[str], own: set[str]
) -> list[tuple[str, list[Value]]]:
    """(attribute, values) a sentence or list item states: the values after a label (``Late fee:
    $25.00``), else the values next to the attribute's words (module doc)."""
    kinds = value_kinds(subject.attribute)
    lab = _LABEL.match(u.text) or _CELL_LABEL.match(u.text)
    if lab:
        values = find_values(u.text[lab.end() :])
        if attr and attr <= stem_terms(lab.group(1)) and not _wanted(values, kinds):
            zero = zero_value(u.text, lab.start(1), lab.end(), kinds)
            rest = u.text[lab.end() :].strip()
            if zero:
                values.append(zero)
            elif kinds is None and rest and stem_terms(rest) - attr:
                values.append(Value("text", rest, "text:" + normalize(rest).lower(), lab.end()))
        return [(_label_of(lab.group(1), subject, attr, own), values)]
    heading = stem_terms(u.section)
    words = stem_terms(u.text)
    if not attr or not attr <= words | heading:
        return []
    span = _phrase_span(u.text, attr)
    label = None
    # a heading that is a label (its words are the attribute's, the subject's own or a unit's:
    # "## Late fee", not "## Troubleshooting an unexpected late fee") gives the missing words
    is_label = not (heading - attr - own - _UNIT_WORDS)
    if span is None and attr & words and is_label:
        # the heading holds the rest of the attribute ("## Late fee" over "The fee is $35.")
        span, label = _phrase_span(u.text, attr & words), (subject.attribute or "").lower()
    if span is None:
        # the heading holds the whole attribute ("## Annual fee" over "Costs $95."): the span's
        # one value of a kind the attribute asks for, when the attribute names its kinds
        values = _wanted(find_values(u.text), kinds) if kinds and is_label else []
        return [((subject.attribute or "").lower(), values)] if len(values) == 1 else []
    label = label or u.text[span[0] : span[1]].lower()  # "monthly paper statement fee", as written
    link = _LINK_WORDS | stem_terms(subject.name) | stem_terms(subject.parent_entity)
    values = _values_near(u.text, span, link)
    if not _wanted(values, kinds):
        zero = zero_value(u.text, span[0], span[1], kinds)
        values += [zero] if zero else []
    return [(label, values)]


def claims_from_units(
    subject: SubjectClass,
    units: Sequence[EvidenceUnit],
    articles: Mapping[str, Article] | Sequence[Article] | None = None,
) -> list[Claim]:
    """Deterministic claims of ``units`` (module doc). Several values of one kind after one label
    (a range, a list) form one claim whose value joins them. With ``articles`` (by id, or a list),
    a unit that is a table row is read with its table's header (``_row_claims``)."""
    by_id = articles if isinstance(articles, Mapping) else {a.id: a for a in articles or ()}
    attr = stem_terms(subject.attribute)
    own = stem_terms(subject.name) | stem_terms(subject.parent_entity) | {stem(w) for w in ENTITY_SUFFIXES}
    out: list[Claim] = []
    for i, u in enumerate(units):
        own_u = own | stem_terms(u.subject)
        art = by_id.get(u.article_id)
        row = _row_at(art, u.start, u.end) if art is not None else None
        found = _row_claims(subject, u, row, attr, own_u) if row else _text_claims(subject, u, attr, own_u)
        for label, values in found:
            by_kind: dict[str, list[Value]] = {}
            for v in values:
                by_kind.setdefault(v.kind, []).append(v)
            for vs in by_kind.values():
                out.append(
                    Claim(
                        subject=u.subject,
                        attribute=label,
                        value=" – ".join(v.text for v in vs),
                        normalized="|".join(dict.fromkeys(v.normalized for v in vs)),
                        evidence_index=i,
                        article_id=u.article_id,
                    )
                )
    return out


def answering_claims(
    subject: SubjectClass, claims: Sequence[Claim], units: Sequence[EvidenceUnit]
) -> list[Claim]:
    """The claims that give a value of the asked attribute: their attribute (with their unit's
    section heading) holds every word of the question's attribute, and their value is of a kind the
    attribute asks for (``text.value_kinds``: a fee is money or a percentage, not a duration). Empty
    when the question asks no attribute."""
    attr = stem_terms(subject.attribute)
    if not attr:
        return []
    kinds = value_kinds(subject.attribute)
    return [
        c
        for c in claims
        if attr <= stem_terms(c.attribute) | stem_terms(units[c.evidence_index].section)
        and (kinds is None or _kind(c) in kinds)
    ]


def value_spans(
    subject: SubjectClass, candidates: Sequence[Candidate], articles: Sequence[Article]
) -> list[EvidenceProposal]:
    """Every span of the candidates' ``articles`` that gives a value of the asked attribute
    (``answering_claims`` of the span alone): each sentence, list item and table row. Found by
    code, whatever a reasoner proposed, and proposed for the candidate holding the article (by its
    shared name when several do, so that ``check_evidence`` asks the span which one it is about).
    They still pass ``check_evidence``. Empty when the question asks no attribute."""
    if not subject.attribute:
        return []
    out: list[EvidenceProposal] = []
    for art in articles:
        holders = [c for c in candidates if art.id in c.article_ids]
        if not holders:
            continue
        said = holders[0].label if len(holders) == 1 else holders[0].name
        for sp in text_units(art.body):
            sec = innermost_section(art.sections, sp.start)
            unit = EvidenceUnit(
                article_id=art.id,
                title=art.title,
                section=sec.heading if sec else None,
                start=sp.start,
                end=sp.end,
                text=sp.text,
                subject=said,
            )
            if answering_claims(subject, claims_from_units(subject, [unit], {art.id: art}), [unit]):
                out.append(
                    EvidenceProposal(
                        article_id=art.id,
                        text=sp.text,
                        subject=said,
                        why=f"{FOUND_BY_CODE}: states a value of the {subject.attribute}",
                    )
                )
    return out


def check_claim_proposals(
    proposals: Sequence[ClaimProposal], units: Sequence[EvidenceUnit]
) -> tuple[list[Claim], list[str]]:
    """Claims a model stated, kept only when the value occurs in the cited unit; returns
    ``(claims, reasons for the refused ones)``."""
    claims: list[Claim] = []
    refused: list[str] = []
    for p in proposals:
        if p.evidence_index >= len(units):
            refused.append(f"claim cites evidence[{p.evidence_index}], which does not exist")
            continue
        u = units[p.evidence_index]
        if not p.value.strip() or locate(p.value, u.text) is None:
            refused.append(f"claim value {p.value!r} is not in evidence[{p.evidence_index}]")
            continue
        vals = find_values(p.value)
        norm = "|".join(dict.fromkeys(v.normalized for v in vals)) or "text:" + normalize(p.value).lower()
        claims.append(
            Claim(
                subject=u.subject,
                attribute=p.attribute.strip().lower(),
                value=p.value,
                normalized=norm,
                evidence_index=p.evidence_index,
                article_id=u.article_id,
            )
        )
    return claims, refused


def _kind(c: Claim) -> str:
    return kind_of(c.normalized)


def find_conflicts(claims: Sequence[Claim]) -> list[Conflict]:
    """Groups of claims on the same (subject, attribute, kind of value) whose values differ."""
    groups: dict[tuple[str, str, str], list[Claim]] = {}
    for c in claims:
        key = (norm_name(c.subject), " ".join(sorted(stem_terms(c.attribute))) or c.attribute, _kind(c))
        groups.setdefault(key, []).append(c)
    out = []
    for group in groups.values():
        if len({c.normalized for c in group}) > 1:
            out.append(Conflict(subject=group[0].subject, attribute=group[0].attribute, claims=list(group)))
    return out
