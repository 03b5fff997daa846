"""Test doubles for the search package: a deterministic embedder, a fake navigation layer, and the
retriever's ranking computed by full sorts (the reference the lazy ranking is checked and timed against)."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skillrag.errors import UserError
from skillrag.search.embedders._base import l2_normalize

__all__ = ["FakePage", "FakePageSource", "FullSortRanked", "HashEmbedder", "full_sort_rank", "full_sort_retriever"]

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic bag-of-words vectors: each lower-cased word hashed (blake2b) to one of ``dim``
    signed buckets, rows L2-normalised. Texts sharing words are similar; no model, no randomness.

    ``calls`` counts ``embed`` calls and ``texts_embedded`` the texts they carried (to test caching).
    """

    def __init__(self, dim: int = 64, *, salt: str = "") -> None:
        self._dim = dim
        self.salt = salt
        self.id = f"hash:{dim}{':' + salt if salt else ''}"
        self.calls = 0
        self.texts_embedded: list[str] = []

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls += 1
        self.texts_embedded.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in _WORD.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b((self.salt + w).encode(), digest_size=8).digest(), "little")
                out[i, h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        return l2_normalize(out)


@dataclass
class FakePage:
    """Stands in for ``skillrag.wiki.Page``: ``id``, ``title``, ``kind``, ``intent``, ``search_text()``,
    ``article_ids()``."""

    id: str
    title: str
    text: str
    cites: list[str] = field(default_factory=list)
    kind: str = "topic"
    intent: str = ""

    def search_text(self) -> str:
        return self.text

    def article_ids(self) -> list[str]:
        return list(dict.fromkeys(self.cites))


class FakePageSource:
    """A navigation layer held in memory; pass it as ``pages=`` to ``build_index``/``open_retriever``.

    ``pages=None`` means "no layer" (as a workspace without ``skillrag wiki build``).
    """

    def __init__(self, pages: list[FakePage] | None) -> None:
        self.pages = pages

    def load_pages(self, ws: object) -> list[FakePage]:
        return list(self.pages or [])

    def load_page(self, ws: object, page_id: str) -> FakePage:
        for p in self.pages or []:
            if p.id == page_id:
                return p
        raise UserError(f"no navigation page {page_id!r}")

    def layer_fingerprint(self, ws: object) -> str | None:
        if self.pages is None:
            return None
        h = hashlib.sha256()
        for p in self.pages:
            h.update(f"{p.id}\0{p.title}\0{p.text}\0{','.join(p.cites)}\n".encode())
        return h.hexdigest()


class FullSortRanked:
    """A ranking with every value computed up front, behind ``skillrag.search._ranked.Ranked``'s interface:
    ``pairs`` (item index, score) best first; ``bm25_rank`` / ``dense_rank``: ``(n_items,)`` 1-based ranks,
    0 = not ranked; ``norm_all``: ``(n_items,)`` float32 normalised scores."""

    def __init__(self, pairs: list[tuple[int, float]], bm25_rank: np.ndarray, dense_rank: np.ndarray,
                 norm_all: np.ndarray) -> None:
        self.pairs, self.bm25_rank, self.dense_rank, self.norm_all = pairs, bm25_rank, dense_rank, norm_all

    def head(self, m: int | None) -> list[tuple[int, float]]:
        return self.pairs[:m]

    def __iter__(self) -> Iterator[tuple[int, float]]:
        return iter(self.pairs)

    def ranks(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        items = np.asarray(items, dtype=np.int64)
        return self.bm25_rank[items], self.dense_rank[items]

    def norm(self, items: np.ndarray) -> np.ndarray:
        return self.norm_all[np.asarray(items, dtype=np.int64)]

    def norm_of(self, i: int) -> float:
        return float(self.norm_all[i])


def full_sort_rank(r: Any, query: str, mask: np.ndarray | None = None, qvec: np.ndarray | None = None,
                   filters: Any = None) -> FullSortRanked:
    """``Retriever._rank`` as it was before rankings were read lazily: each ranking asked of the engine
    whole (``depth`` = every item, a full stable sort on the embedded engine), every item's ranks and
    normalised score computed. ``r``: a ``Retriever``. The code is kept as it was."""
    from skillrag.search.fusion import reciprocal_rank_fusion
    from skillrag.search.retriever import FUSION_DEPTH

    n = len(r.items)
    depth = r.depth or n
    s = r.settings
    bm_rank = np.zeros(n, dtype=np.int64)
    de_rank = np.zeros(n, dtype=np.int64)
    parts: list[tuple[float, np.ndarray]] = []
    rankings: list[np.ndarray] = []
    raw: np.ndarray | None = None
    if r.mode in ("bm25", "hybrid"):
        order, sc = r.index.lexical(r.query_terms(query), depth, mask, filters)
        b = np.zeros(n, dtype=np.float32)
        b[order] = sc
        bm_rank[order] = np.arange(1, len(order) + 1)
        top = float(sc[0]) if len(order) else 0.0
        parts.append((s.bm25_weight, np.clip(b / top, 0.0, 1.0) if top > 0 else np.zeros(n, np.float32)))
        rankings.append(order)
        raw = b
    if r.mode in ("dense", "hybrid"):
        order, sc = r.index.dense(r.query_vector(query) if qvec is None else qvec, depth, mask, filters)
        d = np.full(n, -1.0, dtype=np.float32)  # unranked items: below any cosine a ranked one has
        d[order] = sc
        de_rank[order] = np.arange(1, len(order) + 1)
        if len(order):
            top, mid = float(sc[0]), float(np.median(sc))
            span = top - mid
            nd = np.clip((d - mid) / span, 0.0, 1.0) if span > 1e-9 else (d >= top).astype(np.float32)
        else:
            nd = np.zeros(n, np.float32)
        parts.append((s.dense_weight, nd))
        rankings.append(order)
        raw = d
    total_w = sum(w for w, _ in parts) or 1.0
    norm = sum(w * p for w, p in parts) / total_w
    if r.mode != "hybrid":
        ids = rankings[0].tolist()
        return FullSortRanked([(i, float(raw[i])) for i in ids], bm_rank, de_rank, norm)  # type: ignore[index,arg-type]
    fused = reciprocal_rank_fusion([x[:FUSION_DEPTH].tolist() for x in rankings], k=s.rrf_k,
                                   weights=[s.bm25_weight, s.dense_weight])
    return FullSortRanked([(int(i), sc) for i, sc in fused], bm_rank, de_rank, norm)  # type: ignore[arg-type]


def full_sort_retriever(r: Any) -> Any:
    """A shallow copy of the ``Retriever`` ``r`` (same loaded index, no second copy of the vectors) that
    ranks with ``full_sort_rank``: the baseline for timing the lazy ranking."""
    twin = copy.copy(r)
    twin._rank = lambda *a, **kw: full_sort_rank(twin, *a, **kw)
    if getattr(r, "_articles", None) is not None:
        twin._articles = full_sort_retriever(r._articles)
    return twin
