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

Before the gate, ``resolve_subject`` binds the question's words to the sources' names, in code:
a name or parent entity the question writes in lower case is matched as the sources write it
(``gold rewards card`` is the proper name ``Gold Rewards Card``, not a topic matched by stems, so
``Business Gold Rewards Card`` stays a look-alike); and a parent entity written without its suffix
(``Brightwater``) is tolerated only when it names one organisation of the sources: with
``Brightwater Bank`` and ``Brightwater Credit Union`` both there it is ambiguous, and the answer is
not sufficient, with both named.

Once a candidate has its own verified binding, ``extend_to_mentions`` admits the other articles
that name exactly that subject and no other organisation, with an ``inherited`` binding that
cites the verified quote (the seed's rule: retrieval is restricted to the documents that reference
the candidate subjects). ``EvidenceSettings.inherit_binding=False`` turns this off.

``unchecked_articles`` lists the searched articles that name the subject but that no proposal
covered (the runner has code bind them too, so the candidate list is complete whatever the
reasoner proposed). When the question names no parent entity, ``split_by_parent`` binds each
candidate article to the organisation the source names with the subject (``Harbor Bank's Gold
Card``, ``Brightwater Bank Gold Card``, an organisation in the same sentence, section or title):
two organisations make two candidates (an ambiguous subject), and an article that names neither
is then rejected rather than attributed to one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skillrag.corpus.model import Article
from skillrag.evidence.mentions import (
    find_mentions,
    innermost_section,
    norm_name,
    organisations,
    other_entities,
    proper_form,
    same_org,
    slug,
)
from skillrag.evidence.model import Binding, Candidate, Quote, RejectedCandidate, SubjectClass
from skillrag.evidence.question import ENTITY_SUFFIXES, is_topic
from skillrag.evidence.steps import CandidateProposal
from skillrag.skill.contract import locate
from skillrag.text import units as text_units

__all__ = [
    "SubjectResolution",
    "check_candidates",
    "extend_to_mentions",
    "organisations",
    "other_entities",
    "resolve_subject",
    "split_by_parent",
    "unchecked_articles",
]


@dataclass(frozen=True)
class SubjectResolution:
    """The subject class bound to the sources' names (``resolve_subject``). ``name_as_written`` /
    ``parent_as_written``: the question's spelling, set when the sources' spelling replaced it;
    ``parent_matches``: the organisations of the sources that the parent entity names (more than
    one: the question is ambiguous)."""

    subject: SubjectClass
    name_as_written: str | None = None
    parent_as_written: str | None = None
    parent_matches: tuple[str, ...] = ()


def _parent_matches(parent: str, orgs: Sequence[str]) -> tuple[str, ...]:
    """The organisations of ``orgs`` that ``parent`` names: the same organisation (``same_org``),
    or, when ``parent`` has no suffix word, one whose name starts with its words (``Brightwater``
    → ``Brightwater Credit Union``)."""
    pw = norm_name(parent).split()
    out: list[str] = []
    for org in orgs:
        ow = norm_name(org).split()
        prefix = bool(pw) and pw[-1] not in ENTITY_SUFFIXES and len(ow) > len(pw) and ow[: len(pw)] == pw
        if (same_org(parent, org) or prefix) and not any(same_org(org, o) for o in out):
            out.append(org)
    return tuple(out)


def resolve_subject(subject: SubjectClass, articles: Sequence[Article]) -> SubjectResolution:
    """Bind ``subject``'s name and parent entity to the way ``articles`` write them (module doc).
    Pure code; the same for every reasoner. Never raises."""
    texts = [t for a in articles for t in (a.title, a.body)]
    update: dict[str, str] = {}
    name_was = parent_was = None
    if is_topic(subject.name):
        form = proper_form(subject.name, texts)
        if form and not is_topic(form) and form != subject.name:
            update["name"], name_was = form, subject.name
    parent = subject.parent_entity
    matches: tuple[str, ...] = ()
    if parent:
        if any(w[:1].islower() for w in parent.split()):
            form = proper_form(parent, texts)
            if form and form != parent:
                update["parent_entity"], parent_was, parent = form, parent, form
        matches = _parent_matches(parent, organisations("\n".join(texts)))
    resolved = subject.model_copy(update=update) if update else subject
    return SubjectResolution(resolved, name_was, parent_was, matches)


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
        first = mentions[0]
        if first.issuer and first.extended_by == first.issuer:
            return None, (
                f"another organisation's: {first.full_name!r} is {first.issuer}'s, "
                f"not {subject.parent_entity}'s"
            )
        return None, f"look-alike: {first.full_name!r} is not {subject.name!r}"
    mention = clean[0]
    role = subject.role
    role_ok = role is None
    if subject.parent_entity is None:
        binding = Binding(kind="unbound", name_quote=name_q)
        role_ok = role is None or role in norm_name(name_q.text)
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
            role is None or role in norm_name(name_q.text) or role in norm_name(parent_q.text)
        )
    if not role_ok:
        return None, f"role {subject.role!r} is not stated with the subject"
    full = mention.full_name if mention.qualifier else subject.name
    cand = Candidate(
        subject_id=slug(full),
        name=full,
        parent_entity=subject.parent_entity,
        article_ids=[art.id],
        bindings=[binding],
        class_attributes={"type": subject.type, **({"role": subject.role} if subject.role else {})},
    )
    return cand, ""


