"""Index builds: incremental embedding, no-op rebuilds, stale-index detection, bad input."""

import itertools
import json

import numpy as np
import pytest

from skillrag.corpus import ingest
from skillrag.errors import EmptyInputError, IndexStateError
from skillrag.search import build_index, open_retriever, read_manifest
from skillrag.search.testing import HashEmbedder
from skillrag.workspace import Workspace


def test_first_build_embeds_every_passage_and_records_how(ws, emb):
    report = build_index(ws, embedder=emb)
    assert report.items == 5 and len(report.added) == 5
    assert report.embedded == report.passages == 5 and report.reused == 0
    m = read_manifest(ws, "direct")
    assert m["embedder_id"] == emb.id and m["dim"] == 64
    assert m["params"]["stemmer"] == "english" and m["versions"]["bm25s"]
    # how the terms were made: the text layer's analyzer, with its library versions
    assert m["analyzer"]["stopwords"] == "en" and m["analyzer"]["versions"]["PyStemmer"]
    assert set(m["content_hashes"]) == set(m["items"]) and len(m["items"]) == 5
    folder = ws.state_dir / "search" / "direct"
    assert np.load(folder / "rows.npy").shape == np.load(folder / "passages.npy").shape == (5,)


def test_vectors_are_stored_once_in_the_vector_store(ws, emb):
    """One vector store: the index folder holds passage hashes, the vectors live in store.sqlite only."""
    from skillrag.search.vectors import VectorStore

    build_index(ws, embedder=emb)
    folder = ws.state_dir / "search" / "direct"
    assert not list(folder.glob("*vectors*"))
    hashes = [h.decode() for h in np.load(folder / "passages.npy").tolist()]
    stored = VectorStore(ws).matrix(emb.id, hashes, 64)
    r = open_retriever(ws, embedder=emb)
    assert np.array_equal(r.index.vectors, stored)
    with ws.connect() as conn, conn:
        conn.execute("DELETE FROM search_vectors WHERE text_hash = ?", (hashes[0],))
    with pytest.raises(IndexStateError, match="1 passage vectors of the index are missing.*--force"):
        open_retriever(ws, embedder=emb)
    assert build_index(ws, embedder=emb, force=True).embedded == 1
    assert open_retriever(ws, embedder=emb).search("wire")


def test_changed_article_is_reembedded_and_unchanged_ones_are_not(tmp_path, ws, emb):
    build_index(ws, embedder=emb)
    emb.texts_embedded.clear()
    src = tmp_path / "src" / "accounts"
    (src / "wire.md").write_text("# Send an international wire\n\nWires abroad take five days now.\n")
    ingest(ws, [src], tag="accounts")
    report = build_index(ws, embedder=emb)
    assert report.changed == ["wire"] and not report.added and not report.removed
    assert report.embedded == 1 and report.reused == 4
    assert len(emb.texts_embedded) == 1 and "five days" in emb.texts_embedded[0]
    hits = open_retriever(ws, mode="bm25", embedder=emb).search("five days wire", k=1)
    assert hits[0].article_id == "wire"


def test_nothing_changed_is_a_no_op(ws, emb):
    build_index(ws, embedder=emb)
    calls = emb.calls
    mtime = (ws.state_dir / "search" / "direct" / "manifest.json").stat().st_mtime_ns
    report = build_index(ws, embedder=emb)
    assert report.up_to_date and report.embedded == 0
    assert emb.calls == calls
    assert (ws.state_dir / "search" / "direct" / "manifest.json").stat().st_mtime_ns == mtime


def test_a_no_op_reads_no_article_and_a_change_is_still_seen(tmp_path, ws, emb, monkeypatch):
    """A no-op is told from the manifest's header (the corpus stamp, settings, versions, embedder): no
    article is read and no item hash compared; any article write moves the stamp, so a change is seen."""
    from skillrag.search import index

    build_index(ws, embedder=emb)

    def no_items(*a, **k):
        raise AssertionError("a no-op re-index read the items")

    with monkeypatch.context() as m:
        m.setattr(index, "collect_items", no_items)
        m.setattr(index, "collect_changes", no_items)
        m.setattr(index.VectorStore, "get", no_items)
        report = build_index(ws, embedder=emb)
    assert report.up_to_date and report.items == 5 and report.passages == 5 and report.embedded == 0
    with ws.connect() as conn, conn:  # any writer: the stamp is kept by triggers in the store
        conn.execute("UPDATE articles SET title = 'Wires abroad' WHERE id = 'wire'")
    report = build_index(ws, embedder=emb)
    assert report.changed == ["wire"] and not report.up_to_date
    assert build_index(ws, embedder=emb).up_to_date


