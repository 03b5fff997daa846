"""The engine seam: the registry, exact top-k selection, and the milvus engine's errors that need no server."""

import sys

import numpy as np
import pytest

from skillrag.errors import ConfigError, MissingExtraError
from skillrag.search import build_index, open_retriever
from skillrag.search.engines import ENGINES, get_engine, top_k
from skillrag.search.engines.embedded import EmbeddedEngine
from skillrag.workspace import WorkspaceConfig


def test_registry_and_config_choices():
    from typing import get_args

    from skillrag.workspace.config import SearchSettings

    assert list(ENGINES) == ["embedded", "milvus"]
    assert set(get_args(SearchSettings.model_fields["engine"].annotation)) == set(ENGINES)
    assert WorkspaceConfig().search.engine == "embedded"
    with pytest.raises(ConfigError, match="unknown search engine 'nope'"):
        get_engine(None, "nope")  # type: ignore[arg-type]


def test_default_engine_is_embedded(ws):
    assert isinstance(get_engine(ws), EmbeddedEngine)


@pytest.mark.parametrize("seed", range(5))
def test_top_k_equals_a_stable_full_sort_even_with_ties(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 6, size=300).astype(np.float32)  # many exact ties
    candidates = np.flatnonzero(rng.random(300) < 0.7)
    for depth in (1, 7, 50, len(candidates), len(candidates) + 10, None):
        idx, sc = top_k(scores, candidates, depth)
        full = candidates[np.argsort(-scores[candidates], kind="stable")][:depth]
        assert idx.tolist() == full.tolist() and np.array_equal(sc, scores[full])
    idx, sc = top_k(scores, np.zeros(0, dtype=np.int64), 10)
    assert idx.shape == sc.shape == (0,)


def test_retriever_asks_an_in_memory_engine_for_every_score_and_a_server_for_the_fusion_depth(ws, emb, monkeypatch):
    from skillrag.search import retriever as retriever_module

    build_index(ws, embedder=emb)
    r = open_retriever(ws, embedder=emb)
    asked = []
    for name in ("lexical", "dense", "lexical_scores", "dense_scores"):
        real = getattr(r.index, name)
        monkeypatch.setattr(r.index, name, lambda *a, _n=name, _f=real: asked.append((_n, *a[1:2])) or _f(*a))
    full = r.search("wire abroad", k=3)
    assert r.engine.exhaustive and r.depth is None
    assert asked == [("lexical_scores",), ("dense_scores",)]  # every item's score: exact ranks, our selection
    asked.clear()
    r.depth = 2  # as for an engine on a server (FUSION_DEPTH there): only the best of each ranking
    assert retriever_module.FUSION_DEPTH == 200
    cut = r.search("wire abroad", k=3)
    assert [a for a in asked if len(a) == 2] == [("lexical", 2), ("dense", 2)]  # (they score with *_scores)
    assert cut[0].article_id == full[0].article_id and cut[0].bm25_rank == full[0].bm25_rank == 1


def test_embedded_rankings_are_its_scores_cut_by_top_k(ws, emb):
    build_index(ws, embedder=emb)
    r = open_retriever(ws, embedder=emb)
    terms, qvec = r.query_terms("card fees abroad"), r.query_vector("card fees abroad")
    mask = np.array([True, False, True, True, True])
    b, d = r.index.lexical_scores(terms), r.index.dense_scores(qvec)
    assert b.shape == d.shape == (5,) and b.dtype == d.dtype == np.float32
    for depth in (1, 3, 5):
        idx, sc = r.index.lexical(terms, depth, mask, None)
        assert idx.tolist() == top_k(b, np.flatnonzero(mask & (b > 0)), depth)[0].tolist() and (sc > 0).all()
        idx, sc = r.index.dense(qvec, depth, mask, None)
        assert idx.tolist() == top_k(d, np.flatnonzero(mask), depth)[0].tolist()
        assert np.array_equal(sc, d[idx])
    assert not r.index.lexical_scores([]).any() and r.index.lexical([], 3, None, None)[0].shape == (0,)


def test_milvus_without_the_extra_names_it(ws, monkeypatch):
    monkeypatch.setitem(sys.modules, "pymilvus", None)  # as if not installed
    ws.config.search.engine = "milvus"
    with pytest.raises(MissingExtraError, match=r"pymilvus is not installed: pip install 'skillrag\[milvus\]'"):
        get_engine(ws)
    with pytest.raises(MissingExtraError, match=r"skillrag\[milvus\]"):
        build_index(ws)


def test_milvus_uri_forms(ws):
    from skillrag.search.engines.milvus import resolve_uri

    s = ws.config.search
    assert resolve_uri(ws) == (str(ws.state_dir / "milvus.db"), ws.state_dir / "milvus.db")
    s.milvus_uri = "idx/search.db"
    assert resolve_uri(ws)[1] == (ws.root / "idx" / "search.db").resolve()
    s.milvus_uri = "https://milvus.example:19530"
    assert resolve_uri(ws) == ("https://milvus.example:19530", None)
    for bad, why in (("index.sqlite", "neither"), ("x" * 40 + ".db", "at most 36"), ("a b.db", "letters, digits")):
        s.milvus_uri = bad
        with pytest.raises(ConfigError, match=why):
            resolve_uri(ws)


def test_milvus_settings_are_typed():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        WorkspaceConfig.model_validate({"search": {"engine": "faiss"}})
    with pytest.raises(ValidationError):
        WorkspaceConfig.model_validate({"search": {"milvus_collection": "bad-name"}})
    with pytest.raises(ValidationError):
        WorkspaceConfig.model_validate({"search": {"milvus_index": "HNSW"}})
