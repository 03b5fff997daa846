"""The engine seam: where one backend's index is stored and where its two rankings are computed.

Everything that decides *what* is ranked stays outside the engine and is identical on every engine:
items and their passages (split and title prefix), the embedder and the query-vector policy, the
lexical analysis (an engine receives analysed terms, never raw text), BM25 k1/b, the fusion depth,
reciprocal rank fusion and its weights, the passage→item aggregation (best passage), filters, and
the manifest that records how the index was built. An engine stores what a build hands it and
answers two calls: the best ``depth`` items by BM25 for some analysed query terms, and the best
``depth`` items by the cosine of their best passage with a query vector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from skillrag.search._items import Item
from skillrag.search._types import SearchFilters

__all__ = ["BuildInput", "Engine", "EngineIndex", "Ranking", "ScoringIndex", "empty_ranking", "top_k"]

#: ``(item indices int64, scores float32)``, best first, at most ``depth`` long.
Ranking = tuple[np.ndarray, np.ndarray]


def empty_ranking() -> Ranking:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


def top_k(scores: np.ndarray, candidates: np.ndarray, depth: int | None) -> Ranking:
    """The best ``depth`` of ``candidates`` (increasing item indices) by ``scores`` (``(n_items,)``).

    Ties keep index order, so the result equals a stable full sort cut at ``depth``; the work is an
    ``argpartition`` (O(n)) plus a sort of the ``depth`` best (and of any items tied with the last).
    """
    s = scores[candidates]
    if depth is not None and 0 < depth < len(s):
        part = np.argpartition(-s, depth - 1)[:depth]
        sel = np.flatnonzero(s >= s[part].min())  # everything tied with the cut, for a stable order
    else:
        sel = np.arange(len(s))
    order = sel[np.argsort(-s[sel], kind="stable")][:depth]
    idx = candidates[order].astype(np.int64, copy=False)
    return idx, scores[idx].astype(np.float32, copy=False)


@dataclass(frozen=True)
class BuildInput:
    """What ``build_index`` hands an engine: the complete new state of one backend's index.

    ``terms[i]``: the analysed BM25 terms of ``items[i]`` (title weighted, stop words dropped,
    stems applied). ``passage_rows[j]``: the item of passage ``j`` (non-decreasing; every item has at
    least one passage); ``passage_hashes[j]``: sha256 hex of its text. ``vectors(hashes)`` returns
    ``(len(hashes), dim)`` float32 unit vectors from the vector store. ``header``: the manifest
    without its per-item maps (``backend``, ``engine``, ``versions``, ``embedder_id``, ``dim``,
    ``params``, ``layer_fingerprint``, ``passages``, ``built_at``). ``rebuild``: start from nothing
    even if the stored index could be updated in place.
    """

    backend: str
    items: list[Item]
    terms: list[list[str]]
    passage_rows: np.ndarray
    passage_hashes: list[str]
    vectors: Callable[[Sequence[str]], np.ndarray]
    header: dict[str, Any]
    rebuild: bool = False


@dataclass(frozen=True)
class BuildUpdate:
    """What ``build_index`` hands an ``incremental`` engine whose stored index of ``backend`` was built
    the same way (embedder, settings, versions): the new state as a change of the stored one.

    ``order``: every item id of the new state, in index order; ``hashes`` / ``content_hashes``: id →
    item hash / article content hash (``direct`` only, else empty) of every item, the new manifest's
    maps. ``items``: the items that are new or whose hash changed (the others are kept as stored; a
    stored id not in ``order`` is removed); ``terms[i]`` their analysed BM25 terms and
    ``passages[i]`` the sha256 hex of each of their passages, in order (at least one). ``header``: as
    ``BuildInput.header`` but without ``passages``, which the engine counts.
    """

    backend: str
    order: list[str]
    hashes: dict[str, str]
    content_hashes: dict[str, str]
    items: list[Item]
    terms: list[list[str]]
    passages: list[list[str]]
    header: dict[str, Any]


class EngineIndex(Protocol):
    """One backend's index, open for searching.

    ``items``: item records (``id``, ``title``, ``source_tag``, ``source_path``, ``cites``,
    ``preview``, ``hash``), the positions that rankings refer to. ``manifest``: how it was built, with
    ``items`` (id → item hash) and ``content_hashes`` (id → article content hash, ``direct`` only).
    ``vocab`` (term → id) and ``df`` (``(n_terms,)`` document frequencies) describe the BM25
    vocabulary. ``mask`` (``(n_items,)`` bool or None) is exact; ``filters`` is the same restriction
    as a hint an engine may push down to its server (it must still honour ``mask``).
    """

    items: list[dict[str, Any]]
    manifest: dict[str, Any]
    vocab: dict[str, int]
    df: np.ndarray

    def lexical(self, term_ids: Sequence[int], depth: int, mask: np.ndarray | None,
                filters: SearchFilters | None) -> Ranking:
        """The best ``depth`` items by BM25 (Lucene variant) for the query terms (repeats count as query
        term frequency); only items with a positive score."""
        ...

    def dense(self, qvec: np.ndarray, depth: int, mask: np.ndarray | None,
              filters: SearchFilters | None) -> Ranking:
        """The best ``depth`` items by the inner product of ``qvec`` (``(dim,)`` unit float32) with their
        best passage (a cosine, −1..1)."""
        ...

    def check_current(self) -> None:
        """Raise ``IndexStateError`` if the stored index was changed since this one was opened."""
        ...

    def close(self) -> None: ...


class ScoringIndex(EngineIndex, Protocol):
    """An index held in memory that scores every item in one call (the indexes of an ``exhaustive``
    engine). The retriever selects the best items itself (``top_k``, as deep as it reads) and computes
    exact ranks and the dense median from these scores (``skillrag.search._ranked``)."""

    def lexical_scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """``(n_items,)`` float32 BM25 scores (Lucene variant) of every item for the query terms (repeats
        count as query term frequency); 0 where no term occurs."""
        ...

    def dense_scores(self, qvec: np.ndarray) -> np.ndarray:
        """``(n_items,)`` float32 inner products of ``qvec`` (``(dim,)`` unit float32) with each item's best
        passage (a cosine, −1..1)."""
        ...


class Engine(Protocol):
    """Stores and opens the indexes of one workspace. ``name`` is its registry key. ``exhaustive``: its
    indexes are ``ScoringIndex``es (every item scored in memory), so the retriever asks for every
    item's scores and gets exact ranks of every item; otherwise it asks each ranking for the fusion
    depth only. ``incremental``: it can apply a ``BuildUpdate`` (``update``), so a re-index after a
    few changes does work for those only; otherwise ``build_index`` always hands it a full
    ``BuildInput``."""

    name: str
    exhaustive: bool
    incremental: bool

    def versions(self) -> dict[str, str]:
        """What must match between the build and the search, besides settings (library and format)."""
        ...

    def read_manifest(self, backend: str) -> dict[str, Any] | None:
        """The full manifest of ``backend``'s index, or None when there is none."""
        ...

    def header(self, backend: str) -> dict[str, Any] | None:
        """The manifest without its per-item maps (how it was built, the corpus stamp), read without
        any per-item work; None when there is none (or, embedded, an index written before it had one)."""
        ...

    def is_ready(self, backend: str) -> bool:
        """True when the stored index is complete (nothing half-written or missing)."""
        ...

    def write(self, data: BuildInput) -> None:
        """Store the new state (incrementally where the engine can); nothing is half-visible to a search:
        either the old index, the new one, or a refusal that names ``skillrag index``."""
        ...

    def update(self, data: BuildUpdate) -> int:
        """Apply ``data`` to the stored index (only called when ``incremental``) with the same guarantee
        as ``write``, and the same result as a ``write`` of the whole new state; returns the number of
        passages of the updated index. Raises ``IndexStateError`` when the stored index is damaged."""
        ...

    def open(self, backend: str) -> EngineIndex | None:
        """The stored index of ``backend`` (None when there is none). Raises ``IndexStateError`` when it
        is damaged or half-built, ``EngineError`` when the engine cannot be reached."""
        ...
