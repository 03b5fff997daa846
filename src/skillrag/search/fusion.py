"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): the one implementation.

``score(d) = Σ_r w_r / (k + rank_r(d))`` with 1-based ranks; a document absent from a ranking gets
nothing from it. Ties are broken by the order of first appearance (earlier ranking, better rank).
Every fusion of the package goes through here with ``search.rrf_k``: the hybrid retriever (BM25 +
dense), the wiki backend's page rank + article rank, and the extractive harness's queries.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

__all__ = ["Ranking", "reciprocal_rank_fusion"]

#: One ranking: ids best first (``None`` holds a place without scoring: an item the caller leaves
#: out but whose rank still counts for the ones below it), or ``id -> 0-based rank`` where several
#: ids may share a rank (the articles of one navigation page).
Ranking = Sequence[Hashable | None] | Mapping[Hashable, int]


def _positions(ranking: Ranking) -> list[tuple[Hashable, int]]:
    if isinstance(ranking, Mapping):
        return list(ranking.items())
    return [(item, pos) for pos, item in enumerate(ranking) if item is not None]


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking],
    *,
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse rankings of ids into one: ``[(id, fused score)]``, best first.

    ``rankings``: each a list of ids, best first (duplicates after the first are ignored), or a
    mapping ``id -> 0-based rank`` (see ``Ranking``). ``k``: the RRF constant (≥ 1), ``search.rrf_k``
    for the package's own fusions. ``weights``: one per ranking (default all 1.0).
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
        for item, pos in _positions(ranking):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + w / (k + pos + 1)
            order.setdefault(item, (pos, r))
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
