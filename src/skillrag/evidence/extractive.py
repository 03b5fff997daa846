"""The extractive fallback reasoner: no model, only patterns over the question and the articles.

* Subject class: the question grammar (``question.parse_question``: attribute-of, possessive,
  how-much, offer, role and verb shapes) gives the subject name as written, its parent entity and
  the attribute; a role word (founder, CEO, …) makes it an individual; a year is the time scope,
  ``in <Place>`` the jurisdiction. A question the grammar does not know falls back to the older
  heuristics: the parent entity from a possessive, a preposition or ``does Rho-Bank offer X``, the
  subject name the longest remaining capitalised phrase, the remaining content words the attribute.
* Candidates: every article mentioning the name (title first); the binding is the first place
  where the name and the parent entity co-occur in one sentence, else one section, else the name
  is in the title and the parent anywhere in the body.
* Evidence: sentences of candidate articles that, with their section heading, contain every
  attribute word (else the best share of them, at least half), best articles first.
* Conclusion: built by code from the claims (values attached to the attribute); it quotes and
  does not interpret.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillrag.corpus.model import Article
from skillrag.evidence.mentions import (
    FUNCTION_WORDS,
    find_mentions,
    innermost_section,
    norm_name,
    stem_terms,
)
from skillrag.evidence.model import Scope, SubjectClass
from skillrag.evidence.question import parse_question
from skillrag.evidence.steps import (
    CandidateInput,
    CandidateProposal,
    ConclusionInput,
    ConclusionProposal,
    EvidenceInput,
    EvidenceProposal,
)

__all__ = ["FALLBACK_NOTE", "ExtractiveReasoner", "extract_subject"]

FALLBACK_NOTE = (
    "extractive fallback: no model was used; subject, candidates and evidence come from patterns "
    "and exact name matches, and the conclusion only restates the quoted evidence"
)
from skillrag.text import units as text_units

_ROLES = {
    "founder",
    "co-founder",
    "cofounder",
    "ceo",
    "cfo",
    "cto",
    "coo",
    "owner",
    "director",
    "chairman",
    "chair",
    "president",
    "shareholder",
    "contractor",
    "registered agent",
    "auditor",
    "partner",
    "trustee",
}
_TYPE_BY_HEAD = {
    "card": "credit_card",
    "account": "account",
    "loan": "loan",
    "mortgage": "loan",
    "plan": "product",
    "program": "product",
    "programme": "product",
    "subscription": "product",
    "agreement": "contract",
    "contract": "contract",
    "policy": "policy",
    "procedure": "procedure",
    "setting": "setting",
    "settings": "setting",
    "bank": "legal_entity",
    "inc": "legal_entity",
    "corp": "legal_entity",
    "ltd": "legal_entity",
    "llc": "legal_entity",
    "company": "legal_entity",
}
_QWORDS = FUNCTION_WORDS | {
    "tell",
    "give",
    "list",
    "show",
    "explain",
    "offer",
    "provide",
    "much",
    "many",
    "long",
}
#: A capitalised word ending in one of these inside a name is the parent entity (``Acme Bank Gold Card``).
_ENTITY_SUFFIX = {
    "bank",
    "inc",
    "corp",
    "corporation",
    "ltd",
    "llc",
    "plc",
    "group",
    "company",
    "co",
    "gmbh",
    "ag",
    "sa",
}
_CAP = r"[A-Z][\w'’+&\-\u2010\u2011]*"
_CAP_PHRASE = re.compile(rf"{_CAP}(?:[ \t]+(?:of[ \t]+|&[ \t]+)?{_CAP})*(?:[ \t]*\([^()]{{1,30}}\))?")
_POSSESSIVE = re.compile(rf"({_CAP}(?:[ \t]+{_CAP})*)['’]s\b")
_PREP_PARENT = re.compile(
    rf"\b(?:offered by|issued by|provided by|from|by|at|of|with)[ \t]+(?:the[ \t]+)?({_CAP}(?:[ \t]+{_CAP})*)"
)
_OFFER = re.compile(
    rf"^\s*(?:does|do|did|can|will|is)[ \t]+({_CAP}(?:[ \t]+{_CAP})*)[ \t]+"
    r"(?:offer|have|provide|issue|sell|run|support)s?\b[ \t]+(?:an?[ \t]+|the[ \t]+|any[ \t]+)?([^?.,;]+)",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_JURIS = re.compile(rf"\bin[ \t]+(?:the[ \t]+)?({_CAP}(?:[ \t]+{_CAP})*)")


def _strip_function_words(phrase: str) -> str:
    words = phrase.split()
    while words and norm_name(words[0]) in _QWORDS:
        words.pop(0)
    return " ".join(words)


def _looks_like_entity(phrase: str) -> bool:
    """An organisation rather than a product: it does not end in a product noun (Card, Account…)."""
    last = (norm_name(re.sub(r"\([^()]*\)", "", phrase)).split() or [""])[-1].rstrip("s")
    return _TYPE_BY_HEAD.get(last, "legal_entity") == "legal_entity"


def _type_of(name: str, role: str | None, topic: bool) -> str:
    if role and norm_name(name) == role:
        return "individual"
    bare = norm_name(re.sub(r"\([^()]*\)", "", name))
    head = bare.split()[-1] if bare else ""
    return _TYPE_BY_HEAD.get(head, _TYPE_BY_HEAD.get(head.rstrip("s"), "policy" if topic else "product"))


def _scope(q: str) -> Scope:
    year = _YEAR.search(q)
    juris = _JURIS.search(q)
    jurisdiction = juris.group(1) if juris and not _YEAR.fullmatch(juris.group(1)) else None
    return Scope(time=year.group(1) if year else None, jurisdiction=jurisdiction)


def extract_subject(question: str) -> SubjectClass:
    """The subject class of ``question``: the question grammar, else the older patterns (module doc)."""
    parsed = parse_question(question)
    if parsed is not None:
        return SubjectClass(
            type=_type_of(parsed.name, parsed.role, parsed.topic),
            name=parsed.name,
            role=parsed.role,
            parent_entity=parsed.parent,
            attribute=parsed.attribute,
            scope=_scope(question),
        )
    return _legacy_subject(question)


def _legacy_subject(question: str) -> SubjectClass:
    """The pattern heuristics used before the question grammar, for shapes it does not know."""
    q = question.strip()
    parent: str | None = None
    name: str | None = None
    offer = _OFFER.match(q)
    if offer:
        parent = offer.group(1)
        rest = offer.group(2).strip()
        caps = [_strip_function_words(m.group(0)) for m in _CAP_PHRASE.finditer(rest)]
        caps = [c for c in caps if c]
        name = max(caps, key=len) if caps else _strip_function_words(rest) or None
    if parent is None:
        m = _POSSESSIVE.search(q)
        if m:
            parent = _strip_function_words(m.group(1)) or None
    lowered = norm_name(q)
    role = next(
        (r for r in sorted(_ROLES, key=len, reverse=True) if re.search(rf"\b{re.escape(r)}\b", lowered)), None
    )
    if role and name is None:
        # "Who is the founder of Acme Bank?" / "Acme Bank's founder": the person is asked by role
        name = role
        if parent is None:
            pm = _PREP_PARENT.search(q)
            parent = _strip_function_words(pm.group(1)) if pm else None
    year = _YEAR.search(q)
    juris = _JURIS.search(q)
    jurisdiction = juris.group(1) if juris and not _YEAR.fullmatch(juris.group(1)) else None
    if name is None:
        phrases = []
        for m in _CAP_PHRASE.finditer(q):
            ph = _strip_function_words(m.group(0))
            ph = re.split(r"['’]s[ \t]+", ph)[-1]  # "APR of Rho-Bank's Gold Card" → "Gold Card"
            ph = re.sub(r"['’]s$", "", ph)
            ph = re.sub(r"^[A-Z0-9]{2,6}s?[ \t]+(?:of|&)[ \t]+", "", ph)  # "APR of Gold Card" → "Gold Card"
            if not ph or (parent and norm_name(ph) == norm_name(parent)):
                continue
            if jurisdiction and norm_name(ph) == norm_name(jurisdiction):
                continue
            if re.fullmatch(r"[A-Z0-9]{2,6}s?", ph):  # an acronym (APR, ATM, FDIC) is an attribute
                continue
            phrases.append((m.start(), ph))
        if parent is None and len(phrases) >= 2:
            # "the X from Acme Bank": the capitalised phrase after the preposition is the parent
            for pm in _PREP_PARENT.finditer(q):
                cand = _strip_function_words(pm.group(1))
                if (
                    cand
                    and _looks_like_entity(cand)
                    and any(norm_name(p) == norm_name(cand) for _, p in phrases)
                ):
                    parent = cand
                    phrases = [(s, p) for s, p in phrases if norm_name(p) != norm_name(cand)]
                    break
        if phrases:
            name = max(phrases, key=lambda sp: len(sp[1]))[1]
    if name and parent and norm_name(name).startswith(norm_name(parent) + " "):
        name = re.sub(r"^\S+(?:[ \t]+\S+)*?['’]s[ \t]+", "", name) if "'" in name or "’" in name else name
        if norm_name(name).startswith(norm_name(parent) + " "):
            name = " ".join(name.split()[len(parent.split()) :])
    if name and parent is None:
        words = name.split()
        for i, w in enumerate(words[:-1]):
            if (norm_name(w).split() or [""])[-1] in _ENTITY_SUFFIX and w[:1].isupper():
                parent, name = " ".join(words[: i + 1]), " ".join(words[i + 1 :])
                break
    if name and name == name.lower() and len(name) > 3 and name.endswith("s") and not name.endswith("ss"):
        name = name[:-1]
    if name is None and role:
        name = role
    if name is None:
        m = re.search(
            r"\b(?:the|an?|any)[ \t]+([a-z][a-z \-]{2,40}?)(?:[ \t]+(?:of|for|at|from|by|in)\b|[?.]|$)", q
        )
        name = m.group(1).strip() if m else (q.rstrip("?.! ") or q)
    bare = re.sub(r"\([^()]*\)", "", name)
    head = norm_name(bare).split()[-1] if norm_name(bare) else ""
    stype = (
        "individual" if role and norm_name(name) == role else _TYPE_BY_HEAD.get(head.rstrip("s"), "product")
    )
    if parent is None and stype == "individual":
        pm = _PREP_PARENT.search(q)
        if pm:
            parent = _strip_function_words(pm.group(1)) or None
    used = stem_terms(name) | stem_terms(parent) | stem_terms(jurisdiction) | stem_terms(role)
    if year:
        used.add(year.group(1))
    q_plain = re.sub(r"['’]s\b", "", q)
    attr_words = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]*", q_plain) if norm_name(w) not in _QWORDS]
    attr_words = [w for w in attr_words if not (stem_terms(w) <= used)]
    attribute = " ".join(w if w.isupper() else w.lower() for w in attr_words) or None
    return SubjectClass(
        type=stype,
        name=name,
        role=role,
        parent_entity=parent,
        attribute=attribute,
        scope=Scope(time=year.group(1) if year else None, jurisdiction=jurisdiction),
    )


def _unit_at(article: Article, pos: int) -> tuple[int, int] | None:
    for sp in text_units(article.body):
        if sp.start <= pos < sp.end:
            return sp.start, sp.end
    return None


class ExtractiveReasoner:
    """Deterministic reasoner (no model). Same input, same output, every time."""

    name = "extractive"
    model_id: str | None = None
    tokens = 0

    def identify_subject(self, question: str) -> SubjectClass:
        return extract_subject(question)

    def propose_candidates(self, step: CandidateInput) -> list[CandidateProposal]:
        out: list[CandidateProposal] = []
        for art in step.pool:
            prop = self._bind(step.subject, art)
            if prop is not None:
                out.append(prop)
        return out

    def _bind(self, subject: SubjectClass, art: Article) -> CandidateProposal | None:
        parent = subject.parent_entity
        title_m = find_mentions(subject.name, art.title, allowed_prefix=parent)
        body_m = find_mentions(subject.name, art.body, allowed_prefix=parent)
        mentions = [("title", m) for m in title_m] + [("body", m) for m in body_m]
        if not mentions:
            return None
        clean = [(f, m) for f, m in mentions if not m.extended_by]
        # prefer clean mentions; another organisation's or a look-alike is proposed only so that
        # the gate reports it (another organisation's first: it says whose the subject is)
        owned = [(f, m) for f, m in mentions if m.extended_by and m.extended_by == m.issuer]
        ordered = clean + owned + [fm for fm in mentions if fm not in clean and fm not in owned]
        if parent is None:
            f, m = ordered[0]
            src = art.title if f == "title" else art.body
            return CandidateProposal(
                name=m.full_name, article_id=art.id, name_quote=self._quote(art, f, m.start, m.end, src)
            )
        parents = find_mentions(parent, art.body) + [] if parent else []
        parents = [p for p in parents if not p.extended_by]
        if not parents:
            f, m = ordered[0]
            src = art.title if f == "title" else art.body
            return CandidateProposal(
                name=m.full_name, article_id=art.id, name_quote=self._quote(art, f, m.start, m.end, src)
            )
        for f, m in ordered:  # 1. same sentence
            if f != "body":
                continue
            unit = _unit_at(art, m.start)
            if unit and any(unit[0] <= p.start < unit[1] for p in parents):
                text = art.body[unit[0] : unit[1]]
                return CandidateProposal(
                    name=m.full_name, article_id=art.id, name_quote=text, parent_quote=text
                )
        for f, m in ordered:  # 2. same section
            if f != "body":
                continue
            sec = innermost_section(art.sections, m.start)
            for p in parents:
                if innermost_section(art.sections, p.start) == sec:
                    return CandidateProposal(
                        name=m.full_name,
                        article_id=art.id,
                        name_quote=self._quote(art, "body", m.start, m.end, art.body),
                        parent_quote=self._quote(art, "body", p.start, p.end, art.body),
                    )
        f, m = ordered[0]  # 3. title names the subject, body names the parent
        src = art.title if f == "title" else art.body
        p = parents[0]
        return CandidateProposal(
            name=m.full_name,
            article_id=art.id,
            name_quote=self._quote(art, f, m.start, m.end, src),
            parent_quote=self._quote(art, "body", p.start, p.end, art.body),
        )

    @staticmethod
    def _quote(art: Article, field: str, start: int, end: int, src: str) -> str:
        """The sentence holding ``src[start:end]`` (the whole title for a title mention)."""
        if field == "title":
            return art.title
        unit = _unit_at(art, start)
        return art.body[unit[0] : unit[1]] if unit else src[start:end]

    def propose_evidence(self, step: EvidenceInput) -> list[EvidenceProposal]:
        attr = stem_terms(step.subject.attribute)
        candidate_names = step.candidate_names
        by_score: dict[float, list[EvidenceProposal]] = {}
        for art in step.articles:
            label = candidate_names[0] if len(candidate_names) == 1 else self._name_for(art, candidate_names)
            for sp in text_units(art.body):
                if attr:
                    sec = innermost_section(art.sections, sp.start)
                    words = stem_terms(sp.text) | stem_terms(sec.heading if sec else None)
                    score = len(attr & words) / len(attr)
                else:
                    score = 1.0 if any(find_mentions(n, sp.text) for n in candidate_names) else 0.0
                if score >= 0.5:
                    by_score.setdefault(score, []).append(
                        EvidenceProposal(
                            article_id=art.id,
                            text=sp.text,
                            subject=label,
                            why=f"holds {round(score * 100)}% of the words of the asked attribute",
                        )
                    )
        if not by_score:
            return []
        best = max(by_score)
        return by_score[best] if best >= 1.0 else by_score[best][:5]

    @staticmethod
    def _name_for(art: Article, names: Sequence[str]) -> str:
        for n in names:
            if find_mentions(n, art.title) or find_mentions(n, art.body):
                return n
        return names[0]

    def conclude(self, step: ConclusionInput) -> ConclusionProposal:
        """The code-built conclusion, as it is: this reasoner quotes and does not interpret."""
        return step.default
