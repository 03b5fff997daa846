"""Run one question through the evidence-first state machine (``answer_question``), or through a
workspace with its skill, search index and model (``ask``).

The runner owns the machine: it moves it, and it validates what the reasoner proposes at each
state (``gate.check_candidates``, ``verify.check_evidence``, ``verify.check_claim_proposals``).
After SUBJECT_NOT_FOUND nothing else runs: no second search, no reformulated query, no relaxed
name — the function returns.

Before the gate, code binds the subject class to the sources' names (``gate.resolve_subject``:
the sources' casing for a lower-case name, and a parent entity written without its suffix only
when it names one organisation). Before concluding, code makes sure the candidate list is
complete: every searched article that names the subject is either a candidate or rejected with a
reason (articles the reasoner left out are bound by code, ``gate.unchecked_articles``), and when
more articles name the subject than ``max_pool`` allows, the answer is not sufficient.

Code, not the reasoner, also finds every span of the candidates' articles that states a value of
the asked attribute (``verify.value_spans``: sentences, list items, table rows); those the
reasoner left out are verified like its own and added to the evidence (``why`` starts with
``found by code``), so a conflict is found whatever a model chose to cite. ``sufficient`` needs
a verified span that gives a value of the asked attribute (``confidence``). When the sources
disagree, or no span states a value, the conclusion is the code-built one: a model's conclusion,
which might pick one value or answer from the attribute's name alone, is not passed through (it
is noted in the run record).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillrag.corpus.model import Article
from skillrag.errors import EmptyInputError, IllegalTransition, UserError
from skillrag.evidence.confidence import assess
from skillrag.evidence.extractive import FALLBACK_NOTE, ExtractiveReasoner
from skillrag.evidence.gate import (
    check_candidates,
    extend_to_mentions,
    resolve_subject,
    split_by_parent,
    unchecked_articles,
)
from skillrag.evidence.machine import State, StateMachine
from skillrag.evidence.mentions import (
    find_mentions,
    innermost_section,
    norm_name,
    slug,
    stem_terms,
)
from skillrag.evidence.model import (
    Candidate,
    Claim,
    Confidence,
    ContractCheck,
    EvidenceAnswer,
    EvidenceUnit,
    RejectedCandidate,
    RunRecord,
    StepLog,
    SubjectClass,
)
from skillrag.evidence.steps import (
    CandidateInput,
    ConclusionInput,
    ConclusionProposal,
    EvidenceInput,
    Reasoner,
)
from skillrag.evidence.verify import (
    answering_claims,
    check_claim_proposals,
    check_evidence,
    claims_from_units,
    find_conflicts,
    sibling_names,
    value_spans,
)
from skillrag.skill.contract import ContractLimits, normalize, validate_output
from skillrag.text import stem
from skillrag.text import units as text_units

__all__ = [
    "NO_INDEX_NOTE",
    "ArticleSource",
    "EvidenceSettings",
    "SearchTool",
    "answer_question",
    "ask",
    "check_subject",
    "contract_output",
    "save_answer",
]


#: What the gate step records when ``ask`` ran without the search index (``use_index=False``).
NO_INDEX_NOTE = "not used (--no-index): candidates come from the exact-name scan of the skill's articles"


class ArticleSource(Protocol):
    """Read access to the knowledge base (``skillrag.corpus.ArticleStore`` is one)."""

    def list(self) -> list[Article]: ...


class SearchTool(Protocol):
    """The retrieval tool (``skillrag.search.Retriever`` is one): ranked hits with ``article_id``."""

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[Any]: ...


class EvidenceSettings(BaseModel):
    """Limits of one evidence-first run (counts of articles and spans; no units of time)."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(10, ge=1, le=200, description="Hits asked of the search tool per query.")
    max_pool: int = Field(40, ge=1, description="Articles examined at the subject gate.")
    max_articles: int = Field(6, ge=1, description="Candidate articles read at EVIDENCE_RETRIEVAL.")
    max_units: int = Field(
        15, ge=1, le=200, description="Most evidence units kept (the contract's max snippets)."
    )
    min_chars: int = Field(15, ge=1, description="Shortest evidence unit, in characters (the contract's).")
    min_confidence: Confidence = Field("medium", description="Confidence at which an answer is sufficient.")
    inherit_binding: bool = Field(
        True,
        description="Admit articles naming a bound candidate exactly (and no other organisation) "
        "with an inherited binding; False = every article needs its own binding.",
    )


