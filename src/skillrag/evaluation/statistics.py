"""Paired statistics for pass/fail outcomes: Wilson intervals, exact McNemar tests, paired deltas.

Every figure comes from a scipy call, not a hand-rolled formula:

- Wilson score interval (Wilson, 1927) via ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``.
- Exact two-sided McNemar test (McNemar, 1947) as the binomial test on the discordant pairs:
  ``binomtest(b, b + c, 0.5)``; the exact form is the right one at the small discordance counts
  an evaluation of a few hundred cases produces (the asymptotic chi-square is not used).

Rates are fractions in ``[0, 1]``; ``*_pct`` properties give percentages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import binomtest, wilcoxon

from skillrag.errors import EmptyInputError, UserError

__all__ = [
    "McNemarResult",
    "PairedComparison",
    "RateInterval",
    "discordant_pairs",
    "mcnemar_exact",
    "paired_comparison",
    "wilson_interval",
]


class RateInterval(BaseModel):
    """A pass rate ``k/n`` with its Wilson confidence interval (fractions in [0, 1])."""

    model_config = ConfigDict(frozen=True)

    k: int = Field(ge=0, description="Cases that passed.")
    n: int = Field(ge=0, description="Cases scored (the denominator).")
    rate: float | None = Field(description="k / n, or None when n is 0.")
    low: float | None = Field(description="Lower bound of the interval, fraction.")
    high: float | None = Field(description="Upper bound of the interval, fraction.")
    confidence: float = Field(0.95, description="Confidence level of the interval.")

    @property
    def rate_pct(self) -> float | None:
        return None if self.rate is None else 100.0 * self.rate

    def format(self, digits: int = 1) -> str:
        """``"110/132 83.3% [76.1, 88.7]"``; ``"0/0 n/a"`` when nothing was scored."""
        if self.rate is None or self.low is None or self.high is None:
            return f"{self.k}/{self.n} n/a"
        return (
            f"{self.k}/{self.n} {100 * self.rate:.{digits}f}% "
            f"[{100 * self.low:.{digits}f}, {100 * self.high:.{digits}f}]"
        )


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> RateInterval:
    """Wilson score interval for ``k`` passes out of ``n``.

    ``n == 0`` gives a ``RateInterval`` whose rate and bounds are ``None`` (nothing to estimate).
    Raises ``UserError`` when ``k`` is outside ``[0, n]`` or ``confidence`` outside ``(0, 1)``.
    """
    if n < 0 or k < 0 or k > n:
        raise UserError(f"wilson_interval: need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise UserError(f"wilson_interval: confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return RateInterval(k=0, n=0, rate=None, low=None, high=None, confidence=confidence)
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return RateInterval(k=k, n=n, rate=k / n, low=float(ci.low), high=float(ci.high), confidence=confidence)


class McNemarResult(BaseModel):
    """Exact two-sided McNemar test on discordant pairs.

    ``b``: cases the reference passes and the arm fails; ``c``: the reverse.
    ``p_value`` is 1.0 when there are no discordant pairs (no evidence of a difference).
    """

    model_config = ConfigDict(frozen=True)

    b: int = Field(ge=0)
    c: int = Field(ge=0)
    p_value: float = Field(ge=0, le=1)

    @property
    def discordant(self) -> int:
        return self.b + self.c


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Exact two-sided McNemar p-value: ``binomtest(b, b + c, 0.5)``. Raises ``UserError`` if b or c < 0."""
    if b < 0 or c < 0:
        raise UserError(f"mcnemar_exact: discordant counts must be >= 0, got b={b}, c={c}")
    if b + c == 0:
        return McNemarResult(b=0, c=0, p_value=1.0)
    p = float(binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)
    return McNemarResult(b=b, c=c, p_value=min(1.0, p))


def discordant_pairs(reference: Mapping[str, bool], arm: Mapping[str, bool]) -> tuple[int, int, int]:
    """``(b, c, n_paired)`` over the case ids both mappings score.

    ``b`` counts cases where ``reference`` is True and ``arm`` False, ``c`` the reverse.
    """
    shared = sorted(set(reference) & set(arm))
    b = sum(1 for cid in shared if reference[cid] and not arm[cid])
    c = sum(1 for cid in shared if arm[cid] and not reference[cid])
    return b, c, len(shared)