def _binding_kind(art: Article, name_q: Quote, parent_q: Quote) -> str | None:
    if name_q.field == "body" and parent_q.field == "body":
        overlap = name_q.start < parent_q.end and parent_q.start < name_q.end
        unit = next((u for u in text_units(art.body) if u.start <= name_q.start < u.end), None)
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
    for art in pool:  # another organisation's product of the same name: no inheritance at all
        for src in (art.title, art.body):
            if any(m.issuer and not same_org(m.issuer, subject.parent_entity) for m in find_mentions(subject.name, src)):
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
                unit = next((u for u in text_units(art.body) if u.start <= m.start < u.end), None)
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


def unchecked_articles(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    rejected: Sequence[RejectedCandidate],
    pool: Sequence[Article],
) -> list[Article]:
    """Articles of ``pool`` that name ``subject.name`` (a look-alike included) in their title or
    body but appear in no candidate and no rejection: what the reasoner left out."""
    covered = {aid for c in candidates for aid in c.article_ids} | {r.article_id for r in rejected}
    return [
        a
        for a in pool
        if a.id not in covered
        and (find_mentions(subject.name, a.title) or find_mentions(subject.name, a.body))
    ]


def _bound_org(subject: SubjectClass, art: Article, binding: Binding) -> str | None:
    """The organisation ``art`` names with the subject at ``binding``'s name quote: the mention's
    issuer, else the only organisation in the quote, its section, the title, or the whole article."""
    q = binding.name_quote
    src = art.title if q.field == "title" else art.body
    for m in find_mentions(subject.name, src):
        if q.start <= m.start and m.end <= q.end and m.issuer:
            return m.issuer
    scopes = [q.text]
    if q.field == "body":
        sec = innermost_section(art.sections, q.start)
        scopes.append(art.body[sec.start : sec.end] if sec else art.body)
    scopes += [art.title, art.body]
    for text in scopes:
        orgs = organisations(text)
        if len(orgs) == 1:
            return orgs[0]
        if len(orgs) > 1:
            return None  # several organisations side by side: not attributable here
    return None


def split_by_parent(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    rejected: Sequence[RejectedCandidate],
    pool: Sequence[Article],
) -> tuple[list[Candidate], list[RejectedCandidate]]:
    """For a question that names no parent entity: group each candidate's articles by the
    organisation they bind the subject to (module doc). One organisation: the candidate keeps all
    its articles and records it as ``parent_entity``. Several: one candidate per organisation, and
    articles that name none of them are rejected (which one they describe is unknown). Topics and
    role questions are returned unchanged."""
    if subject.parent_entity is not None or subject.role or is_topic(subject.name):
        return list(candidates), list(rejected)
    by_id = {a.id: a for a in pool}
    out: list[Candidate] = []
    rejected = list(rejected)
    for cand in candidates:
        groups: dict[str, list[tuple[str, Binding]]] = {}
        loose: list[tuple[str, Binding]] = []
        for aid, b in zip(cand.article_ids, cand.bindings, strict=True):
            org = _bound_org(subject, by_id[aid], b) if aid in by_id else None
            if org is None:
                loose.append((aid, b))
                continue
            key = next((k for k in groups if same_org(k, org)), org)
            groups.setdefault(key, []).append((aid, b))
        if not groups:
            out.append(cand)
            continue
        if len(groups) == 1:
            (org,) = groups
            out.append(cand.model_copy(update={"parent_entity": org, "implicit_parent": True}))
            continue
        for org, members in groups.items():
            out.append(
                cand.model_copy(
                    update={
                        "subject_id": slug(f"{cand.name} {org}"),
                        "parent_entity": org,
                        "implicit_parent": True,
                        "article_ids": [aid for aid, _ in members],
                        "bindings": [b for _, b in members],
                    }
                )
            )
        names = ", ".join(groups)
        rejected += [
            RejectedCandidate(
                name=cand.name,
                article_id=aid,
                reason=f"ambiguous: names {cand.name!r} without saying whose, and {names} each have one",
            )
            for aid, _ in loose
        ]
    return out, rejected