def check_subject(question: str, subject: SubjectClass) -> list[str]:
    """Reasons a subject class does not come from ``question`` (empty = fine): every word of the
    name (an inflection aside: the same Snowball stem, so ``Cards`` for "card" and ``data refueling``
    passes for "How much data can a customer refuel?") and the parent entity as a phrase must be
    words of the question — no reinterpretation, no substitution."""
    q = norm_name(question)
    raw = re.findall(r"[a-z0-9+&.]+", q)
    q_words = {stem(w) for w in raw}
    reasons = []
    bare = norm_name(re.sub(r"\([^()]*\)", "", subject.name))
    words = re.findall(r"[a-z0-9+&.]+", bare)
    if not words or not all(stem(w) in q_words for w in words):
        reasons.append(f"subject name {subject.name!r} is not taken from the question")
    if subject.parent_entity:
        parent = norm_name(subject.parent_entity)
        if not parent or not re.search(rf"(?<![a-z0-9]){re.escape(parent)}(?![a-z0-9])", q):
            reasons.append(f"parent entity {subject.parent_entity!r} is not named in the question")
    return reasons


def _pool(
    subject: SubjectClass, articles: Iterable[Article], hits: Sequence[str], limit: int
) -> tuple[list[Article], int]:
    """Articles that mention the subject's name (title mentions first, look-alikes last), then
    search hits; at most ``limit``. Also returns how many articles mention the name at all."""
    ranked: list[tuple[int, str, Article]] = []
    by_id: dict[str, Article] = {}
    for art in articles:
        by_id[art.id] = art
        tm = find_mentions(subject.name, art.title, allowed_prefix=subject.parent_entity)
        bm = find_mentions(subject.name, art.body, allowed_prefix=subject.parent_entity)
        if not tm and not bm:
            continue
        clean_t = any(not m.extended_by for m in tm)
        clean_b = any(not m.extended_by for m in bm)
        rank = 0 if clean_t else 1 if clean_b else 2
        ranked.append((rank, art.id, art))
    ranked.sort(key=lambda r: (r[0], r[1]))
    out = [a for _, _, a in ranked]
    seen = {a.id for a in out}
    for aid in hits:
        if aid not in seen and aid in by_id:
            out.append(by_id[aid])
            seen.add(aid)
    return out[:limit], len(ranked)


def _article_score(art: Article, attr: set[str], names: Sequence[str]) -> float:
    if not attr:
        return float(sum(len(find_mentions(n, art.body)) for n in names))
    best = 0.0
    for sp in text_units(art.body):
        sec = innermost_section(art.sections, sp.start)
        best = max(
            best, len(attr & (stem_terms(sp.text) | stem_terms(sec.heading if sec else None))) / len(attr)
        )
    return best


def _not_found_conclusion(subject: SubjectClass, rejected: Sequence[RejectedCandidate]) -> str:
    bound = f" bound to {subject.parent_entity!r}" if subject.parent_entity else ""
    text = (
        f"Not found: the knowledge base holds no {subject.type.replace('_', ' ')} named "
        f"{subject.name!r}{bound}, so no conclusion is drawn and no similar subject is substituted."
    )
    if rejected:
        text += f" {len(rejected)} look-alike or unbound mention(s) were rejected at the gate."
    return text


def _not_found_actions(subject: SubjectClass) -> list[str]:
    owner = subject.parent_entity or "the document owners"
    return [
        f"Request the source documents that describe {subject.name!r} from {owner}.",
        (
            f"Ask the requester whether {subject.name!r} goes by another official name; do not assume it "
            "is one of the similar subjects in the knowledge base."
        ),
        "Check that every relevant source has been ingested into this workspace.",
    ]


