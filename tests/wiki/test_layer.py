from __future__ import annotations

import pytest

import skillrag.wiki.layer as layer_mod
from skillrag.errors import IndexStateError
from skillrag.search import build_index
from skillrag.wiki import Layer, build_wiki, layer_fingerprint, load_pages
from skillrag.wiki.page import Page


def test_no_layer_means_no_pages_and_no_fingerprint(ws):
    assert load_pages(ws) == []
    assert layer_fingerprint(ws) is None


def test_index_line_updates_leave_other_lines_alone(ws):
    build_wiki(ws)
    layer = Layer(ws)
    index = layer.index_path.read_text(encoding="utf-8")
    pages = load_pages(ws)
    assert len(layer.index_entries()) == len(pages)
    # a person annotates one line by hand; a code update of another page must keep the annotation
    first, second = pages[0], pages[1]
    line = layer.index_entries()[first.id]
    layer.index_path.write_text(index.replace(line, line + " (reviewed)"), encoding="utf-8")
    layer.write(second.model_copy(update={"intent": "A changed intent."}))
    entries = layer.index_entries()
    assert entries[first.id].endswith("(reviewed)")
    assert "A changed intent." in entries[second.id]
    assert len(entries) == len(pages)
    layer.delete(second.id)
    assert second.id not in layer.index_entries() and not layer.page_path(second.id).exists()


def test_log_is_append_only(ws):
    layer = Layer(ws)
    build_wiki(ws)
    before = layer.log_path.read_text(encoding="utf-8")
    layer.log(["doc_x something happened"])
    after = layer.log_path.read_text(encoding="utf-8")
    assert after.startswith(before) and after.endswith("doc_x something happened\n")


def test_fingerprint_tracks_page_bytes(ws):
    build_wiki(ws)
    fp = layer_fingerprint(ws)
    assert fp and len(fp) == 64 and fp == layer_fingerprint(ws)
    layer = Layer(ws)
    page = load_pages(ws)[0]
    layer.write(page.model_copy(update={"title": page.title + " x"}))
    assert layer_fingerprint(ws) != fp


def test_manifest_records_how_the_layer_was_built(ws):
    build_wiki(ws)
    man = Layer(ws).manifest()
    assert man is not None and man.builder == "extractive" and man.variant == "full"
    assert man.library_version and man.params == {"max_group": 5, "max_steps": 40}
    from skillrag.corpus import ArticleStore

    assert man.articles == ArticleStore(ws).hashes()


def test_pages_are_plain_markdown_files_named_by_id(ws):
    build_wiki(ws)
    for page in load_pages(ws):
        path = Layer(ws).page_path(page.id)
        assert path.name == f"{page.id}.md"
        assert path.read_text(encoding="utf-8").startswith("---\nid: " + page.id)
        assert isinstance(page, Page)


def test_clear_tolerates_a_page_removed_meanwhile(ws, monkeypatch):
    # regression: two concurrent `wiki build --rebuild` runs: the second died on FileNotFoundError
    build_wiki(ws)
    layer = Layer(ws)
    files = layer.page_files()
    files[0].unlink()  # the other build got there first
    monkeypatch.setattr(Layer, "page_files", lambda self: files)
    layer.clear()
    assert not any(f.exists() for f in files) and not layer.index_path.exists()


def test_an_interrupted_first_build_is_not_a_layer_to_index(ws, monkeypatch):
    # regression: after Ctrl-C in the first `wiki build`, `skillrag index --backend wiki` indexed the
    # half-written layer without a word, and searches ran over it until the next build
    real_write, calls = layer_mod.atomic_write_text, {"n": 0}

    def dying_write(path, text):
        if path.parent.name == "pages":
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt  # killed after the first page file was written
        real_write(path, text)

    monkeypatch.setattr(layer_mod, "atomic_write_text", dying_write)
    with pytest.raises(KeyboardInterrupt):
        build_wiki(ws)
    monkeypatch.setattr(layer_mod, "atomic_write_text", real_write)
    assert len(load_pages(ws)) == 1 and layer_fingerprint(ws) is None
    with pytest.raises(IndexStateError, match="wiki build"):
        build_index(ws, backend="wiki", embedder="hash")
    build_wiki(ws)  # finishing the build makes it a layer again
    assert layer_fingerprint(ws) is not None
