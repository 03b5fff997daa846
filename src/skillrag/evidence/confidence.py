"""The confidence rule: from coverage, independence and conflicts, the same for every harness.

* **coverage** — the largest share of the question's attribute words (``annual fee`` → {annual,
  fee}) that one verified evidence unit holds (its text plus its section heading); 1.0 when the question asks no attribute (an
  existence question) and at least one unit was verified; 0.0 with no units.
* **independence** — the number of distinct articles among the verified units.
* **conflicts** — groups of claims on one fact that disagree.

Rule (first match wins):

=====================================================  ==========
condition                                              confidence
=====================================================  ==========
no verified evidence, or coverage < 1                  low
any conflict                                           low
more than one candidate subject (ambiguous subject)    low
candidate list incomplete (more articles name the      low
subject than were examined)
coverage = 1, independence ≥ 2, no conflict            high
coverage = 1, independence = 1, no conflict           medium
=====================================================  ==========

Spans dropped for naming another subject or scope (``subject_mismatch``) cap the confidence at
``medium``: an answer is never ``high`` while some of what was retrieved was about something else.

``sufficient`` is true when confidence reaches ``min_confidence`` (default ``medium``) and, with a
model, the model judged that the evidence answers the question. The risk signal is the most
serious finding: ``subject_not_found`` > ``ambiguous_subject`` > ``conflict`` >
``insufficient_evidence`` > ``subject_mismatch`` (spans were dropped for subject drift) > ``none``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skillrag.evidence.model import (
    Confidence,
    Conflict,
    DroppedEvidence,
    EvidenceUnit,
    RiskSignal,
    SubjectClass,
)
from skillrag.evidence.text import stem_terms

__all__ = ["LEVELS", "Assessment", "assess", "coverage"]

LEVELS: dict[str, int] = {"low": 0, "medium": 1, "high": 2}


def coverage(subject: SubjectClass, units: Sequence[EvidenceUnit]) -> float:
    """Share (0..1) of the attribute's words held by the best single unit (module doc)."""
    if not units:
        return 0.0
    attr = stem_terms(subject.attribute)
    if not attr:
        return 1.0
    return max(len(attr & (stem_terms(u.text) | stem_terms(u.section))) / len(attr) for u in units)


@dataclass(frozen=True)
class Assessment:
    confidence: Confidence
    reason: str
    sufficient: bool
    risk_signal: RiskSignal
    coverage: float
    independence: int


def assess(
    subject: SubjectClass,
    n_candidates: int,
    units: Sequence[EvidenceUnit],
    conflicts: Sequence[Conflict],
    dropped: Sequence[DroppedEvidence],
    *,
    answered: bool = True,
    min_confidence: Confidence = "medium",
    complete: bool = True,
) -> Assessment:
    """Apply the rule in the module doc. ``answered`` is the model's judgement (always True for
    the extractive fallback, whose conclusion only restates the evidence); ``complete`` is False
    when more articles name the subject than the gate examined."""
    cov = coverage(subject, units)
    indep = len({u.article_id for u in units})
    facts = f"coverage {cov:.2f}, {indep} independent article(s), {len(conflicts)} conflict(s)"
    if not units:
        conf: Confidence = "low"
        why = "no verified evidence"
    elif cov < 1.0:
        conf, why = "low", f"no single unit states the whole attribute ({facts})"
    elif conflicts:
        conf, why = "low", f"sources disagree ({facts})"
    elif n_candidates > 1:
        conf, why = "low", f"{n_candidates} different subjects match the question ({facts})"
    elif not complete:
        conf, why = "low", f"the candidate list is incomplete: not every article naming the subject was examined ({facts})"
    elif indep >= 2:
        conf, why = "high", facts
    else:
        conf, why = "medium", f"a single source ({facts})"
    mismatch = any(d.reason.startswith(("subject", "scope")) for d in dropped)
    if mismatch and conf == "high":
        conf, why = "medium", f"{why}; capped at medium: retrieved spans about another subject or scope were dropped"
    sufficient = LEVELS[conf] >= LEVELS[min_confidence] and answered
    if not answered and units:
        why += "; the model judged that the evidence does not answer the question"
    if n_candidates > 1:
        risk: RiskSignal = "ambiguous_subject"
    elif conflicts:
        risk = "conflict"
    elif not sufficient:
        risk = "insufficient_evidence"
    elif mismatch:
        risk = "subject_mismatch"
    else:
        risk = "none"
    return Assessment(conf, why, sufficient, risk, cov, indep)
