"""What a reasoner is given and what it proposes at each state; the runner's code validates every
proposal.

A reasoner (``Reasoner``) is the one swappable part of the machine: ``extractive`` (patterns, no
model) or ``llm`` (a pydantic-ai model with structured outputs). After the subject class, each
step's input is one value (``CandidateInput``, ``EvidenceInput``, ``ConclusionInput``: the question
and its checked subject class, plus what that state adds), built by the runner. Proposals carry
quotes as plain text; code locates them in the source, computes offsets and sections, and refuses
what it cannot verify. A reasoner never moves the state machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillrag.corpus.model import Article
from skillrag.evidence.model import EvidenceUnit, SubjectClass

__all__ = [
    "CandidateInput",
    "CandidateProposal",
    "ClaimProposal",
    "ConclusionInput",
    "ConclusionProposal",
    "EvidenceInput",
    "EvidenceProposal",
    "Reasoner",
    "StepInput",
]


class _P(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CandidateProposal(_P):
    """A subject found in one article, with the quotes that bind it to the parent entity."""

    name: str = Field(description="The subject's name as the article writes it.")
    article_id: str
    name_quote: str = Field(description="Verbatim text from the article's title or body naming the subject.")
    parent_quote: str | None = Field(
        None,
        description="Verbatim text from the article naming the parent entity; null if the question has none.",
    )


class EvidenceProposal(_P):
    """One verbatim span proposed as evidence, with the subject the proposer says it is about."""

    article_id: str
    text: str = Field(description="Copied verbatim from the article body (one sentence or list item).")
    subject: str = Field(
        description="Name of the subject this span is about, as written in the span or title."
    )
    why: str = ""


class ClaimProposal(_P):
    """A value one evidence unit states for an attribute (``value`` must occur in that unit)."""

    evidence_index: int = Field(ge=0)
    attribute: str
    value: str


class ConclusionProposal(_P):
    """The judgement at CONCLUDED: a conclusion from the verified evidence only."""

    conclusion: str = Field(min_length=1)
    answered: bool = Field(description="True only if the evidence states the answer to the question.")
    claims: list[ClaimProposal] = Field(default_factory=list)
    suggested_next_actions: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class StepInput:
    """What every step after SUBJECT_CLASS_IDENTIFIED is given: the question and its subject class,
    as the runner checked and bound it to the sources' names."""

    question: str
    subject: SubjectClass


@dataclass(frozen=True)
class CandidateInput(StepInput):
    """Candidate discovery: the searched articles (``pool``) that may name the subject."""

    pool: Sequence[Article]


@dataclass(frozen=True)
class EvidenceInput(StepInput):
    """Evidence retrieval: the names the gate bound and the candidates' articles to quote from."""

    candidate_names: Sequence[str]
    articles: Sequence[Article]


@dataclass(frozen=True)
class ConclusionInput(StepInput):
    """The conclusion: the verified evidence units and the code-built conclusion (``default``), which
    a reasoner that does not judge returns as it is."""

    evidence: Sequence[EvidenceUnit]
    default: ConclusionProposal


class Reasoner(Protocol):
    """The extraction and judgement steps of the machine. ``name`` is ``extractive`` or ``llm``."""

    name: str
    model_id: str | None
    tokens: int

    def identify_subject(self, question: str) -> SubjectClass: ...

    def propose_candidates(self, step: CandidateInput) -> list[CandidateProposal]: ...

    def propose_evidence(self, step: EvidenceInput) -> list[EvidenceProposal]: ...

    def conclude(self, step: ConclusionInput) -> ConclusionProposal: ...
