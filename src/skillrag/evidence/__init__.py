"""Evidence-first answers: a strict state machine with a hard subject gate, entity binding,
verified evidence units, conflicts surfaced (never arbitrated) and sufficiency signals.

    >>> from skillrag.evidence import ask
    >>> answer = ask(ws, "What is the annual fee of Rho-Bank's Gold Rewards Card?")
    >>> answer.final_state, answer.sufficient, answer.risk_signal

``answer_question`` runs the machine over any list of articles with any ``Reasoner``
(``ExtractiveReasoner``: no model; ``LLMReasoner``: a pydantic-ai model). Test doubles live in
``skillrag.evidence.testing``.
"""

from skillrag.evidence.confidence import assess, coverage
from skillrag.evidence.extractive import FALLBACK_NOTE, ExtractiveReasoner, extract_subject
from skillrag.evidence.llm import LLMReasoner
from skillrag.evidence.machine import ALLOWED, TERMINAL, State, StateMachine, Transition
from skillrag.evidence.model import (
    Binding,
    Candidate,
    Claim,
    Conflict,
    ContractCheck,
    DroppedEvidence,
    EvidenceAnswer,
    EvidenceUnit,
    Quote,
    RejectedCandidate,
    RunRecord,
    Scope,
    StepLog,
    SubjectClass,
)
from skillrag.evidence.report import format_answer
from skillrag.evidence.run import EvidenceSettings, answer_question, ask, contract_output, save_answer
from skillrag.evidence.steps import (
    CandidateInput,
    CandidateProposal,
    ClaimProposal,
    ConclusionInput,
    ConclusionProposal,
    EvidenceInput,
    EvidenceProposal,
    Reasoner,
    StepInput,
)

__all__ = [
    "ALLOWED",
    "FALLBACK_NOTE",
    "TERMINAL",
    "Binding",
    "Candidate",
    "CandidateInput",
    "CandidateProposal",
    "Claim",
    "ClaimProposal",
    "ConclusionInput",
    "ConclusionProposal",
    "Conflict",
    "ContractCheck",
    "DroppedEvidence",
    "EvidenceAnswer",
    "EvidenceInput",
    "EvidenceProposal",
    "EvidenceSettings",
    "EvidenceUnit",
    "ExtractiveReasoner",
    "LLMReasoner",
    "Quote",
    "Reasoner",
    "RejectedCandidate",
    "RunRecord",
    "Scope",
    "State",
    "StateMachine",
    "StepInput",
    "StepLog",
    "SubjectClass",
    "Transition",
    "answer_question",
    "ask",
    "assess",
    "contract_output",
    "coverage",
    "extract_subject",
    "format_answer",
    "save_answer",
]
