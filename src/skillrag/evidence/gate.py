"""The hard gate (state CANDIDATE_SUBJECT_DISCOVERED): keep only candidates that name the query's
subject — not a look-alike — and are explicitly bound to its parent entity in the source text.

A proposal (from either reasoner) is accepted only when code can verify it:

1. its article was among those searched (the pool);
2. ``name_quote`` is verbatim in the article's title or body (``skill.contract.locate``) and holds
   the subject's name *standing alone* — ``Business Gold Rewards Card`` is a look-alike of
   ``Gold Rewards Card``, never a match;
3. when the question names a parent entity, ``parent_quote`` is verbatim in the same article and
   names it, and the two quotes are bound: in one sentence (``sentence``), in one section
   (``section``; a body without headings is one section), or the name is the article's subject
   (in its title) and the parent is in its body (``article``);
4. when the question names a role (``founder``), the role word appears in one of the quotes.

Everything refused is kept, with its reason, in ``rejected_candidates``.

Once a candidate has its own verified binding, ``extend_to_mentions`` admits the other articles
that name exactly that subject and no other organisation, with an ``inherited`` binding that
cites the verified quote (the seed's rule: retrieval is restricted to the documents that reference
the candidate subjects). ``EvidenceSettings.inherit_binding=False`` turns this off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillrag.corpus.model import Article
from skillrag.evidence.model import Binding, Candidate, Quote, RejectedCandidate, SubjectClass
from skillrag.evidence.steps import CandidateProposal
from skillrag.evidence.text import (
    FUNCTION_WORDS,
    find_mentions,
    innermost_section,
    norm_name,
    slug,
    split_units,
)
from skillrag.skill.contract import locate

__all__ = ["check_candidates", "extend_to_mentions", "other_entities"]


def _locate_in(art: Article, text: str) -> Quote | None:
    for field, src in (("body", art.body), ("title", art.title)):
        where = locate(text, src)
        if where is not None:
            start, end = where
            sec = innermost_section(art.sections, start) if field == "body" else None
            return Quote(
                article_id=art.id,
                field=field,
                start=start,
                end=end,
                text=src[start:end],
                section=sec.heading if sec else None,
            )
    return None


def _one(subject: SubjectClass, prop: CandidateProposal, art: Article) -> tuple[Candidate | None, str]:
    name_q = _locate_in(art, prop.name_quote)
    if name_q is None:
        return None, "name quote is not verbatim in the article"
    src = art.title if name_q.field == "title" else art.body
    mentions = [
        m
        for m in find_mentions(subject.name, src, allowed_prefix=subject.parent_entity)
        if name_q.start <= m.start and m.end <= name_q.end
    ]
    if not mentions:
        return None, f"name quote does not name {subject.name!r}"
    clean = [m for m in mentions if not m.extended_by]
    if not clean:
        return None, f"look-alike: {mentions[0].full_name!r} is not {subject.name!r}"
    mention = clean[0]
    role_ok = subject.role is None
    if subject.parent_entity is None:
        binding = Binding(kind="unbound", name_quote=name_q)
        role_ok = role_ok or subject.role in norm_name(name_q.text)
    else:
        if not prop.parent_quote:
            return (
                None,
                f"no binding: nothing in the article ties {subject.name!r} to {subject.parent_entity!r}",
            )
        parent_q = _locate_in(art, prop.parent_quote)
        if parent_q is None:
            return None, "parent-entity quote is not verbatim in the article"
        psrc = art.title if parent_q.field == "title" else art.body
        pm = [
            m
            for m in find_mentions(subject.parent_entity, psrc)
            if parent_q.start <= m.start and m.end <= parent_q.end and not m.extended_by
        ]
        if not pm:
            return None, f"parent-entity quote does not name {subject.parent_entity!r}"
        kind = _binding_kind(art, name_q, parent_q)
        if kind is None:
            return None, (
                f"no binding: {subject.name!r} and {subject.parent_entity!r} are not in one "
                "sentence or section, and the article's title does not name the subject"
            )
        binding = Binding(kind=kind, name_quote=name_q, parent_quote=parent_q)
        role_ok = (
            role_ok or subject.role in norm_name(name_q.text) or subject.role in norm_name(parent_q.text)
        )
    if not role_ok:
        return None, f"role {subject.role!r} is not stated with the subject"
    full = mention.full_name if mention.qualifier else subject.name
    cand = Candidate(
        subject_id=slug(full),
        name=full,
        article_ids=[art.id],
        bindings=[binding],
        class_attributes={"type": subject.type, **({"role": subject.role} if subject.role else {})},
    )
    return cand, ""


def _binding_kind(art: Article, name_q: Quote, parent_q: Quote) -> str | None:
    if name_q.field == "body" and parent_q.field == "body":
        overlap = name_q.start < parent_q.end and parent_q.start < name_q.end
        unit = next((u for u in split_units(art.body) if u.start <= name_q.start < u.end), None)
        if overlap or (unit and unit.start <= parent_q.start and parent_q.end <= unit.end):
            return "sentence"
        a = innermost_section(art.sections, name_q.start)
        b = innermost_section(art.sections, parent_q.start)
        if a == b:
            return "section"
    if name_q.field == "title" and parent_q.field == "body":
        return "article"
    if parent_q.field == "title" and name_q.field == "title":
        return "sentence"
    return None


def check_candidates(
    subject: SubjectClass, proposals: Sequence[CandidateProposal], pool: Sequence[Article]
) -> tuple[list[Candidate], list[RejectedCandidate]]:
    """Validate ``proposals`` against the articles in ``pool``; returns ``(candidates, rejected)``.

    Accepted proposals with the same name are merged into one ``Candidate`` (one binding per
    article, first one kept). Never raises for a bad proposal: it is rejected with a reason.
    """
    by_id = {a.id: a for a in pool}
    merged: dict[str, Candidate] = {}
    rejected: list[RejectedCandidate] = []
    for prop in proposals:
        art = by_id.get(prop.article_id)
        if art is None:
            rejected.append(
                RejectedCandidate(
                    name=prop.name,
                    article_id=prop.article_id,
                    reason="article was not among the searched articles",
                )
            )
            continue
        cand, reason = _one(subject, prop, art)
        if cand is None:
            rejected.append(RejectedCandidate(name=prop.name, article_id=art.id, reason=reason))
            continue
        have = merged.get(cand.subject_id)
        if have is None:
            merged[cand.subject_id] = cand
        elif art.id not in have.article_ids:
            have.article_ids.append(art.id)
            have.bindings.extend(cand.bindings)
    return list(merged.values()), rejected


_ENTITY = re.compile(
    r"\b([A-Z][\w&'’]*)[ \t\-\u2010\u2011]+(Bank|Inc|Corp|Corporation|Ltd|LLC|PLC|Company|Credit Union)\b"
)
_NOT_A_NAME = FUNCTION_WORDS | {
    "between",
    "contact",
    "other",
    "every",
    "standard",
    "linked",
    "notify",
    "find",
    "retrieving",
}


def other_entities(text: str, parent: str) -> list[str]:
    """Organisation names in ``text`` (a capitalised word before Bank, Inc, Corp, Ltd, LLC, PLC,
    Company or Credit Union) that are not ``parent``."""
    want = norm_name(parent)
    out = []
    for m in _ENTITY.finditer(text):
        if norm_name(m.group(1)) in _NOT_A_NAME:
            continue
        name = f"{m.group(1)} {m.group(2)}"
        if norm_name(name) != want and not want.endswith(norm_name(name)):
            out.append(name)
    return out


def extend_to_mentions(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    rejected: Sequence[RejectedCandidate],
    pool: Sequence[Article],
) -> tuple[list[Candidate], list[RejectedCandidate]]:
    """Carry a candidate's verified parent binding to the other articles that name the *same*
    subject: the exact name (same qualifier, no look-alike extension). Nothing is inherited when any
    article naming the subject also names another organisation (``Zenith Bank``'s Gold Card next to
    ``Acme Bank``'s): then the name is not unique to the parent and every article needs its own
    binding. Joined articles get an ``inherited`` binding whose ``parent_quote`` is the verified
    quote from the candidate's own bound article; their "no binding" rejections are withdrawn."""
    if subject.parent_entity is None or not candidates:
        return list(candidates), list(rejected)
    added: set[str] = set()
    for cand in candidates:
        own = next((b for b in cand.bindings if b.parent_quote is not None), None)
        if own is None:
            continue
        key = norm_name(cand.name)
        hits = {}
        for art in pool:
            hit = None
            for field, src in (("title", art.title), ("body", art.body)):
                for m in find_mentions(subject.name, src, allowed_prefix=subject.parent_entity):
                    if not m.extended_by and norm_name(m.full_name if m.qualifier else subject.name) == key:
                        hit = (field, m)
                        break
                if hit:
                    break
            if hit is not None:
                hits[art.id] = (art, hit)
        if any(other_entities(a.title + "\n" + a.body, subject.parent_entity) for a, _ in hits.values()):
            continue  # the name is also used beside another organisation: no inheritance at all
        for aid, (art, (field, m)) in hits.items():
            if aid in cand.article_ids:
                continue
            if field == "title":
                quote = Quote(article_id=art.id, field="title", start=0, end=len(art.title), text=art.title)
            else:
                unit = next((u for u in split_units(art.body) if u.start <= m.start < u.end), None)
                a, b = (unit.start, unit.end) if unit else (m.start, m.end)
                sec = innermost_section(art.sections, a)
                quote = Quote(
                    article_id=art.id,
                    field="body",
                    start=a,
                    end=b,
                    text=art.body[a:b],
                    section=sec.heading if sec else None,
                )
            cand.article_ids.append(art.id)
            cand.bindings.append(Binding(kind="inherited", name_quote=quote, parent_quote=own.parent_quote))
            added.add(art.id)
    keep = [r for r in rejected if not (r.article_id in added and r.reason.startswith("no binding"))]
    return list(candidates), keep
