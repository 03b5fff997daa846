"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

``score(d) = Σ_r w_r / (k + rank_r(d))`` with 1-based ranks; a document absent from a ranking gets
nothing from it. Ties are broken by the order of first appearance (earlier ranking, better rank).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["reciprocal_rank_fusion"]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hashable]],
    *,
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of ids into one: ``[(id, fused score)]``, best first.

    ``rankings``: each a list of ids, best first (duplicates after the first are ignored).
    ``k``: the RRF constant (≥ 1). ``weights``: one per ranking (default all 1.0).
    Raises ``ValueError`` if the weights do not match the rankings or ``k`` < 1.
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[Hashable, float] = {}
    order: dict[Hashable, tuple[int, int]] = {}
    for r, (ranking, w) in enumerate(zip(rankings, weights, strict=True)):
        seen: set[Hashable] = set()
        for pos, item in enumerate(ranking):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + w / (k + pos + 1)
            order.setdefault(item, (pos, r))
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
