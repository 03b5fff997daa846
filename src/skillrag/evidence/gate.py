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
"""

from __future__ import annotations

from collections.abc import Sequence

from skillrag.corpus.model import Article
from skillrag.evidence.model import Binding, Candidate, Quote, RejectedCandidate, SubjectClass
from skillrag.evidence.steps import CandidateProposal
from skillrag.evidence.text import find_mentions, innermost_section, norm_name, slug, split_units
from skillrag.skill.contract import locate

__all__ = ["check_candidates"]


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