def _default_conclusion(
    subject: SubjectClass,
    candidates: Sequence[Candidate],
    units: Sequence[EvidenceUnit],
    claims: Sequence[Claim],
    conflicts: Sequence[Any],
    ambiguous: Sequence[str] = (),
) -> ConclusionProposal:
    names = " / ".join(c.label for c in candidates)
    what = f"the {subject.attribute} of {names}" if subject.attribute else names
    actions: list[str] = []
    if len(candidates) > 1:
        actions.append(f"Ask which subject is meant: {', '.join(repr(c.label) for c in candidates)}.")
    if len(ambiguous) > 1:
        actions.append(
            f"Ask which organisation {subject.parent_entity!r} means: {', '.join(repr(o) for o in ambiguous)}."
        )
    if not units:
        return ConclusionProposal(
            conclusion=f"No verified evidence states {what}; the candidate articles do not answer the question.",
            answered=False,
            suggested_next_actions=actions + [f"Find or request a document that states {what}."],
        )
    if conflicts:
        parts = []
        for cf in conflicts:
            vals = "; ".join(f"{c.value} ({c.article_id})" for c in cf.claims)
            parts.append(f"{cf.attribute or 'value'} of {cf.subject}: {vals}")
        arts = sorted({c.article_id for cf in conflicts for c in cf.claims})
        return ConclusionProposal(
            conclusion="The sources disagree and the disagreement is not arbitrated: "
            + " | ".join(parts)
            + ".",
            answered=True,
            suggested_next_actions=actions
            + [
                f"Ask the owners of {', '.join(arts)} which value is current.",
                "Check the documents' dates or versions before relying on either value.",
            ],
        )
    relevant = answering_claims(subject, claims, units) if subject.attribute else list(claims)
    srcs = sorted({u.article_id for u in units})
    if relevant:
        facts: dict[tuple[str, str], list[str]] = {}
        for c in relevant:
            facts.setdefault((c.attribute, c.value), []).append(c.article_id)
        if len({c.normalized for c in relevant}) == 1:
            value = relevant[0].value
            cited = sorted({a for ids in facts.values() for a in ids})
            text = f"The sources state {what}: {value} ({', '.join(cited)})."
        else:
            listed = "; ".join(f"{a}: {v} ({', '.join(sorted(set(ids)))})" for (a, v), ids in facts.items())
            text = f"The sources state these values for {what}, each for its own item: {listed}."
    elif subject.attribute:
        u = units[0]
        return ConclusionProposal(
            conclusion=f"No verified span states a value of {what}; the closest evidence is "
            f"\u201c{u.text}\u201d ({u.article_id}), which does not give one.",
            answered=False,
            suggested_next_actions=actions + [f"Find or request a document that states {what}."],
        )
    else:
        u = units[0]
        text = f"Evidence on {what}: \u201c{u.text}\u201d ({u.article_id})."
    if len(srcs) == 1:
        actions.append(
            "Only one article supports this; confirm it with a second source if the decision is critical."
        )
    return ConclusionProposal(conclusion=text, answered=True, suggested_next_actions=actions)


def _add_found(
    subject: SubjectClass,
    units: list[EvidenceUnit],
    found: Sequence[EvidenceUnit],
    articles: dict[str, Article],
    limit: int,
) -> tuple[int, int]:
    """Append to ``units`` each code-found unit that no unit overlapping it already backs with the
    same values; at most ``limit`` units in all. Returns ``(added, left out over the limit)``."""

    def values(u: EvidenceUnit) -> set[str]:
        return {c.normalized for c in answering_claims(subject, claims_from_units(subject, [u], articles), [u])}

    added = over = 0
    for cu in found:
        want = values(cu)
        if any(
            u.article_id == cu.article_id and u.start < cu.end and cu.start < u.end and want <= values(u)
            for u in units
        ):
            continue
        if len(units) >= limit:
            over += 1
            continue
        units.append(cu)
        added += 1
    return added, over


