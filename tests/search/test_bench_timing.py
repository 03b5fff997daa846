"""The benchmarks' latencies include the query embedding (issue 24: a query searched just before it was
timed reused its cached vector, and the README showed 2.9 ms for a 36–41 ms search)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from skillrag.search import build_index, open_retriever
from skillrag.search.testing import HashEmbedder

from .conftest import make_workspace

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their sibling ``timing``
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


class CountingClock:
    """A clock whose readings record how many embed calls had been made when each was taken."""

    def __init__(self, emb: HashEmbedder) -> None:
        self.emb = emb
        self.seen: list[int] = []
        self.t = 0.0

    def __call__(self) -> float:
        self.seen.append(self.emb.calls)
        self.t += 0.001
        return self.t

    def windows(self) -> list[int]:
        """Embed calls inside each (start, stop) pair of readings."""
        return [b - a for a, b in zip(self.seen[0::2], self.seen[1::2], strict=True)]


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_retrieval_benchmark_times_the_query_embedding(tmp_path, monkeypatch, mode):
    ws = make_workspace(tmp_path)
    emb = HashEmbedder()
    build_index(ws, embedder=emb)
    r = open_retriever(ws, mode=mode, embedder=emb)
    retrieval = _load("retrieval", monkeypatch)
    clock = CountingClock(emb)
    queries = ["lost card abroad", "close my checking account", "close my checking account"]
    ranked, lat, slat = retrieval.measure_arm(r, queries, ["Card fees"], clock=clock)
    assert len(lat) == 3 and len(slat) == 1 and len(ranked) == 3
    # every timed window embedded its query, the repeated one too
    assert clock.windows() == [1, 1, 1, 1]


def test_a_timed_search_that_reuses_the_cached_vector_is_refused(tmp_path, monkeypatch):
    ws = make_workspace(tmp_path)
    emb = HashEmbedder()
    build_index(ws, embedder=emb)
    r = open_retriever(ws, embedder=emb)
    timing = _load("timing", monkeypatch)
    counter = timing.count_embeddings(r)
    r.search("lost card", k=5)
    with pytest.raises(timing.TimingError, match="did not embed"):
        timing.timed_call(lambda: r.search("lost card", k=5), counter)
    hits, ms = timing.timed_search(r, "lost card", 5)
    assert hits and ms >= 0 and counter.calls == 2