def test_an_index_without_the_stamp_is_checked_item_by_item(ws, emb):
    """An index written before the header had a stamp (no header.json) takes the long way, still a no-op."""
    build_index(ws, embedder=emb)
    (ws.state_dir / "search" / "direct" / "header.json").unlink()
    report = build_index(ws, embedder=emb)
    assert report.up_to_date and report.items == 5


def test_a_new_embedder_rebuilds_from_scratch_but_the_cache_serves_a_repeat(ws):
    a, b = HashEmbedder(salt="a"), HashEmbedder(salt="b")
    build_index(ws, embedder=a)
    assert build_index(ws, embedder=b).embedded == 5
    again = HashEmbedder(salt="a")
    report = build_index(ws, embedder=again)
    assert report.embedded == 0 and report.reused == 5 and again.calls == 0


def test_search_on_a_stale_index_says_so(tmp_path, ws, emb):
    build_index(ws, embedder=emb)
    retriever = open_retriever(ws, embedder=emb)
    assert retriever.search("wire", k=1)
    src = tmp_path / "src" / "cards"
    (src / "new_card.md").write_text("# A new card\n\nBrand new.\n")
    ingest(ws, [src], tag="cards")
    with pytest.raises(IndexStateError, match=r"stale \(0 changed, 1 added, 0 removed.*skillrag index"):
        retriever.search("wire", k=1)
    with pytest.raises(IndexStateError, match="stale"):
        open_retriever(ws, embedder=emb).search("wire")
    build_index(ws, embedder=emb)
    assert open_retriever(ws, embedder=emb).search("brand new card", k=1)[0].article_id == "new_card"


def test_index_from_another_embedder_or_settings_is_refused(ws, emb):
    build_index(ws, embedder=emb)
    with pytest.raises(IndexStateError, match="built with embedder"):
        open_retriever(ws, embedder=HashEmbedder(dim=32))
    ws.config.search.passage_words = 20
    with pytest.raises(IndexStateError, match="other settings"):
        open_retriever(ws, embedder=emb)


def test_an_index_built_under_another_stemmer_or_stop_list_is_refused(ws, emb, monkeypatch):
    """Issue 24: PyStemmer 2.2 stems "internationally" to `intern`, 3.1 to `internat`; an index built
    under one and searched under the other was accepted silently. The manifest records both."""
    from skillrag.text import _analyzer

    build_index(ws, embedder=emb)
    built = read_manifest(ws, "direct")["versions"]
    assert built["pystemmer"] and len(built["stopwords_sha256"]) == 16
    monkeypatch.setattr(_analyzer.Stemmer, "version", lambda: "2.2.0.3")
    with pytest.raises(IndexStateError, match=rf"pystemmer {built['pystemmer']} \(now 2.2.0.3\); "
                       r"run `skillrag index --backend direct`"):
        open_retriever(ws, embedder=emb)
    report = build_index(ws, embedder=emb)
    assert not report.up_to_date and report.embedded == 0  # the terms are re-analysed, no vector re-embedded
    assert open_retriever(ws, embedder=emb).search("wire", k=1)
    monkeypatch.setitem(_analyzer.STOPWORD_LISTS, "en", _analyzer.STOPWORD_LISTS["en"] - {"the"})
    with pytest.raises(IndexStateError, match=r"stopwords_sha256 \w+ \(now \w+\)"):
        open_retriever(ws, embedder=emb)


def test_the_refusal_names_the_setting_that_differs(ws, emb):
    build_index(ws, embedder=emb)
    ws.config.search.bm25_k1 = 1.2
    with pytest.raises(IndexStateError, match=r"other settings .*: bm25_k1 1.5 \(now 1.2\); run `skillrag index"):
        open_retriever(ws, embedder=emb)


