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
5. its subject is established: the article's title names the candidate (the article is about
   it), or the span itself names it — a span from an article about many products that does not
   name the candidate cannot be attributed to it;
6. the span itself names no *other* subject of the same kind (``Silver Rewards Card`` in a span
   used for ``Gold Rewards Card``, or a look-alike such as ``Business Gold Rewards Card``); for an
   existence question (no attribute asked) the span must instead name the subject itself;
7. it does not name a year when the question asks about a different one (time scope).

Everything else is kept in ``dropped_evidence`` with its reason.

Claims: each unit's money amounts, percentages and durations, attached to an attribute — the
label before a colon (``Late payment fee: $32.50``; all values after it; a label that is the
question's attribute plus the subject's own name, ``Acme Bank Gold Card annual fee:``, counts as the
attribute) or, for a sentence that
(with its section heading) holds every word of the question's attribute, that attribute (the first
value of each kind after the attribute's words, or a range such as ``$17,500 to $112,500``). Claims of the question's attribute are grouped under it.
A conflict is one (subject, attribute, kind of value) with more than one distinct value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillrag.corpus.model import Article
from skillrag.evidence.model import Candidate, Claim, Conflict, DroppedEvidence, EvidenceUnit, SubjectClass
from skillrag.evidence.question import ENTITY_SUFFIXES, is_topic
from skillrag.evidence.steps import ClaimProposal, EvidenceProposal
from skillrag.evidence.text import (
    FUNCTION_WORDS,
    find_mentions,
    find_values,
    innermost_section,
    named_subjects,
    norm_name,
    same_org,
    stem_terms,
    stem_word,
)
from skillrag.skill.contract import locate, normalize

__all__ = ["check_claim_proposals", "check_evidence", "claims_from_units", "find_conflicts"]

_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")


def _strip_owner(key: str, parent: str | None) -> str:
    """``brightwater bank gold card`` → ``gold card`` when the leading organisation is ``parent``."""
    words = key.split()
    for i, w in enumerate(words[:-1]):
        if w in ENTITY_SUFFIXES:
            if parent and same_org(" ".join(words[: i + 1]), parent):
                return " ".join(words[i + 1 :])
            break
    if parent and key.startswith(norm_name(parent) + " "):
        return key[len(norm_name(parent)) + 1 :]
    return key


def _other_subjects(
    text: str, subject: SubjectClass, names: Sequence[str], parent: str | None = None
) -> list[str]:
    bare = re.sub(r"\([^()]*\)", "", subject.name)
    words = bare.split()
    if not words or is_topic(subject.name):
        return []
    head = words[-1]
    if head[:1].islower() and not any(w[:1].isupper() for w in words):
        return []  # a plain common noun ("mortgage", "founder"): no product names to confuse
    ok = {norm_name(re.sub(r"\([^()]*\)", "", n)) for n in names} | {norm_name(bare)}
    parent = parent or subject.parent_entity
    others = []
    for found in named_subjects(text, head):
        key = _strip_owner(norm_name(found), parent)
        if key in ok or len(key.split()) < 2 or all(w in FUNCTION_WORDS for w in key.split()[:-1]):
            continue
        others.append(found)
    return others


def _about(art: Article, text: str, names: Sequence[str], parent: str | None) -> bool:
    """True when the span's subject is established: the article's title names one of ``names``
    (the article is about it) or the span itself does."""
    for n in names:
        if any(not m.extended_by for m in find_mentions(n, art.title, allowed_prefix=parent)):
            return True
        if any(not m.extended_by for m in find_mentions(n, text, allowed_prefix=parent)):
            return True
    return False


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


