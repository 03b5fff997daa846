"""The retriever's rankings, computed only as deep as they are read.

An in-memory engine scores every item (``ScoringIndex``); sorting them all to report a hit's ranks
costs a full sort per ranking and per query. Here nothing is sorted beyond what is read:

* the head (the best ``m`` ranked items) is ``top_k``: an ``argpartition`` (O(n)) and a sort of the
  ``m``; a single-retriever order read further is extended (4× deeper each time);
* an item's rank is its 1-based position in the stable full sort (best score first, ties in item
  order): 1 + the number of ranked items scoring strictly higher + the tied ones at a lower item
  index, counted in O(n) for an item past the head;
* the median dense score (for the normalised score) is ``np.median``, a partition (O(n)).

An engine on a server hands over only its head (the fusion depth): items past it have no rank there,
and the median is taken over the head. Either way every value equals what a full sort of every
ranked item gives (``tests/search/test_ranked.py`` compares them on ties and filters).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from skillrag.search.engines import Ranking, top_k
from skillrag.search.fusion import reciprocal_rank_fusion

__all__ = ["RELEVANCE_DIGITS", "TIE_TOLERANCE", "Ranked", "RetrieverRanking", "relative_scores"]

#: Depth a single-retriever order is first read to; each further read goes 4× deeper.
FIRST_DEPTH = 64


class RetrieverRanking:
    """One retriever's ranking (BM25 or dense) of the items it ranks.

    Build with ``scored`` (every item's score in memory: the ranked items are ``cand``) or ``cut``
    (the best items only, as an engine on a server returns them). ``unranked``: the score an item
    outside the ranking counts with in a normalised score (BM25 0, dense −1).
    """

    def __init__(self, n: int, unranked: float, head: Ranking, scores: np.ndarray | None = None,
                 cand: np.ndarray | None = None) -> None:
        self.n = n
        self.unranked = unranked
        self._idx, self._sc = head
        self._scores = scores  # (n,) float32, every item's score; None: only the head is known
        self._cand = cand  # increasing item indices ranked; None with scores: every item
        self._cand_scores: np.ndarray | None = None
        self._pos: dict[int, int] | None = None
        self._median: float | None = None

    @classmethod
    def scored(cls, scores: np.ndarray, cand: np.ndarray | None, unranked: float,
               depth: int | None = None) -> RetrieverRanking:
        """From ``(n,)`` float32 ``scores`` of every item; ``cand``: the ranked items (increasing
        indices; None: all). ``depth``: the head to select now (more is selected when read)."""
        r = cls(len(scores), unranked, (np.zeros(0, np.int64), np.zeros(0, np.float32)), scores, cand)
        if depth:
            r.head(depth)
        return r

    @classmethod
    def cut(cls, n: int, ranking: Ranking, unranked: float) -> RetrieverRanking:
        """From an engine's best items ``(indices, scores)``, best first: all that is ranked."""
        return cls(n, unranked, ranking)

    def __len__(self) -> int:
        """How many items are ranked."""
        if self._scores is None:
            return len(self._idx)
        return self.n if self._cand is None else len(self._cand)

    def head(self, m: int | None) -> Ranking:
        """The best ``m`` ranked items (None: all) as ``(indices int64, scores float32)``."""
        want = len(self) if m is None else min(m, len(self))
        if self._scores is not None and len(self._idx) < want:
            cand = np.arange(self.n) if self._cand is None else self._cand
            self._idx, self._sc = top_k(self._scores, cand, want)
            self._pos = None
        return self._idx[:want], self._sc[:want]

    def top(self) -> float:
        """The best score (0.0 when nothing is ranked)."""
        _, sc = self.head(1)
        return float(sc[0]) if len(sc) else 0.0

    def median(self) -> float:
        """The median score of the ranked items (0.0 when nothing is ranked)."""
        if self._median is None:
            if not len(self):
                self._median = 0.0
            elif self._scores is None:
                self._median = float(np.median(self._sc))
            else:
                self._median = float(np.median(self._ranked_scores()))
        return self._median

    def values(self, items: np.ndarray) -> np.ndarray:
        """``(len(items),)`` float32: each item's score if it is ranked, else ``unranked``."""
        items = np.asarray(items, dtype=np.int64)
        out = np.full(len(items), self.unranked, dtype=np.float32)
        if self._scores is None:
            pos = self._positions()
            for j, i in enumerate(items.tolist()):
                p = pos.get(i)
                if p is not None:
                    out[j] = self._sc[p]
            return out
        ok = self._is_ranked(items)
        out[ok] = self._scores[items[ok]]
        return out

    def ranks(self, items: np.ndarray) -> np.ndarray:
        """``(len(items),)`` int64: each item's 1-based rank, 0 when it is not ranked."""
        items = np.asarray(items, dtype=np.int64)
        out = np.zeros(len(items), dtype=np.int64)
        pos = self._positions()
        ranked = self._is_ranked(items) if self._scores is not None else None
        for j, i in enumerate(items.tolist()):
            p = pos.get(i)
            if p is not None:
                out[j] = p + 1
            elif ranked is not None and ranked[j]:
                out[j] = self._count_rank(i)
        return out

    # -- internals ---------------------------------------------------------------------------------
    def _positions(self) -> dict[int, int]:
        if self._pos is None:
            self._pos = {i: p for p, i in enumerate(self._idx.tolist())}
        return self._pos

    def _is_ranked(self, items: np.ndarray) -> np.ndarray:
        if self._cand is None:
            return (items >= 0) & (items < self.n)
        at = np.searchsorted(self._cand, items)
        ok = at < len(self._cand)
        ok[ok] = self._cand[at[ok]] == items[ok]
        return ok

    def _ranked_scores(self) -> np.ndarray:
        if self._cand_scores is None:
            assert self._scores is not None
            self._cand_scores = self._scores if self._cand is None else self._scores[self._cand]
        return self._cand_scores

    def _count_rank(self, i: int) -> int:
        """Position of ranked item ``i`` in the stable full sort, without sorting: O(n)."""
        assert self._scores is not None
        s = self._ranked_scores()
        v = self._scores[i]
        before = i if self._cand is None else int(np.searchsorted(self._cand, i))  # ranked items below i
        return 1 + int(np.count_nonzero(s > v)) + int(np.count_nonzero(s[:before] == v))


class Ranked:
    """The ranking under a retriever's mode: one retriever's order (``bm25`` / ``dense``) or the
    reciprocal rank fusion of the best ``fusion_depth`` of each (``hybrid``), with each item's BM25
    and dense ranks and its normalised score, computed for the items asked about.

    ``weights``: ``(bm25, dense)``; ``rrf_k``: the fusion constant. Iterating yields ``(item index,
    score)`` best first: the retriever's score (BM25 or cosine) or the fused score.
    """

    def __init__(self, bm25: RetrieverRanking | None, dense: RetrieverRanking | None, *,
                 weights: tuple[float, float], rrf_k: int, fusion_depth: int) -> None:
        if bm25 is None and dense is None:
            raise ValueError("a ranking needs at least one retriever")
        self.bm25 = bm25
        self.dense = dense
        self.weights = weights
        self._fused: list[tuple[int, float]] | None = None
        #: the one retriever of a bm25 or dense ranking (``bm25 or dense`` would test emptiness)
        self._single: RetrieverRanking = bm25 if bm25 is not None else dense  # type: ignore[assignment]
        if bm25 is not None and dense is not None:
            fused = reciprocal_rank_fusion([bm25.head(fusion_depth)[0].tolist(), dense.head(fusion_depth)[0].tolist()],
                                           k=rrf_k, weights=list(weights))
            self._fused = [(int(i), float(s)) for i, s in fused]

    def head(self, m: int | None) -> list[tuple[int, float]]:
        """The best ``m`` as ``(item index, score)`` (None: all)."""
        if self._fused is not None:
            return self._fused[:m]
        idx, sc = self._single.head(m)
        return list(zip(idx.tolist(), sc.tolist(), strict=True))

    def __iter__(self) -> Iterator[tuple[int, float]]:
        if self._fused is not None:
            yield from self._fused
            return
        start, m = 0, FIRST_DEPTH
        while True:
            idx, sc = self._single.head(m)
            yield from zip(idx[start:].tolist(), sc[start:].tolist(), strict=True)
            if len(idx) < m:
                return
            start, m = len(idx), 4 * m

    def ranks(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(bm25 ranks, dense ranks)`` of ``items``, each ``(len(items),)`` int64, 1-based, 0 = not ranked."""
        items = np.asarray(items, dtype=np.int64)
        zero = np.zeros(len(items), dtype=np.int64)
        return (self.bm25.ranks(items) if self.bm25 is not None else zero,
                self.dense.ranks(items) if self.dense is not None else zero)

    def norm(self, items: np.ndarray) -> np.ndarray:
        """``(len(items),)`` float32 normalised scores: the weighted mean of the BM25 score over the best
        one and the cosine rescaled from the ranked items' median (0) to their best (1), clipped to 0–1."""
        items = np.asarray(items, dtype=np.int64)
        m = len(items)
        parts: list[tuple[float, np.ndarray]] = []
        if self.bm25 is not None:
            b = self.bm25.values(items)
            top = self.bm25.top()
            parts.append((self.weights[0], np.clip(b / top, 0.0, 1.0) if top > 0 else np.zeros(m, np.float32)))
        if self.dense is not None:
            d = self.dense.values(items)
            if len(self.dense):
                top, mid = self.dense.top(), self.dense.median()
                span = top - mid
                nd = np.clip((d - mid) / span, 0.0, 1.0) if span > 1e-9 else (d >= top).astype(np.float32)
            else:
                nd = np.zeros(m, np.float32)
            parts.append((self.weights[1], nd))
        total_w = sum(w for w, _ in parts) or 1.0
        return sum(w * p for w, p in parts) / total_w  # type: ignore[return-value]

    def norm_of(self, i: int) -> float:
        """The normalised score of item ``i``."""
        return float(self.norm(np.array([i], dtype=np.int64))[0])


#: Two ordering scores closer than this (relative) are a tie: the same fused ranks summed in another
#: order may differ in the last bits of a float.
TIE_TOLERANCE = 1e-12
#: Decimals ``relevance`` is shown with; more only where fewer would show two different scores as equal.
RELEVANCE_DIGITS = 3
_MAX_DIGITS = 12


def relative_scores(scores: list[float], floor: float) -> list[float]:
    """The ``relevance`` of hits ordered by ``scores`` (best first): each score's distance above
    ``floor`` (the least a candidate can score: 0 for a fused or BM25 score, −1 for a cosine) as a
    fraction of the first's, so the first is 1.0 and every value follows the order.

    Values are rounded to ``RELEVANCE_DIGITS`` decimals, or more where two neighbouring scores differ by
    less than that shows (up to 12): each value gets as many as it takes for the gap to each neighbour to
    exceed one unit of the last decimal, so whatever the rounding a lower score shows lower. Scores that
    tie (within ``TIE_TOLERANCE``) show one value."""
    if not scores:
        return []
    top = scores[0] - floor
    groups: list[list[int]] = []  # runs of tied scores, best first
    for i, s in enumerate(scores):
        prev = scores[i - 1] if i else None
        if prev is not None and abs(prev - s) <= TIE_TOLERANCE * max(abs(prev), abs(s), 1e-300):
            groups[-1].append(i)
        else:
            groups.append([i])
    value = [(scores[g[0]] - floor) / top if top > 0 else 1.0 for g in groups]
    digits = [RELEVANCE_DIGITS] * len(groups)
    for j in range(1, len(groups)):
        d = RELEVANCE_DIGITS
        while d < _MAX_DIGITS and value[j - 1] - value[j] <= 10.0 ** -d:
            d += 1
        digits[j - 1] = max(digits[j - 1], d)
        digits[j] = max(digits[j], d)
    out = [0.0] * len(scores)
    for j, g in enumerate(groups):
        shown = 1.0 if j == 0 else round(value[j], digits[j])
        for i in g:
            out[i] = shown
    return out