class _Steps:
    """The run record's steps as the runner takes them: each one timed from the end of the step
    before (milliseconds), with the queries it issued and the articles it read."""

    def __init__(self) -> None:
        self.logs: list[StepLog] = []
        self._t = time.perf_counter()

    def log(
        self,
        state: State,
        detail: dict[str, int | str | float | bool | None],
        *,
        queries: Sequence[str] = (),
        articles: Iterable[Article] = (),
    ) -> None:
        now = time.perf_counter()
        ms, self._t = round((now - self._t) * 1000.0, 3), now
        self.logs.append(
            StepLog(state=state, ms=ms, queries=list(queries), articles=[a.id for a in articles], detail=detail)
        )

    def record(self, sm: StateMachine, reasoner: Reasoner) -> RunRecord:
        """The audit trail: the machine's path, these steps and the tokens the reasoner used."""
        return RunRecord(path=sm.path, steps=self.logs, tokens=reasoner.tokens)


def answer_question(
    question: str,
    *,
    articles: ArticleSource | Sequence[Article],
    reasoner: Reasoner | None = None,
    retriever: SearchTool | None = None,
    settings: EvidenceSettings | None = None,
    limits: ContractLimits | None = None,
    machine: StateMachine | None = None,
) -> EvidenceAnswer:
    """Answer ``question`` from ``articles`` through the state machine.

    ``reasoner`` defaults to ``ExtractiveReasoner``; ``retriever`` (optional) adds its hits to the
    pool searched at the gate and orders the candidate articles at retrieval (its queries always
    contain the candidate names). Returns an ``EvidenceAnswer`` whose ``record.path`` is the path
    taken. Raises ``EmptyInputError`` for an empty question, ``ModelError`` when a model step fails,
    ``IllegalTransition`` if the machine is driven out of order (a bug, not an input).
    """
    if not question or not question.strip():
        raise EmptyInputError("the question is empty")
    settings = settings or EvidenceSettings()
    reasoner = reasoner or ExtractiveReasoner()
    sm = machine or StateMachine()
    if sm.state != State.INIT:
        raise IllegalTransition(f"a run must start in INIT, the machine is in {sm.state}")
    steps = _Steps()
    source = list(articles) if isinstance(articles, Sequence) else articles.list()

    # 1. subject class
    subject = reasoner.identify_subject(question)
    problems = check_subject(question, subject)
    if problems:
        raise UserError(f"could not take a subject from the question: {problems[0]}")
    resolution = resolve_subject(subject, source)
    subject = resolution.subject
    ambiguous = resolution.parent_matches if len(resolution.parent_matches) > 1 else ()
    sm.advance(
        State.SUBJECT_CLASS_IDENTIFIED,
        f"{subject.type} {subject.name!r}"
        + (f" of {subject.parent_entity!r}" if subject.parent_entity else ""),
    )
    steps.log(
        State.SUBJECT_CLASS_IDENTIFIED,
        {
            "name": subject.name,
            "parent_entity": subject.parent_entity,
            "attribute": subject.attribute,
            **({"name_as_written": resolution.name_as_written} if resolution.name_as_written else {}),
            **({"parent_as_written": resolution.parent_as_written} if resolution.parent_as_written else {}),
        },
    )

    # 2. candidate discovery: the hard gate
    sm.require(State.SUBJECT_CLASS_IDENTIFIED, "candidate discovery")
    queries: list[str] = []
    hit_ids: list[str] = []
    if retriever is not None:
        q = " ".join(x for x in (subject.name, subject.parent_entity) if x)
        queries.append(q)
        hit_ids = [h.article_id for h in retriever.search(q, k=settings.k)]
    pool, n_naming = _pool(subject, source, hit_ids, settings.max_pool)
    proposals = reasoner.propose_candidates(CandidateInput(question, subject, pool))
    candidates, rejected = check_candidates(subject, proposals, pool)
    # completeness: every searched article naming the subject gets a decision, whatever was proposed
    left_out = unchecked_articles(subject, candidates, rejected, pool)
    if left_out:
        more = ExtractiveReasoner().propose_candidates(CandidateInput(question, subject, left_out))
        candidates, rejected = check_candidates(subject, [*proposals, *more], pool)
    if settings.inherit_binding:
        candidates, rejected = extend_to_mentions(subject, candidates, rejected, pool)
    candidates, rejected = split_by_parent(subject, candidates, rejected, pool)
    complete = n_naming <= settings.max_pool
    sm.advance(
        State.CANDIDATE_SUBJECT_DISCOVERED, f"{len(candidates)} candidate(s), {len(rejected)} rejected"
    )
    steps.log(
        State.CANDIDATE_SUBJECT_DISCOVERED,
        {
            "proposed": len(proposals),
            "bound_by_code": len(left_out),
            "candidates": len(candidates),
            "rejected": len(rejected),
            "articles_naming_subject": n_naming,
            "complete": complete,
            **({"parent_matches": "; ".join(resolution.parent_matches)} if resolution.parent_matches else {}),
        },
        queries=queries,
        articles=pool,
    )
    common = {
        "question": question,
        "harness": reasoner.name,
        "model": reasoner.model_id,
        "note": FALLBACK_NOTE if reasoner.name == "extractive" else None,
        "subject": subject,
        "candidates": candidates,
        "rejected_candidates": rejected,
    }

    if not candidates:
        sm.advance(State.SUBJECT_NOT_FOUND, "no candidate bound to the query subject: terminate")
        return EvidenceAnswer(
            **common,
            final_state=sm.state,
            conclusion=_not_found_conclusion(subject, rejected),
            confidence="low",
            confidence_reason="the subject gate found no matching, bound subject",
            sufficient=False,
            risk_signal="subject_not_found",
            suggested_next_actions=_not_found_actions(subject),
            contract=None,
            record=steps.record(sm, reasoner),
        )

    # 3. evidence retrieval, restricted to the candidates' articles
    sm.advance(State.EVIDENCE_RETRIEVAL, "retrieval restricted to candidate articles")
    names = list(dict.fromkeys(c.name for c in candidates))
    allowed = list(dict.fromkeys(aid for c in candidates for aid in c.article_ids))
    by_id = {a.id: a for a in pool}
    attr = stem_terms(subject.attribute)
    order: list[str] = []
    rq: list[str] = []
    if retriever is not None:
        q = " ".join([*names, subject.attribute or ""]).strip()
        rq.append(q)
        order = [
            h.article_id
            for h in retriever.search(q, k=max(settings.k, len(allowed)))
            if h.article_id in allowed
        ]
    rest = sorted(
        (a for a in allowed if a not in order), key=lambda a: (-_article_score(by_id[a], attr, names), a)
    )
    chosen = [by_id[a] for a in dict.fromkeys(order + rest)][: settings.max_articles]
    ev_props = reasoner.propose_evidence(EvidenceInput(question, subject, names, chosen))
    steps.log(State.EVIDENCE_RETRIEVAL, {"proposed": len(ev_props)}, queries=rq, articles=chosen)

    # 4. verification of every unit's subject
    sm.require(State.EVIDENCE_RETRIEVAL, "evidence verification")
    # sibling products are named anywhere in the scope ("Saver Plus Account" has its own article)
    siblings = sibling_names(subject, names, subject.parent_entity, source) if subject.attribute else []
    units, dropped = check_evidence(
        subject,
        candidates,
        ev_props,
        chosen,
        min_chars=settings.min_chars,
        max_units=settings.max_units,
        siblings=siblings,
    )
    # every span of the candidates' articles that states a value of the attribute, found by code
    held = [by_id[a] for a in allowed if a in by_id]
    found = value_spans(subject, candidates, held)
    code_units, code_dropped = check_evidence(
        subject,
        candidates,
        found,
        held,
        min_chars=settings.min_chars,
        max_units=max(len(found), 1),
        siblings=siblings,
    )
    n_found, n_over = _add_found(subject, units, code_units, by_id, settings.max_units)
    seen_dropped = {(d.article_id, normalize(d.text)) for d in dropped}
    dropped += [d for d in code_dropped if (d.article_id, normalize(d.text)) not in seen_dropped]
    claims = claims_from_units(subject, units, by_id)
    sm.advance(State.EVIDENCE_VERIFIED, f"{len(units)} unit(s) verified, {len(dropped)} dropped")
    steps.log(
        State.EVIDENCE_VERIFIED,
        {
            "units": len(units),
            "dropped": len(dropped),
            "claims": len(claims),
            "found_by_code": n_found,
            "over_limit": n_over,
        },
        articles=held,
    )

    # 5. conclusion
    sm.require(State.EVIDENCE_VERIFIED, "conclusion")
    conflicts = find_conflicts(claims)
    default = _default_conclusion(subject, candidates, units, claims, conflicts, ambiguous)
    judged = reasoner.conclude(ConclusionInput(question, subject, units, default)) if units else default
    refused: list[str] = []
    if judged is not default:
        extra, refused = check_claim_proposals(judged.claims, units)
        keys = {(c.evidence_index, c.normalized) for c in claims}
        claims += [c for c in extra if (c.evidence_index, c.normalized) not in keys]
        conflicts = find_conflicts(claims)
    no_value = bool(units) and bool(subject.attribute) and not answering_claims(subject, claims, units)
    withheld = (bool(conflicts) or no_value) and judged is not default
    if conflicts or no_value:
        # conflicts are listed, never arbitrated, and the attribute's name alone answers nothing:
        # the code-built conclusion says so, whatever the model concluded
        default = _default_conclusion(subject, candidates, units, claims, conflicts, ambiguous)
    a = assess(
        subject,
        len(candidates),
        units,
        conflicts,
        dropped,
        answered=judged.answered if judged is not default else True,
        min_confidence=settings.min_confidence,
        complete=complete,
        claims=claims,
        ambiguous=ambiguous,
        evidence_complete=n_over == 0,
    )
    actions = list(dict.fromkeys([*judged.suggested_next_actions, *default.suggested_next_actions]))
    if a.risk_signal == "subject_mismatch":
        actions.append("Review the dropped spans: they name a different subject or scope.")
    if not complete:
        actions.append(
            f"Narrow the question: {n_naming} articles name {subject.name!r}, more than the "
            f"{settings.max_pool} examined."
        )
    if n_over:
        actions.append(
            f"Narrow the question: {n_over} more span(s) state the {subject.attribute} than the "
            f"{settings.max_units} evidence units kept."
        )
    conclusion = default.conclusion if conflicts or no_value else judged.conclusion
    contract = _contract(question, conclusion, units, list(by_id.values()), limits) if units else None
    sufficient, confidence, reason = a.sufficient, a.confidence, a.reason
    if contract is not None and not contract.accepted:
        sufficient, confidence, reason = False, "low", "the evidence contract rejected the evidence"
    sm.advance(State.CONCLUDED, f"confidence {confidence}, sufficient {sufficient}")
    steps.log(
        State.CONCLUDED,
        {
            "coverage": round(a.coverage, 3),
            "independence": a.independence,
            "conflicts": len(conflicts),
            "refused_claims": len(refused),
            "model_conclusion_withheld": withheld,
        },
    )
    return EvidenceAnswer(
        **common,
        final_state=sm.state,
        conclusion=conclusion,
        evidence=units,
        dropped_evidence=dropped,
        claims=claims,
        conflicts=conflicts,
        confidence=confidence,
        confidence_reason=reason,
        sufficient=sufficient,
        risk_signal=a.risk_signal if sufficient or a.risk_signal != "none" else "insufficient_evidence",
        suggested_next_actions=actions,
        contract=contract,
        record=steps.record(sm, reasoner),
    )