def test_missing_or_damaged_index(ws, emb):
    with pytest.raises(IndexStateError, match="no direct search index.*skillrag index"):
        open_retriever(ws, embedder=emb)
    build_index(ws, embedder=emb)
    (ws.state_dir / "search" / "direct" / "rows.npy").write_bytes(b"junk")
    with pytest.raises(IndexStateError, match="damaged"):
        open_retriever(ws, embedder=emb)
    report = build_index(ws, embedder=emb, force=True)
    assert report.reused == 5 and open_retriever(ws, embedder=emb).search("wire")


def test_empty_corpus_is_a_clear_error(tmp_path, emb):
    ws = Workspace.init(tmp_path / "empty")
    with pytest.raises(EmptyInputError, match="corpus is empty"):
        build_index(ws, backend="direct", embedder=emb)
    # the default backend (wiki) first needs a layer, which `wiki build` refuses to make without articles
    with pytest.raises(IndexStateError, match="no navigation layer.*skillrag wiki build"):
        build_index(ws, embedder=emb)


def test_removed_article_leaves_the_index(tmp_path, ws, emb):
    build_index(ws, embedder=emb)
    (tmp_path / "src" / "accounts" / "wire.md").unlink()
    ingest(ws, [tmp_path / "src" / "accounts"], tag="accounts")
    report = build_index(ws, embedder=emb)
    assert report.removed == ["wire"] and report.items == 4
    ids = [h.article_id for h in open_retriever(ws, embedder=emb).search("wire abroad swift", k=10)]
    assert "wire" not in ids
    first = (ws.state_dir / "search" / "direct" / "items.jsonl").read_text().splitlines()[0]
    assert json.loads(first)["id"] != "wire"


def test_build_reports_progress_to_the_total(ws, emb):
    seen = []
    build_index(ws, embedder=emb, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (5, 5) and seen[0][1] == 5



class _FailingEmbedder(HashEmbedder):
    """Fails on its n-th ``embed`` call, like a build killed half-way."""

    def __init__(self, fail_on: int) -> None:
        super().__init__()
        self.fail_on = fail_on

    def embed(self, texts):
        if self.calls + 1 == self.fail_on:
            self.calls += 1
            raise KeyboardInterrupt
        return super().embed(texts)


def test_an_interrupted_build_resumes_where_it_stopped(tmp_path):
    from .conftest import make_workspace

    files = {f"cards/a{i:02d}.md": f"# Article {i}\n\nword{i} text about topic {i}.\n" for i in range(70)}
    ws = make_workspace(tmp_path, files=files)
    failing = _FailingEmbedder(fail_on=2)  # batches of 32: the first is stored, the second dies
    with pytest.raises(KeyboardInterrupt):
        build_index(ws, embedder=failing)
    assert read_manifest(ws, "direct") is None  # nothing half-built is visible
    resumed = HashEmbedder()
    report = build_index(ws, embedder=resumed)
    assert report.reused == 32 and report.embedded == 38 and len(resumed.texts_embedded) == 38
    assert open_retriever(ws, embedder=resumed).search("word69", k=1)[0].article_id == "a69"


class _CountingEmbedder(HashEmbedder):
    """Records the batches it is given and counts tokens as words."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def token_counts(self, texts):
        return [len(t.split()) for t in texts]

    def embed(self, texts):
        self.batches.append(list(texts))
        return super().embed(texts)


def test_passages_are_embedded_in_batches_of_similar_token_length(tmp_path):
    from .conftest import make_workspace

    files = {f"cards/a{i:02d}.md": f"# Article {i}\n\n" + " ".join(f"w{i}" for _ in range((i * 37) % 90 + 1))
             for i in range(40)}
    ws = make_workspace(tmp_path, files=files)
    ws.config.search.embed_batch = 8
    e = _CountingEmbedder()
    report = build_index(ws, embedder=e)
    assert report.embedded == 40 and [len(b) for b in e.batches] == [8] * 5
    sizes = [e.token_counts(b) for b in e.batches]
    assert all(max(a) <= min(b) for a, b in itertools.pairwise(sizes))  # batch after batch, longer
    assert open_retriever(ws, embedder=e).search("w39", k=1)[0].article_id == "a39"
