"""The milvus engine, against Milvus Lite in process and against a Milvus Lite server on 127.0.0.1.

Every test runs on both deployments: a ``.db`` file (Milvus Lite started by pymilvus inside this
process's tree) and ``http://127.0.0.1:PORT`` (Milvus Lite's server binary started by the fixture,
the client–server path of a Milvus standalone server). Skipped without the ``milvus`` extra unless
``SKILLRAG_REQUIRE_MILVUS=1`` (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from skillrag.corpus import ingest
from skillrag.errors import EngineError, IndexStateError
from skillrag.search import SearchFilters, build_index, open_retriever, read_manifest
from skillrag.search.testing import FakePage, FakePageSource, HashEmbedder
from skillrag.workspace import Workspace

from .conftest import make_workspace

pytestmark = pytest.mark.milvus

#: A second process that opens a Milvus Lite file and keeps it open.
HOLD_LITE_FILE = ("import sys, time; from pymilvus import MilvusClient; MilvusClient(sys.argv[1]); "
                  "print('open', flush=True); time.sleep(120)")


def _extra_missing() -> str | None:
    for module in ("pymilvus", "milvus_lite"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'skillrag[milvus]')"
    try:
        with warnings.catch_warnings():  # milvus-lite 2.5 warns that pkg_resources is deprecated
            warnings.simplefilter("ignore")
            import milvus_lite.server_manager  # noqa: F401
    except ModuleNotFoundError as exc:
        return f"milvus-lite cannot be imported ({exc}; it needs setuptools<81)"
    return None


@pytest.fixture(scope="module")
def milvus_extra() -> None:
    reason = _extra_missing()
    if reason is not None:
        if os.environ.get("SKILLRAG_REQUIRE_MILVUS") == "1":
            pytest.fail(f"SKILLRAG_REQUIRE_MILVUS=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server_uri(milvus_extra, tmp_path_factory) -> Iterator[str]:
    from skillrag.search.engines.testing import lite_server

    with lite_server(tmp_path_factory.mktemp("milvus-server") / "server.db") as uri:
        yield uri


def _use_milvus(ws: Workspace, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    s = ws.config.search
    s.engine = "milvus"
    if request.param == "lite":
        s.milvus_uri = str(tmp_path / "index.db")
    else:
        s.milvus_uri = request.getfixturevalue("server_uri")
        s.milvus_collection = f"t_{uuid.uuid4().hex[:12]}"  # one server, a fresh set of collections per test


@pytest.fixture(params=["lite", "server"])
def mws(request, milvus_extra, tmp_path) -> Iterator[Workspace]:
    """The small two-folder corpus, indexed with the milvus engine on one deployment."""
    from skillrag.search.engines.milvus import disconnect_all

    ws = make_workspace(tmp_path)
    _use_milvus(ws, request, tmp_path)
    yield ws
    disconnect_all()


def _client(ws: Workspace):
    from skillrag.search.engines.milvus import connect

    return connect(ws)


def _count(ws: Workspace, what: str, backend: str = "direct") -> int:
    name = f"{ws.config.search.milvus_collection}_{backend}_{what}"
    return int(_client(ws).query(name, filter="", output_fields=["count(*)"])[0]["count(*)"])


def _ranked(hits) -> list[tuple[str, float]]:
    """Hits as (id, score) in score order, ties by id (engines may order exact ties differently)."""
    return sorted(((h.article_id, round(h.score, 4)) for h in hits), key=lambda x: (-x[1], x[0]))


def test_build_then_every_mode_ranks_as_the_embedded_engine_does(mws, emb):
    # the embedded engine first: switching engines re-uses every stored vector, none is embedded again
    mws.config.search.engine = "embedded"
    build_index(mws, embedder=emb)
    queries = ["close my checking account balance", "card fee annual", "wire abroad swift code", "savings interest"]
    expected = {(m, q): _ranked(open_retriever(mws, mode=m, embedder=emb).search(q, k=5))
                for m in ("hybrid", "bm25", "dense") for q in queries}
    mws.config.search.engine = "milvus"
    again = HashEmbedder()
    report = build_index(mws, embedder=again)
    assert report.items == 5 and report.passages == 5 and report.embedded == 0 and report.reused == 5
    assert again.calls == 0
    m = read_manifest(mws, "direct")
    assert m["engine"] == "milvus" and m["state"] == "ready" and m["embedder_id"] == emb.id and m["dim"] == 64
    assert len(m["items"]) == 5 and set(m["content_hashes"]) == set(m["items"])
    assert _count(mws, "items") == 5 and _count(mws, "passages") == 5
    for (mode, q), want in expected.items():
        dense = [x for _, x in expected["dense", q]]
        if mode == "hybrid" and len(set(dense)) < len(dense):
            continue  # exact dense ties: each engine may order them differently, so their RRF shares differ
        got = _ranked(open_retriever(mws, mode=mode, embedder=emb).search(q, k=5))
        assert [a for a, _ in got] == [a for a, _ in want], (mode, q)
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=2e-3), (mode, q)


def test_hybrid_search_fuses_bm25_and_dense_with_rrf(tmp_path, mws, emb):
    build_index(mws, embedder=emb)
    r = open_retriever(mws, mode="hybrid", embedder=emb)
    hits = r.search("swift", k=10)
    assert len(hits) == 5 and hits[0].article_id == "wire"  # dense ranks every article, BM25 only "wire"
    assert abs(hits[0].score - 2 / 61) < 1e-9  # first in both rankings, k = 60
    assert [h.article_id for h in open_retriever(mws, mode="bm25", embedder=emb).search("swift", k=10)] == ["wire"]
    assert hits[0].title == "Send an international wire" and hits[0].preview.startswith("Wires abroad need")
    assert hits[0].bm25_rank == hits[0].dense_rank == 1 and hits[0].relevance == 1.0
    mws.config.search.milvus_uri = str(tmp_path / "elsewhere.db")  # an open retriever keeps its target
    assert [h.article_id for h in r.search("swift", k=10)] == [h.article_id for h in hits]
    assert not (tmp_path / "elsewhere.db").exists()


def test_incremental_update_upserts_only_the_changed_passages(tmp_path, mws, emb):
    build_index(mws, embedder=emb)
    client = _client(mws)
    passages = f"{mws.config.search.milvus_collection}_direct_passages"
    before = {r["pid"]: r["item"] for r in client.query(passages, filter="", output_fields=["pid", "item"], limit=100)}
    built_id = read_manifest(mws, "direct")["build_id"]
    src = tmp_path / "src" / "accounts"
    (src / "wire.md").write_text("# Send an international wire\n\nWires abroad take five days now.\n")
    ingest(mws, [src], tag="accounts")
    emb.texts_embedded.clear()
    report = build_index(mws, embedder=emb)
    assert report.changed == ["wire"] and report.embedded == 1 and report.reused == 4
    after = {r["pid"]: r["item"] for r in client.query(passages, filter="", output_fields=["pid", "item"], limit=100)}
    assert {p for p, i in before.items() if i != "wire"} <= set(after)  # untouched passages kept their rows
    assert [i for p, i in after.items() if p not in before] == ["wire"]  # one new row, for the changed one
    assert len(after) == 5
    assert read_manifest(mws, "direct")["build_id"] != built_id
    hits = open_retriever(mws, mode="bm25", embedder=emb).search("five days wire", k=1)
    assert hits[0].article_id == "wire"
    assert build_index(mws, embedder=emb).up_to_date


def test_a_removed_article_is_deleted_from_both_collections(tmp_path, mws, emb):
    build_index(mws, embedder=emb)
    (tmp_path / "src" / "accounts" / "wire.md").unlink()
    ingest(mws, [tmp_path / "src" / "accounts"], tag="accounts")
    report = build_index(mws, embedder=emb)
    assert report.removed == ["wire"] and report.items == 4 and report.embedded == 0
    assert _count(mws, "items") == 4 and _count(mws, "passages") == 4
    ids = [h.article_id for h in open_retriever(mws, embedder=emb).search("wire abroad swift", k=10)]
    assert "wire" not in ids and len(ids) == 4


def test_filters_go_with_each_request_and_stay_exact(tmp_path, request, milvus_extra, emb):
    from skillrag.search.engines.milvus import disconnect_all

    files = {
        "cards/lost_card.md": "# Report a lost debit card\n\nFreeze the card, then order a replacement card.\n",
        "cards/card_fees.md": "# Card fees\n\nThe platinum card has an annual fee of 95 dollars.\n",
        "accounts/open_savings.md": "# Open a savings account\n\nA savings account pays interest monthly.\n",
        "accounts/openXsavings.md": "# Open a joint savings account\n\nA joint savings account for two.\n",
        "accounts/wire.md": "# Send an international wire\n\nWires abroad need the SWIFT code.\n",
    }
    ws = make_workspace(tmp_path, files=files)
    request.param = "lite"
    _use_milvus(ws, request, tmp_path)
    try:
        build_index(ws, embedder=emb)
        for mode in ("hybrid", "bm25", "dense"):
            r = open_retriever(ws, mode=mode, embedder=emb)
            cards = r.search("card account savings", k=10, filters=SearchFilters(source_tags=["cards"]))
            assert {h.article_id for h in cards} == {"lost_card", "card_fees"}, mode
            # "open_" in a LIKE pattern also matches "openX": the exact filter removes it again
            pref = r.search("savings account", k=10, filters=SearchFilters(path_prefixes=["open_"]))
            assert [h.article_id for h in pref] == ["open_savings"], mode
            both = r.search("account", k=10, filters=SearchFilters(source_tags=["cards"], path_prefixes=["open_"]))
            assert both == [], mode
    finally:
        disconnect_all()


def test_filter_expressions_quote_and_widen_safely():
    from skillrag.search.engines.milvus import filter_expr

    f = SearchFilters(source_tags=['a"b', "c\\d"], path_prefixes=["x_%"])
    expr = filter_expr(f, "id", ["k1"])
    assert expr == 'source_tag in ["a\\"b", "c\\\\d"] and (source_path like "x__%") and id in ["k1"]'
    assert filter_expr(None, "item") == ""


def test_stale_corpus_and_a_rebuild_elsewhere_are_refused(tmp_path, mws, emb):
    build_index(mws, embedder=emb)
    r = open_retriever(mws, embedder=emb)
    assert r.search("wire", k=1)
    src = tmp_path / "src" / "cards"
    (src / "new_card.md").write_text("# A new card\n\nBrand new.\n")
    ingest(mws, [src], tag="cards")
    with pytest.raises(IndexStateError, match=r"stale \(0 changed, 1 added, 0 removed.*skillrag index"):
        r.search("wire", k=1)
    build_index(mws, embedder=emb)
    with pytest.raises(IndexStateError, match="changed since it was opened"):
        r.search("wire", k=1)  # the index this retriever read was replaced under it
    fresh = open_retriever(mws, embedder=emb)
    assert fresh.search("brand new card", k=1)[0].article_id == "new_card"
    for what in ("items", "passages", "meta"):
        _client(mws).drop_collection(f"{mws.config.search.milvus_collection}_direct_{what}")
    with pytest.raises(IndexStateError, match="changed since it was opened"):
        fresh.search("wire", k=1)  # dropped under it
    with pytest.raises(IndexStateError, match="no direct search index"):
        open_retriever(mws, embedder=emb)


def test_a_half_built_index_is_refused(mws, emb):
    from skillrag.search.engines.milvus import MilvusEngine

    build_index(mws, embedder=emb)
    engine = MilvusEngine(mws)
    header = engine.header("direct")
    engine._put_header("direct", {**header, "state": "building"})  # as an interrupted update leaves it
    with pytest.raises(IndexStateError, match="half-built.*skillrag index --backend direct"):
        open_retriever(mws, embedder=emb)
    report = build_index(mws, embedder=emb)
    assert not report.up_to_date and report.embedded == 0
    assert open_retriever(mws, embedder=emb).search("wire", k=1)[0].article_id == "wire"


def test_other_settings_or_embedder_are_refused_and_rebuilt(mws, emb):
    build_index(mws, embedder=emb)
    with pytest.raises(IndexStateError, match="built with embedder"):
        open_retriever(mws, embedder=HashEmbedder(dim=32))
    mws.config.search.bm25_k1 = 1.2
    with pytest.raises(IndexStateError, match="other settings"):
        open_retriever(mws, embedder=emb)
    assert build_index(mws, embedder=emb).reused == 5
    assert open_retriever(mws, embedder=emb).search("wire", k=1)[0].article_id == "wire"


def test_wiki_backend_on_milvus(mws, emb):
    pages = FakePageSource([
        FakePage("p-cards", "Cards", "lost card freeze replacement fees annual", ["lost_card", "card_fees"]),
        FakePage("p-move", "Moving money", "wire abroad swift code international", ["wire"]),
        FakePage("p-accounts", "Accounts", "open savings close checking", ["open_savings", "close_account"]),
    ])
    build_index(mws, backend="wiki", embedder=emb, pages=pages)
    assert _count(mws, "items", "wiki") == 3 and _count(mws, "items", "direct") == 5
    hits = open_retriever(mws, backend="wiki", embedder=emb, pages=pages).search("wire abroad swift", k=3)
    assert hits[0].article_id == "wire" and hits[0].page_ids == ("p-move",)
    mws.config.search.wiki_order = "page"
    hits = open_retriever(mws, backend="wiki", embedder=emb, pages=pages).search("freeze lost card", k=2)
    assert [h.article_id for h in hits] == ["lost_card", "card_fees"]


def test_a_lite_file_open_in_another_process_is_one_clear_error(tmp_path, milvus_extra, emb):
    from skillrag.search.engines.milvus import disconnect_all

    ws = make_workspace(tmp_path)
    ws.config.search.engine = "milvus"
    db = tmp_path / "busy.db"
    ws.config.search.milvus_uri = str(db)
    holder = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-c", HOLD_LITE_FILE, str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(EngineError, match=r"busy\.db: this Milvus Lite file is open in another process"):
            build_index(ws, embedder=emb)
    finally:
        holder.kill()
        holder.wait()
    build_index(ws, embedder=emb)  # free again: the same call works
    assert open_retriever(ws, embedder=emb).search("wire", k=1)[0].article_id == "wire"
    disconnect_all()


def test_an_unreachable_server_is_one_clear_error(tmp_path, milvus_extra, emb):
    from skillrag.search.engines.testing import free_port

    ws = make_workspace(tmp_path)
    ws.config.search.engine = "milvus"
    ws.config.search.milvus_uri = f"http://127.0.0.1:{free_port()}"
    ws.config.search.milvus_timeout_s = 1.0
    with pytest.raises(EngineError, match=r"cannot reach the Milvus server at http://127\.0\.0\.1:\d+"):
        build_index(ws, embedder=emb)


def test_cli_index_and_search_on_milvus_lite(tmp_path, milvus_extra):
    """The whole path through the CLI, in fresh processes: index, search, and the lock error line."""
    ws = make_workspace(tmp_path)
    cfg = ws.config_path.read_text()
    ws.config_path.write_text(cfg.replace("engine: embedded", "engine: milvus"))
    env = {**os.environ, "SKILLRAG_WORKSPACE": str(ws.root)}
    cli = [str(Path(sys.executable).parent / "skillrag")]
    done = subprocess.run([*cli, "index"], check=False, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = subprocess.run([*cli, "search", "wire abroad swift", "-k", "2", "--json"], check=False, env=env, capture_output=True,
                           text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["article_id"] == "wire"
    db = ws.state_dir / "milvus.db"
    holder = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-c", HOLD_LITE_FILE, str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        busy = subprocess.run([*cli, "search", "wire"], check=False, env=env, capture_output=True, text=True, timeout=300)
    finally:
        holder.kill()
        holder.wait()
    assert busy.returncode == 2
    assert busy.stderr.strip().splitlines() == [
        (f"error: {db}: this Milvus Lite file is open in another process (Milvus Lite allows one at a time); "
         "stop that process, or serve the index from a Milvus server (search.milvus_uri: http://HOST:19530)")]