def contract_output(question: str, conclusion: str, units: Sequence[EvidenceUnit]) -> dict[str, Any]:
    """The evidence units in the evidence contract's output schema (``skill.contract``)."""
    return {
        "case_id": "ask-" + slug(question)[:80],
        "guidance": conclusion,
        "snippets": [
            {
                "source_article": u.article_id,
                "source_title": u.title or u.article_id,
                "text": u.text,
                "why": u.why or f"about {u.subject}",
            }
            for u in units
        ],
        "n_snippets": len(units),
        "articles_consulted": list(dict.fromkeys(u.article_id for u in units)),
    }


def _contract(
    question: str,
    conclusion: str,
    units: Sequence[EvidenceUnit],
    arts: Sequence[Article],
    limits: ContractLimits | None,
) -> ContractCheck:
    reasons = validate_output(
        contract_output(question, conclusion, units), {a.id: a.body for a in arts}, limits
    )
    return ContractCheck(accepted=not reasons, reasons=reasons)


def ask(
    ws: Any,
    question: str,
    *,
    skill: str = "evidence-qa",
    harness: Literal["extractive", "llm"] = "extractive",
    model: Any = None,
    use_index: bool = True,
    retriever: SearchTool | None = None,
) -> EvidenceAnswer:
    """Answer ``question`` over workspace ``ws`` with skill ``skill`` (its skill.yaml sets ``k``,
    ``allowed_sources`` and the contract limits; its SKILL.md is the model's operating manual).

    ``harness="llm"`` needs ``model`` (an id such as ``openai:gpt-4.1`` or a pydantic-ai ``Model``);
    ``"extractive"`` needs none. With ``use_index`` (the default) the skill's search index must
    exist and be current: a missing, damaged or stale one raises ``IndexStateError`` (the usual one
    line, naming ``skillrag index`` and ``--no-index``), never a silent switch to another method.
    ``use_index=False`` (CLI ``--no-index``) answers from the exact-name scan of the skill's
    articles alone, and the answer says so (``NO_INDEX_NOTE`` in the gate step's
    ``search_index``). ``retriever`` replaces the workspace's search tool (any object with
    ``search(query, k)``). Raises ``SkillNotFound``, ``UserError`` (llm without a model),
    ``EmptyInputError`` (no articles), ``IndexStateError``, ``ModelError``.
    """
    from skillrag.corpus import ArticleStore, SourceScope
    from skillrag.errors import IndexStateError
    from skillrag.skill.registry import SkillRegistry

    if not question or not question.strip():
        raise EmptyInputError("the question is empty")
    sk = SkillRegistry(ws).get(skill)
    settings = EvidenceSettings(
        k=sk.config.k, max_units=sk.config.max_snippets, min_chars=sk.config.min_snippet_chars
    )
    reasoner: Reasoner
    if harness == "llm":
        if model is None:
            model = ws.config.models.default
        if model is None:
            raise UserError("the llm harness needs a model: pass --model ID (e.g. openai:gpt-4.1)")
        from skillrag.evidence.llm import LLMReasoner
        from skillrag.models import model_id, resolve_model

        reasoner = LLMReasoner(
            resolve_model(model, settings=ws.config.models), model_id=model_id(model), manual=sk.manual
        )
    elif harness == "extractive":
        reasoner = ExtractiveReasoner()
    else:
        raise UserError(f"unknown harness {harness!r} (extractive, llm)")
    store = ArticleStore(ws)
    if store.count() == 0:
        raise EmptyInputError(f"the workspace {ws.root} holds no articles: run `skillrag ingest` first")
    if retriever is None and use_index:
        from skillrag.search import open_retriever

        try:
            retriever = open_retriever(ws, backend=sk.config.backend, mode=sk.config.mode)
        except IndexStateError as exc:
            raise IndexStateError(
                f"{exc}; or answer without the search index: `skillrag ask --no-index`"
            ) from None
    # the skill's scope, as for every other reader: its allowed_sources and its own reference notes
    scoped = store.scoped(SourceScope.of(sk.name, sk.config.allowed_sources or None))
    source: ArticleSource | list[Article] = scoped
    if retriever is not None:
        retriever = scoped.retriever(retriever)
    answer = answer_question(
        question,
        articles=source,
        reasoner=reasoner,
        retriever=retriever,
        settings=settings,
        limits=sk.config.limits(),
    )
    if retriever is None and len(answer.record.steps) > 1:
        answer.record.steps[1].detail["search_index"] = NO_INDEX_NOTE
    return answer


def save_answer(ws: Any, answer: EvidenceAnswer, path: Path | None = None) -> Path:
    """Write ``answer`` as JSON (atomically) to ``path`` or ``runs/ask/<UTC time>-<slug>.json``."""
    from skillrag.workspace import atomic_write_text

    if path is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        path = ws.runs_dir / "ask" / f"{stamp}-{slug(answer.question)[:60]}.json"
    atomic_write_text(Path(path), answer.model_dump_json(indent=2) + "\n")
    return Path(path)
