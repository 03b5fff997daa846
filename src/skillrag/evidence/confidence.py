"""The confidence rule: from value-bearing evidence, independence and conflicts, the same for
every harness.

* **answering claims** — claims (``verify.answering_claims``) that give a value of the asked
  attribute for the candidate: a verified unit whose attribute (its label, the words next to the
  value, its table's header or its section heading) holds every word of the question's attribute
  (``annual fee`` → {annual, fee}), with a value of a kind the attribute asks for
  (``text.value_kinds``: money or a percentage for a fee, a duration for a window, a data amount
  for data; any value when the attribute names no kind). The attribute's name alone
  ("data refueling (in GB)") is not a value.
* **coverage** — reported: 1.0 when an answering claim states the attribute, else the largest
  share of the attribute's words that one verified unit holds (its text plus its section heading);
  1.0 when the question asks no attribute (an existence question) and at least one unit was
  verified; 0.0 with no units.
* **independence** — the number of distinct articles among the answering claims (among the
  verified units for a question that asks no attribute).
* **conflicts** — groups of claims on one fact that disagree, found by code over every span of the
  candidates' articles that states the attribute (``verify.value_spans``), whatever a model cited.

Rule (first match wins):

=====================================================  ==========
condition                                              confidence
=====================================================  ==========
no verified evidence                                   low
an attribute is asked and no answering claim           low
any conflict                                           low
more than one candidate subject, or a parent entity    low
that names several organisations (ambiguous subject)
candidate list incomplete (more articles name the      low
subject than were examined), or more spans state the
attribute than the evidence limit keeps
independence ≥ 2, no conflict                          high
independence = 1, no conflict                          medium
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

from skillrag.evidence.mentions import stem_terms
from skillrag.evidence.model import (
    Claim,
    Confidence,
    Conflict,
    DroppedEvidence,
    EvidenceUnit,
    RiskSignal,
    SubjectClass,
)
from skillrag.evidence.verify import answering_claims, claims_from_units

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
    claims: Sequence[Claim] | None = None,
    ambiguous: Sequence[str] = (),
    evidence_complete: bool = True,
) -> Assessment:
    """Apply the rule in the module doc. ``answered`` is the model's judgement (always True for
    the extractive fallback, whose conclusion only restates the evidence); ``complete`` is False
    when more articles name the subject than the gate examined; ``claims`` are the units' claims
    (None: ``verify.claims_from_units`` of ``units``); ``ambiguous`` names the organisations a
    parent entity written without its suffix fits (two or more: ambiguous); ``evidence_complete``
    is False when more spans state the attribute than the evidence limit kept."""
    claims = claims_from_units(subject, units) if claims is None else claims
    answering = answering_claims(subject, claims, units)
    cov = 1.0 if answering else coverage(subject, units)
    indep = len({c.article_id for c in answering} if subject.attribute else {u.article_id for u in units})
    facts = f"coverage {cov:.2f}, {indep} independent article(s), {len(conflicts)} conflict(s)"
    n_subjects = max(n_candidates, len(ambiguous))
    if not units:
        conf: Confidence = "low"
        why = "no verified evidence"
    elif subject.attribute and not answering:
        conf, why = "low", f"no quoted span states a value of the {subject.attribute} ({facts})"
    elif conflicts:
        conf, why = "low", f"sources disagree ({facts})"
    elif len(ambiguous) > 1 and n_candidates <= 1:
        conf, why = "low", f"{subject.parent_entity!r} names {len(ambiguous)} organisations: {', '.join(ambiguous)} ({facts})"
    elif n_candidates > 1:
        conf, why = "low", f"{n_candidates} different subjects match the question ({facts})"
    elif not complete:
        conf, why = "low", f"the candidate list is incomplete: not every article naming the subject was examined ({facts})"
    elif not evidence_complete:
        conf, why = "low", f"more spans state the {subject.attribute} than the evidence limit keeps ({facts})"
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
    if n_subjects > 1:
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
