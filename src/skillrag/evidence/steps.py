"""What a reasoner proposes at each state; the runner's code validates every proposal.

A reasoner (``Reasoner``) is the one swappable part of the machine: ``extractive`` (patterns, no
model) or ``llm`` (a pydantic-ai model with structured outputs). Proposals carry quotes as plain
text; code locates them in the source, computes offsets and sections, and refuses what it cannot
verify. A reasoner never moves the state machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillrag.corpus.model import Article
from skillrag.evidence.model import EvidenceUnit, SubjectClass

__all__ = [
    "CandidateProposal",
    "ClaimProposal",
    "ConclusionProposal",
    "EvidenceProposal",
    "Reasoner",
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


class Reasoner(Protocol):
    """The extraction and judgement steps of the machine. ``name`` is ``extractive`` or ``llm``."""

    name: str
    model_id: str | None
    tokens: int

    def identify_subject(self, question: str) -> SubjectClass: ...

    def propose_candidates(
        self, question: str, subject: SubjectClass, pool: Sequence[Article]
    ) -> list[CandidateProposal]: ...

    def propose_evidence(
        self,
        question: str,
        subject: SubjectClass,
        candidate_names: Sequence[str],
        articles: Sequence[Article],
    ) -> list[EvidenceProposal]: ...

    def conclude(
        self,
        question: str,
        subject: SubjectClass,
        evidence: Sequence[EvidenceUnit],
        default: ConclusionProposal,
    ) -> ConclusionProposal: ...