def check_evidence(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    proposals: Sequence[EvidenceProposal],
    articles: Sequence[Article],
    *,
    min_chars: int = 15,
    max_units: int = 15,
) -> tuple[list[EvidenceUnit], list[DroppedEvidence]]:
    """Verify ``proposals`` (module doc); returns ``(units, dropped)``, at most ``max_units`` units,
    duplicates (same article, same normalised text) merged."""
    by_id = {a.id: a for a in articles}
    allowed = {aid for c in candidates for aid in c.article_ids}
    names = list(dict.fromkeys(c.name for c in candidates))
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
        if not _about(art, text, names, parent):
            drop(
                p,
                f"subject not established: the span does not name {label!r} and the article's "
                "title is not about it",
            )
            continue
        look = [
            m.full_name for n in names for m in find_mentions(n, text, allowed_prefix=parent) if m.extended_by
        ]
        others = look + _other_subjects(text, subject, names, parent)
        if subject.attribute is None:
            # an existence question: the span must name the subject itself; other names beside it
            # (a list of the bank's cards) do not change what it says about the subject
            names_it = any(
                not m.extended_by for n in names for m in find_mentions(n, text, allowed_prefix=parent)
            )
            others = [] if names_it else others or [f"no mention of {label}"]
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
#: Words that may stand between an attribute and its value in a sentence.
_LINK_WORDS = frozenset(
    [
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
    toks = [(m.start(), m.end(), stem_word(m.group())) for m in _WORD.finditer(text)]
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


def _with_range(text: str, same: list, first) -> list:
    nxt = next((v for v in same if v.start > first.start), None)
    if nxt and _RANGE_JOIN.match(text[first.start + len(first.text) : nxt.start]):
        return [first, nxt]
    return [first]


def _values_near(text: str, span: tuple[int, int], link: set[str]) -> list:
    """Per kind, the value right after the attribute phrase (``late fee of $35``), else right
    before it (``a $2.50 monthly fee``): within ``NEAR_CHARS``, and only linking words
    (``is``, ``of``, the subject's own name …) in between; with its range partner."""
    values = find_values(text)

    def same_clause(a: int, b: int) -> bool:
        if not 0 <= b - a <= NEAR_CHARS or _CLAUSE.search(text, a, b):
            return False
        return all(stem_word(w) in link for w in _WORD.findall(text[a:b]))

    out = []
    for kind in dict.fromkeys(v.kind for v in values):
        same = [v for v in values if v.kind == kind]
        after = [v for v in same if same_clause(span[1], v.start)]
        before = [v for v in same if same_clause(v.start + len(v.text), span[0])]
        if after:
            out += _with_range(text, same, after[0])
        elif before:
            out.append(before[-1])
    return out


def claims_from_units(subject: SubjectClass, units: Sequence[EvidenceUnit]) -> list[Claim]:
    """Deterministic claims of ``units`` (module doc). Several values of one kind after one label
    (a range, a list) form one claim whose value joins them."""
    attr = stem_terms(subject.attribute)
    own = stem_terms(subject.name) | stem_terms(subject.parent_entity) | set(ENTITY_SUFFIXES)
    out: list[Claim] = []
    for i, u in enumerate(units):
        own_u = own | stem_terms(u.subject)
        lab = _LABEL.match(u.text) or _CELL_LABEL.match(u.text)
        heading = stem_terms(u.section)
        if lab:
            label = lab.group(1).strip().strip("*").strip().lower()
            values = find_values(u.text[lab.end() :])
            said = stem_terms(label)
            if attr and attr <= said and not (said - attr - own_u):
                label = (subject.attribute or label).lower()  # "Acme Bank Gold Card annual fee" → "annual fee"
        elif attr and attr <= stem_terms(u.text) | heading:
            span = _phrase_span(u.text, attr)
            if span is None:
                continue
            label = u.text[span[0] : span[1]].lower()  # "monthly paper statement fee", as written
            link = _LINK_WORDS | stem_terms(subject.name) | stem_terms(subject.parent_entity)
            values = _values_near(u.text, span, link)
        else:
            continue
        by_kind: dict[str, list] = {}
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
    return c.normalized.split(":", 1)[0]


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
