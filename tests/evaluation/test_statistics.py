"""The statistics reproduce the paper's tables (Table 1, 3, 5)."""

import pytest

from skillrag.errors import EmptyInputError, UserError
from skillrag.evaluation.statistics import mcnemar_exact, paired_comparison, wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "rate", "low", "high"),
    [
        (110, 132, 83.3, 76.1, 88.7),
        (131, 132, 99.2, 95.8, 99.9),
        (79, 132, 59.8, 51.3, 67.8),
        (103, 132, 78.0, 70.2, 84.2),
        (104, 132, 78.8, 71.1, 84.9),
        (101, 132, 76.5, 68.6, 82.9),
        (107, 132, 81.1, 73.5, 86.8),
    ],
)
def test_wilson_reproduces_paper(k, n, rate, low, high):
    ci = wilson_interval(k, n)
    assert round(ci.rate_pct, 1) == rate
    assert (round(100 * ci.low, 1), round(100 * ci.high, 1)) == (low, high)


def test_wilson_format_and_edges():
    assert wilson_interval(110, 132).format() == "110/132 83.3% [76.1, 88.7]"
    empty = wilson_interval(0, 0)
    assert empty.rate is None and empty.format() == "0/0 n/a"
    full = wilson_interval(5, 5)
    assert full.high == pytest.approx(1.0) and full.low < 1.0
    with pytest.raises(UserError):
        wilson_interval(6, 5)
    with pytest.raises(UserError):
        wilson_interval(1, 5, confidence=1.5)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(15, 6, 0.078), (15, 8, 0.210), (13, 7, 0.263), (14, 8, 0.286), (11, 8, 0.648), (14, 7, 0.189)],
)
def test_mcnemar_reproduces_paper(b, c, p):
    res = mcnemar_exact(b, c)
    assert round(res.p_value, 3) == p
    # symmetric in b and c (two-sided)
    assert mcnemar_exact(c, b).p_value == pytest.approx(res.p_value)


def test_mcnemar_edges():
    assert mcnemar_exact(0, 0).p_value == 1.0
    assert mcnemar_exact(10, 0).p_value == pytest.approx(2 * 0.5**10)
    with pytest.raises(UserError):
        mcnemar_exact(-1, 2)


def test_paired_comparison_reconstructs_table5_row():
    # merged-entities arm: 110/132 full system, b=15 (full passes, arm fails), c=6 → arm 101/132
    ref, arm = {}, {}
    for i in range(132):
        cid = f"c{i}"
        if i < 15:
            ref[cid], arm[cid] = True, False
        elif i < 21:
            ref[cid], arm[cid] = False, True
        elif i < 21 + 95:
            ref[cid], arm[cid] = True, True
        else:
            ref[cid], arm[cid] = False, False
    cmp = paired_comparison(ref, arm)
    assert cmp.n_paired == 132
    assert (cmp.reference.k, cmp.arm.k) == (110, 101)
    assert round(cmp.delta_pp, 1) == -6.8
    assert (cmp.test.b, cmp.test.c, round(cmp.test.p_value, 3)) == (15, 6, 0.078)
    assert cmp.arm.format() == "101/132 76.5% [68.6, 82.9]"


def test_paired_comparison_lists_and_errors():
    cmp = paired_comparison([True, True, False, False], [True, False, True, True])
    assert (cmp.test.b, cmp.test.c) == (1, 2)
    assert cmp.delta == pytest.approx(0.25)
    with pytest.raises(UserError):
        paired_comparison([True], [True, False])
    with pytest.raises(EmptyInputError):
        paired_comparison({"a": True}, {"b": True})
    # only shared case ids are paired
    cmp = paired_comparison({"a": True, "b": False}, {"b": True, "z": False})
    assert cmp.n_paired == 1 and (cmp.test.b, cmp.test.c) == (0, 1)


def test_paired_delta_wilcoxon():
    from scipy.stats import wilcoxon

    from skillrag.evaluation.statistics import paired_delta

    ref = {"a": 0.5, "b": 0.2, "c": 1.0, "d": 0.3, "e": 0.1, "f": 0.4}
    arm = {"a": 0.7, "b": 0.2, "c": 0.5, "d": 0.6, "e": 0.4, "g": 0.9}
    d = paired_delta(ref, arm)
    assert d.n_paired == 5 and d.n_nonzero == 4
    assert d.mean_delta == pytest.approx((0.2 + 0 - 0.5 + 0.3 + 0.3) / 5)
    shared = [c for c in sorted(set(ref) & set(arm)) if ref[c] != arm[c]]
    # |differences| 0.2, 0.5, 0.3, 0.3 tie → normal approximation
    want = wilcoxon([arm[c] for c in shared], [ref[c] for c in shared], method="asymptotic").pvalue
    assert d.p_value == pytest.approx(want)
    same = paired_delta({"a": 0.5}, {"a": 0.5})
    assert same.p_value is None and same.mean_delta == 0
    with pytest.raises(EmptyInputError):
        paired_delta({"a": 1.0}, {"b": 1.0})
