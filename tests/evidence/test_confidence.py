import pytest

from skillrag.evidence.confidence import assess
from skillrag.evidence.model import Conflict, DroppedEvidence, EvidenceUnit, SubjectClass

SUBJ = SubjectClass(type="credit_card", name="Gold Card", attribute="annual fee")


def _u(aid, text="Annual fee: $95", section=None):
    return EvidenceUnit(
        article_id=aid, start=0, end=len(text), text=text, subject="Gold Card", section=section
    )


@pytest.mark.parametrize(
    ("units", "n_cands", "conflicts", "expected"),
    [
        ([], 1, [], ("low", False, "insufficient_evidence")),
        ([_u("a", "The fee is $95")], 1, [], ("low", False, "insufficient_evidence")),  # coverage 0.5
        ([_u("a", "Costs $95", section="Annual fee")], 1, [], ("medium", True, "none")),  # heading counts
        ([_u("a")], 1, [], ("medium", True, "none")),
        ([_u("a"), _u("a", "Annual fee is $95 per year")], 1, [], ("medium", True, "none")),  # one article
        ([_u("a"), _u("b")], 1, [], ("high", True, "none")),
        (
            [_u("a"), _u("b")],
            1,
            [Conflict(subject="Gold Card", attribute="annual fee", claims=[])],
            ("low", False, "conflict"),
        ),
        ([_u("a"), _u("b")], 2, [], ("low", False, "ambiguous_subject")),
    ],
)
def test_rule(units, n_cands, conflicts, expected):
    a = assess(SUBJ, n_cands, units, conflicts, [])
    assert (a.confidence, a.sufficient, a.risk_signal) == expected


def test_model_judgement_can_only_lower_sufficiency():
    a = assess(SUBJ, 1, [_u("a"), _u("b")], [], [], answered=False)
    assert (a.confidence, a.sufficient, a.risk_signal) == ("high", False, "insufficient_evidence")


def test_threshold_and_mismatch_signal():
    dropped = [
        DroppedEvidence(article_id="a", text="x", reason="subject mismatch: the span names 'Silver Card'")
    ]
    a = assess(SUBJ, 1, [_u("a")], [], dropped)
    assert (a.sufficient, a.risk_signal) == (True, "subject_mismatch")
    strict = assess(SUBJ, 1, [_u("a")], [], [], min_confidence="high")
    assert (strict.sufficient, strict.risk_signal) == (False, "insufficient_evidence")
