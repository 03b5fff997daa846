"""How every benchmark times a search: the query embedding included, always.

A ``Retriever`` keeps the last query's vector (``search`` and ``search_pages`` of one ``retrieve``
call embed it once). A benchmark that searched a query and then timed the same query again measured
a search without its embedding: the README once showed a hybrid p50 of 2.9 ms that way, against
36–41 ms with the embedding. Here the memo is dropped before the clock starts, and the call is
checked to have embedded the query (``EmbedCounter``); a timed call that did not raises
``TimingError``. A figure that leaves the embedding out must say so in its label.

    r = open_retriever(ws, backend="direct")
    hits, ms = timed_search(r, query, k=10)          # ms includes embedding the query

``clock`` (default ``time.perf_counter``, seconds) is injectable: a test reads the embed count at
each clock reading and checks that every timed window holds an embedding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["EmbedCounter", "TimingError", "count_embeddings", "forget_query", "percentiles", "timed_call",
           "timed_search"]

Clock = Callable[[], float]


class TimingError(RuntimeError):
    """A timed call did not embed its query: the figure would leave the embedding out."""


class EmbedCounter:
    """Wraps an embedder (same ``id``, ``dim``, ``token_counts``, ``truncate``, vectors) and counts its
    ``embed`` calls in ``calls``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = inner.id
        self.calls = 0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return self.inner.embed(texts)

    def __getattr__(self, name: str) -> Any:  # token_counts, truncate, max_length ... of the model
        return getattr(self.inner, name)


def count_embeddings(r: Any) -> EmbedCounter:
    """The ``EmbedCounter`` around the retriever ``r``'s embedder (installed on first use)."""
    if not isinstance(r.embedder, EmbedCounter):
        r.embedder = EmbedCounter(r.embedder)
    return r.embedder


def forget_query(r: Any) -> None:
    """Drop the retriever's memoised query vector, so the next search embeds its query."""
    r._qvec_memo = None


def timed_call(fn: Callable[[], Any], counter: EmbedCounter | None, *, what: str = "search",
               clock: Clock = time.perf_counter) -> tuple[Any, float]:
    """``(fn(), milliseconds)``. ``counter``: the embedder ``fn`` must call at least once (None: a call
    that embeds nothing, e.g. BM25 alone). Raises ``TimingError`` when it did not."""
    before = counter.calls if counter is not None else 0
    t0 = clock()
    value = fn()
    ms = 1000 * (clock() - t0)
    if counter is not None and counter.calls == before:
        raise TimingError(f"the timed {what} did not embed its query (a cached vector was used); "
                          "the figure would leave the query embedding out")
    return value, ms


def timed_search(r: Any, query: str, k: int, *, clock: Clock = time.perf_counter) -> tuple[list[Any], float]:
    """``(r.search(query, k), milliseconds)`` with the query embedding inside the timed window (the memo
    dropped first; checked unless ``r.mode`` is ``bm25``)."""
    counter = count_embeddings(r) if r.mode != "bm25" else None
    forget_query(r)
    return timed_call(lambda: r.search(query, k=k), counter, clock=clock)


def percentiles(ms: Sequence[float]) -> tuple[float, float]:
    """``(p50, p95)`` of ``ms``."""
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
