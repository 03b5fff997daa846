"""Data model of an evidence-first answer: subject class, candidates, evidence units, conflicts.

Offsets are character offsets into the stored article text (``Article.body``, or ``Article.title``
when ``field == "title"``): ``text == source[start:end]`` always holds for a ``Quote``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillrag.evidence.machine import State, Transition

__all__ = [
    "Binding",
    "Candidate",
    "Claim",
    "Confidence",
    "Conflict",
    "ContractCheck",
    "DroppedEvidence",
    "EvidenceAnswer",
    "EvidenceUnit",
    "Quote",
    "RejectedCandidate",
    "RiskSignal",
    "RunRecord",
    "Scope",
    "StepLog",
    "SubjectClass",
]

Confidence = Literal["low", "medium", "high"]
RiskSignal = Literal[
    "none", "subject_not_found", "ambiguous_subject", "conflict", "insufficient_evidence", "subject_mismatch"
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Scope(_Model):
    """Where and when the question applies; None = not constrained by the question."""

    time: str | None = Field(None, description="A year or period named in the question, e.g. `2024`.")
    jurisdiction: str | None = Field(None, description="A country, state or region named in the question.")


class SubjectClass(_Model):
    """What the question is about (state SUBJECT_CLASS_IDENTIFIED). Fixed for the rest of the run."""

    type: str = Field(
        description="Kind of subject: credit_card, account, product, individual, legal_entity, ..."
    )
    name: str = Field(min_length=1, description="The subject's name as written in the question.")
    role: str | None = Field(None, description="Role of the subject, e.g. `founder`; None for products.")
    parent_entity: str | None = Field(None, description="Entity the subject must be bound to, e.g. the bank.")
    attribute: str | None = Field(None, description="What is asked about the subject, e.g. `annual fee`.")
    scope: Scope = Field(default_factory=Scope)


class Quote(_Model):
    """A verbatim span of an article: ``text == source[start:end]``."""

    article_id: str
    field: Literal["title", "body"] = "body"
    start: int = Field(ge=0, description="Offset of the first character.")
    end: int = Field(ge=0, description="Offset one past the last character.")
    text: str
    section: str | None = Field(None, description="Heading of the innermost section holding the span.")


class Binding(_Model):
    """Why a candidate is tied to the query's parent entity, as quotes from the source.

    ``kind``: ``sentence`` (name and parent in one sentence or line), ``section`` (in one section),
    ``article`` (name in the title, parent in the body), ``inherited`` (this article names the
    same subject and no other organisation; ``parent_quote`` is the verified quote of another
    article of the candidate), ``unbound`` (the question names no parent entity, so no binding
    was required).
    """

    kind: Literal["sentence", "section", "article", "inherited", "unbound"]
    name_quote: Quote
    parent_quote: Quote | None = None


class Candidate(_Model):
    """A subject the knowledge base holds that matches the subject class, with its binding."""

    subject_id: str = Field(description="Stable id: slug of the name (and of the parent entity when the "
                            "question named none and the sources name several).")
    name: str
    parent_entity: str | None = Field(
        None,
        description="Organisation the subject is bound to: the question's parent entity, or, when the question "
        "names none, the one the sources name with the subject (None when they name none).",
    )
    implicit_parent: bool = Field(
        False, description="True when `parent_entity` comes from the sources, not from the question."
    )
    article_ids: list[str] = Field(description="Articles that name this subject with a valid binding.")
    bindings: list[Binding] = Field(description="One binding per article in `article_ids`.")
    class_attributes: dict[str, str] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        """The name, with the parent entity in brackets when it came from the sources
        (``Gold Rewards Card (Brightwater Bank)``): what evidence units and claims are about."""
        return f"{self.name} ({self.parent_entity})" if self.implicit_parent and self.parent_entity else self.name


class RejectedCandidate(_Model):
    """A look-alike or unbound subject that the gate refused, and why."""

    name: str
    article_id: str
    reason: str


class EvidenceUnit(_Model):
    """A verbatim evidence span with its location and the subject it was checked against."""

    article_id: str
    title: str = ""
    section: str | None = None
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str
    subject: str = Field(description="Candidate subject the span is about (checked against the query).")
    why: str = ""


class DroppedEvidence(_Model):
    """A retrieved span refused at EVIDENCE_VERIFIED (subject drift, scope mismatch, not verbatim)."""

    article_id: str
    text: str
    reason: str


class Claim(_Model):
    """One value stated for one attribute of one subject, cited by the evidence unit it came from."""

    subject: str
    attribute: str
    value: str
    normalized: str = Field(description="Comparable form of the value, e.g. `usd:32.50`, `pct:17.99`.")
    evidence_index: int = Field(ge=0, description="Index into `EvidenceAnswer.evidence`.")
    article_id: str


class Conflict(_Model):
    """Claims about the same fact that disagree. Surfaced with citations, never arbitrated."""

    subject: str
    attribute: str
    claims: list[Claim]


class ContractCheck(_Model):
    """Result of the evidence contract (verbatim check) over the emitted evidence."""

    accepted: bool
    reasons: list[str] = Field(default_factory=list)


class StepLog(_Model):
    """What one state did: time taken, queries issued, articles read, counts."""

    state: State
    ms: float = Field(ge=0, description="Wall time of the step, in milliseconds.")
    queries: list[str] = Field(default_factory=list)
    articles: list[str] = Field(default_factory=list)
    detail: dict[str, int | str | float | bool | None] = Field(default_factory=dict)


class RunRecord(_Model):
    """The audit trail: the states entered (with timestamps) and what each step did."""

    path: list[Transition]
    steps: list[StepLog] = Field(default_factory=list)
    tokens: int = Field(0, ge=0, description="Model tokens used (0 for the extractive fallback).")

    def states(self) -> list[State]:
        return [t.state for t in self.path]


class EvidenceAnswer(_Model):
    """The output of `skillrag ask`: a conclusion bound to verbatim evidence, with risk signals."""

    question: str
    skill: str = "evidence-qa"
    harness: Literal["extractive", "llm"]
    model: str | None = None
    note: str | None = Field(None, description="Set when the extractive fallback produced the answer.")
    final_state: State
    subject: SubjectClass
    candidates: list[Candidate] = Field(default_factory=list)
    rejected_candidates: list[RejectedCandidate] = Field(default_factory=list)
    conclusion: str
    evidence: list[EvidenceUnit] = Field(default_factory=list)
    dropped_evidence: list[DroppedEvidence] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    confidence: Confidence
    confidence_reason: str
    sufficient: bool
    risk_signal: RiskSignal
    suggested_next_actions: list[str] = Field(default_factory=list)
    contract: ContractCheck | None = Field(None, description="None when no evidence step ran.")
    record: RunRecord
