"""Rankings computed only as deep as they are read equal the full sort they replace, value for value.

The reference is the retriever's ranking as it was before (``skillrag.search.testing.full_sort_rank``:
every ranked item sorted, ranks and normalised scores for all of them, the code kept as it was). The fixture is a corpus with many exact ties
(duplicated articles, one-word bodies) and more items than the fusion depth, and a navigation layer
of pages with duplicates; both rankings are compared item by item for every mode, with and without
a filter mask, on the in-memory path and the server path (``depth``), and the hits, pages and wiki
orders built on them are compared whole.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from skillrag.corpus import ingest
from skillrag.search import SearchFilters, build_index, open_retriever
from skillrag.search._ranked import FIRST_DEPTH, Ranked, RetrieverRanking
from skillrag.search.retriever import FUSION_DEPTH
from skillrag.search.testing import (
    FakePage,
    FakePageSource,
    FullSortRanked,
    HashEmbedder,
    full_sort_rank,
    full_sort_retriever,
)
from skillrag.workspace import Workspace, WorkspaceConfig

WORDS = [
    "card", "fee", "wire", "abroad", "savings", "account", "close", "balance", "loan", "rate",
    "interest", "branch", "freeze", "replace", "dispute", "charge", "refund", "limit", "travel",
    "notice", "pin", "reset", "login", "password", "mobile", "deposit", "check",
]
QUERIES = ["card fee", "wire abroad swift", "close account balance zero", "interest", "pin reset login mobile card",
           "refund dispute charge travel notice deposit check limit", "nothing here matches"]
MODES = ("hybrid", "bm25", "dense")


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """~300 articles in two tags: a third duplicates another's title and body (exact ties in both
    rankings), many bodies are one or two words (BM25 ties); a layer of 80 pages, some duplicated."""
    root = tmp_path_factory.mktemp("tied")
    rng = random.Random(7)
    docs: list[tuple[str, str]] = []
    for i in range(300):
        if docs and rng.random() < 0.33:
            docs.append(docs[rng.randrange(len(docs))])
        else:
            n = rng.choice((1, 2, 2, 5, 12, 30))
            docs.append((f"{rng.choice(WORDS)} {rng.choice(WORDS)}", " ".join(rng.choice(WORDS) for _ in range(n))))
    for i, (title, body) in enumerate(docs):
        folder = root / "src" / ("cards" if i % 3 else "accounts")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"a{i:03d}.md").write_text(f"# {title}\n\n{body}.\n", encoding="utf-8")
    cfg = WorkspaceConfig(name="tied")
    cfg.search.embedder = "hash"
    ws = Workspace.init(root / "ws", config=cfg)
    for tag in ("cards", "accounts"):
        ingest(ws, [root / "src" / tag], tag=tag)
    ids = [f"a{i:03d}" for i in range(300)]
    pages: list[FakePage] = []
    for p in range(80):
        if pages and rng.random() < 0.25:
            twin = pages[rng.randrange(len(pages))]
            pages.append(FakePage(f"p{p:02d}", twin.title, twin.text, list(twin.cites)))
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 3, 8))))
            pages.append(FakePage(f"p{p:02d}", f"page {rng.choice(WORDS)}", text, rng.sample(ids, rng.randint(1, 6))))
    src = FakePageSource(pages)
    emb = HashEmbedder()
    build_index(ws, backend="wiki", embedder=emb, pages=src)  # the direct index too
    return ws, emb, src


def _masks(n: int):
    rng = np.random.default_rng(3)
    yield None
    yield rng.random(n) < 0.5
    yield np.zeros(n, dtype=bool)


def _assert_same(new: Ranked, old: FullSortRanked, n: int) -> None:
    """Ranks and normalised scores first, while little is selected (ranks past the head are counted),
    then heads of growing depth, then the whole order."""
    bm, de, norm = old.bm25_rank, old.dense_rank, old.norm_all
    items = np.arange(n)
    got_bm, got_de = new.ranks(items)
    assert np.array_equal(got_bm, bm) and np.array_equal(got_de, de)
    got = new.norm(items)
    assert got.dtype == norm.dtype and np.array_equal(got, norm)  # bit for bit
    for i in (0, n // 2, n - 1):
        assert new.norm_of(i) == float(norm[i])
    for m in (1, 3, 10, FIRST_DEPTH, FIRST_DEPTH + 1, n + 5, None):
        assert new.head(m) == old.pairs[:m]
    assert list(new) == old.pairs


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", ["direct", "wiki"])
@pytest.mark.parametrize("server", [False, True], ids=["in-memory", "server-depth"])
def test_lazy_ranking_equals_the_full_sort(tied, mode, backend, server):
    ws, emb, src = tied
    r = open_retriever(ws, backend=backend, mode=mode, embedder=emb, pages=src)
    if server:
        r.depth = 37  # an engine on a server answers with its best ``depth`` only (FUSION_DEPTH there)
    n = len(r.items)
    assert n in (300, 80)
    tied_scores = 0
    for q in QUERIES:
        qvec = None if mode == "bm25" else r.query_vector(q)
        for mask in _masks(n):
            new = r._rank(q, mask, qvec)
            old = full_sort_rank(r, q, mask, qvec)
            _assert_same(new, old, n)
            assert list(r._rank(q, mask, qvec)) == old.pairs  # read from nothing
        if mode != "bm25":
            sc = r.index.dense(r.query_vector(q), n, None, None)[1]
            tied_scores += len(sc) - len(np.unique(sc))
        if mode != "dense":
            sc = r.index.lexical(r.query_terms(q), n, None, None)[1]
            tied_scores += len(sc) - len(np.unique(sc))
    assert tied_scores >= n // 4  # the fixture has the exact ties this is about


def test_rank_past_the_head_is_counted_with_ties_in_item_order():
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9, 0.5, 0.0], dtype=np.float32)
    r = RetrieverRanking.scored(scores, np.array([0, 1, 2, 4, 5, 6]), -1.0, depth=2)
    assert r.head(2)[0].tolist() == [1, 4]  # only the head is selected so far
    assert r.ranks(np.array([1, 4, 0, 2, 5, 6, 3])).tolist() == [1, 2, 3, 4, 5, 6, 0]  # 3 is not ranked
    assert r.values(np.array([3, 5])).tolist() == [-1.0, 0.5]
    assert r.median() == 0.5 and r.top() == pytest.approx(0.9) and len(r) == 6
    cut = RetrieverRanking.cut(7, (np.array([4, 1]), np.array([0.9, 0.9], dtype=np.float32)), 0.0)
    assert cut.ranks(np.array([1, 4, 0])).tolist() == [2, 1, 0] and cut.values(np.array([0])).tolist() == [0.0]
    empty = RetrieverRanking.scored(scores, np.zeros(0, dtype=np.int64), 0.0)
    assert len(empty) == 0 and empty.top() == 0.0 and empty.median() == 0.0 and empty.head(5)[0].shape == (0,)


def test_hits_pages_and_wiki_orders_equal_those_of_the_full_sort(tied):
    ws, emb, src = tied
    filters = [None, SearchFilters(source_tags=["cards"]), SearchFilters(path_prefixes=["a1"])]
    hits = pages = 0
    for backend, order in (("direct", "fused"), ("wiki", "fused"), ("wiki", "page")):
        ws.config.search.wiki_order = order
        for mode in MODES:
            r = open_retriever(ws, backend=backend, mode=mode, embedder=emb, pages=src)
            ref = full_sort_retriever(r)  # the same loaded index, ranked by full sorts
            assert isinstance(ref._rank("card fee"), FullSortRanked) and isinstance(r._rank("card fee"), Ranked)
            for q in QUERIES:
                for f in filters:
                    new = r.search(q, k=12, filters=f), r.search_pages(q, k=4, filters=f)
                    assert new == (ref.search(q, k=12, filters=f), ref.search_pages(q, k=4, filters=f)), (
                        backend, order, mode, q, f)
                    if backend == "direct":  # the hits themselves, read off the full sort's arrays
                        mask = None if f is None else np.array([f.accepts_item(it) for it in r.items])
                        full = full_sort_rank(r, q, mask, None if mode == "bm25" else r.query_vector(q))
                        assert [(h.article_id, h.score, h.bm25_rank or 0, h.dense_rank or 0) for h in new[0]] == [
                            (r.items[i]["id"], sc, full.bm25_rank[i], full.dense_rank[i]) for i, sc in full.head(12)]
                    hits += len(new[0])
                    pages += len(new[1])
            r.close()
    ws.config.search.wiki_order = "fused"
    assert hits > 500 and pages > 100
    assert FUSION_DEPTH < 300  # the fixture is deeper than the fusion