class PairedComparison(BaseModel):
    """An arm against the reference arm on the cases both scored."""

    model_config = ConfigDict(frozen=True)

    n_paired: int = Field(description="Cases scored by both arms.")
    reference: RateInterval = Field(description="Reference arm's rate on the paired cases.")
    arm: RateInterval = Field(description="This arm's rate on the paired cases.")
    delta: float | None = Field(description="Mean paired difference arm - reference, fraction (= (c - b) / n).")
    test: McNemarResult

    @property
    def delta_pp(self) -> float | None:
        """Paired difference in percentage points."""
        return None if self.delta is None else 100.0 * self.delta


def paired_comparison(
    reference: Mapping[str, bool] | Sequence[bool], arm: Mapping[str, bool] | Sequence[bool]
) -> PairedComparison:
    """Compare per-case outcomes of ``arm`` with ``reference`` (dicts keyed by case id, or equal-length lists).

    The delta is the mean paired difference ``arm - reference`` (= ``(c - b) / n``), the McNemar test is
    exact and two-sided. Raises ``UserError`` for lists of unequal length and ``EmptyInputError``
    when no case is shared.
    """
    if not isinstance(reference, Mapping) or not isinstance(arm, Mapping):
        if isinstance(reference, Mapping) or isinstance(arm, Mapping):
            raise UserError("paired_comparison: pass two mappings or two sequences, not a mix")
        if len(reference) != len(arm):
            raise UserError(f"paired_comparison: {len(reference)} reference outcomes vs {len(arm)} arm outcomes")
        reference = {str(i): bool(v) for i, v in enumerate(reference)}
        arm = {str(i): bool(v) for i, v in enumerate(arm)}
    b, c, n = discordant_pairs(reference, arm)
    if n == 0:
        raise EmptyInputError("paired_comparison: the two arms share no scored case")
    shared = set(reference) & set(arm)
    k_ref = sum(1 for cid in shared if reference[cid])
    k_arm = sum(1 for cid in shared if arm[cid])
    return PairedComparison(
        n_paired=n,
        reference=wilson_interval(k_ref, n),
        arm=wilson_interval(k_arm, n),
        delta=(c - b) / n,
        test=mcnemar_exact(b, c),
    )


class PairedDelta(BaseModel):
    """Mean paired difference of a per-case score (e.g. a recall) between an arm and the reference,
    with the two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon`` on the non-zero differences:
    exact without ties, normal approximation with tie correction otherwise)."""

    model_config = ConfigDict(frozen=True)

    n_paired: int
    reference_mean: float
    arm_mean: float
    mean_delta: float = Field(description="Mean of arm - reference over paired cases (same unit as the score).")
    n_nonzero: int = Field(description="Cases whose difference is not zero.")
    p_value: float | None = Field(description="Wilcoxon signed-rank p; None when every difference is zero.")


def paired_delta(reference: Mapping[str, float], arm: Mapping[str, float]) -> PairedDelta:
    """Paired difference of per-case scores over the case ids both mappings hold.

    Raises ``EmptyInputError`` when no case is shared.
    """
    shared = sorted(set(reference) & set(arm))
    if not shared:
        raise EmptyInputError("paired_delta: the two arms share no scored case")
    ref = [float(reference[c]) for c in shared]
    new = [float(arm[c]) for c in shared]
    diffs = [b - a for a, b in zip(ref, new, strict=True)]
    nonzero = sum(1 for d in diffs if d != 0)
    p = None
    if nonzero:
        # exact null distribution without ties (n <= 50), else the normal approximation with tie
        # correction; scipy's "auto" would fall back to a slow permutation test on small tied samples
        mags = [round(abs(d), 12) for d in diffs if d != 0]
        method = "exact" if len(set(mags)) == len(mags) and len(mags) <= 50 else "asymptotic"
        nz_new = [b for a, b in zip(ref, new, strict=True) if b != a]
        nz_ref = [a for a, b in zip(ref, new, strict=True) if b != a]
        p = float(wilcoxon(nz_new, nz_ref, alternative="two-sided", method=method).pvalue)
    n = len(shared)
    return PairedDelta(n_paired=n, reference_mean=sum(ref) / n, arm_mean=sum(new) / n,
                       mean_delta=sum(diffs) / n, n_nonzero=nonzero, p_value=p)
