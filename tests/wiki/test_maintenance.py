from __future__ import annotations

import shutil

import pytest

import skillrag.wiki.layer as layer_mod
from skillrag.corpus import ingest
from skillrag.errors import SkillragError
from skillrag.search import build_index, open_retriever
from skillrag.wiki import Layer, audit_structure, build_wiki, layer_fingerprint, load_pages
from skillrag.wiki.layer import INDEX_HEADER, staging_dir
from skillrag.wiki.testing import Interrupt, ScriptedPageModel


def _files(ws) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in Layer(ws).page_files()}


def test_extractive_rebuilds_only_pages_touching_changed_removed_or_new_articles(ws, corpus_dir, write_articles,
                                                                                 articles):
    build_wiki(ws)
    before = _files(ws)
    arts = dict(articles)
    title, body = arts["doc_cards_gold_001"]
    arts["doc_cards_gold_001"] = (title, body.replace("$95", "$120"))
    del arts["doc_disputes_001"]
    arts["doc_loans_auto_001"] = ("Auto Loan: Applying", "## How to Apply\n\nSubmit the application online.\n")
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    rep = build_wiki(ws)
    assert rep.diff.changed == ["doc_cards_gold_001"]
    assert rep.diff.removed == ["doc_disputes_001"] and rep.diff.new == ["doc_loans_auto_001"]
    after = _files(ws)
    gold = next(p for p in load_pages(ws) if "doc_cards_gold_001" in p.source_ids())
    loans = next(p for p in load_pages(ws) if "doc_loans_auto_001" in p.source_ids())
    # gold's entity page and the overview aspect page (gold_001 is gold's lead article) touch it
    assert rep.updated == sorted([gold.id, "overview"]) and rep.created == [loans.id]
    assert len(rep.deleted) == 1 and rep.deleted[0] + ".md" not in after
    # the untouched page is byte-identical
    untouched = set(before) & set(after) - {gold.id + ".md", "overview.md"}
    assert untouched and all(before[n] == after[n] for n in untouched)
    assert any("$120" in s.text for s in gold.steps)
    audit = audit_structure(ws)
    assert audit.ok and not audit.stale
    log = Layer(ws).log_path.read_text(encoding="utf-8")
    assert "doc_cards_gold_001 (changed) placed on entity page gold-card" in log
    assert "doc_cards_gold_001 (changed) placed on aspect page overview" in log
    assert "doc_disputes_001 (removed) dropped" in log
    # nothing changed since: nothing is written
    again = build_wiki(ws)
    assert again.up_to_date and _files(ws) == after


def test_rebuild_replaces_the_layer(ws):
    build_wiki(ws)
    log = Layer(ws).log_path.read_text(encoding="utf-8")
    rep = build_wiki(ws, rebuild=True)
    assert len(rep.created) == rep.pages == 4 and rep.swapped and audit_structure(ws).ok
    assert Layer(ws).log_path.read_text(encoding="utf-8").startswith(log)  # the log carries over
    assert not staging_dir(ws).exists()


def test_a_killed_build_resumes_to_the_same_pages_and_the_same_index(ws, tmp_path, corpus_dir, make_ws,
                                                                      monkeypatch):
    # regression: pages written before the kill were identical on resume, so never written again,
    # and never got their index line; `wiki build` said "up to date" while `wiki audit` failed
    ref = make_ws(tmp_path / "ref", corpus_dir)
    build_wiki(ref)
    real, calls = layer_mod.atomic_write_text, {"n": 0}

    def dying(path, text):
        if path.parent.name == "pages":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt  # killed after two page files, before index.md
        real(path, text)

    monkeypatch.setattr(layer_mod, "atomic_write_text", dying)
    with pytest.raises(KeyboardInterrupt):
        build_wiki(ws)
    monkeypatch.setattr(layer_mod, "atomic_write_text", real)
    assert len(Layer(ws).page_files()) == 2 and not Layer(ws).index_entries()
    build_wiki(ws)
    assert _files(ws) == _files(ref)
    assert Layer(ws).index_path.read_text(encoding="utf-8") == Layer(ref).index_path.read_text(encoding="utf-8")
    assert audit_structure(ws).ok
    # an index that lost lines some other way is repaired by the next build, even when up to date
    Layer(ws).index_path.write_text(INDEX_HEADER, encoding="utf-8")
    rep = build_wiki(ws)
    assert rep.up_to_date and rep.index_repaired and audit_structure(ws).ok


def test_a_failed_rebuild_leaves_the_layer_in_place(ws, monkeypatch):
    build_wiki(ws)
    before, index = _files(ws), Layer(ws).index_path.read_text(encoding="utf-8")
    fp = layer_fingerprint(ws)
    # no API key: refused before anything is written
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SkillragError):
        build_wiki(ws, builder="llm", model="openai:gpt-4.1", rebuild=True)
    assert _files(ws) == before and layer_fingerprint(ws) == fp and not staging_dir(ws).exists()
    # a model that dies half way through the rebuild: the old layer is still the live one
    with pytest.raises(Interrupt):
        build_wiki(ws, builder="llm", model=ScriptedPageModel(ws, interrupt_at=3).model, rebuild=True)
    assert _files(ws) == before and Layer(ws).index_path.read_text(encoding="utf-8") == index
    assert layer_fingerprint(ws) == fp and audit_structure(ws).ok
    assert staging_dir(ws).exists()  # the work done so far is kept aside for the next attempt
    # the same rebuild again resumes the staged work and swaps the new layer in when complete
    model = ScriptedPageModel(ws)
    rep = build_wiki(ws, builder="llm", model=model.model, rebuild=True)
    assert rep.swapped and not staging_dir(ws).exists()
    assert len([p for p in model.prompts if "Article to place:" in p]) == 6 - 2  # two were done before
    pages = load_pages(ws)
    assert {p.builder for p in pages} == {"llm"} and audit_structure(ws).ok
    assert Layer(ws).manifest().builder == "llm"


def test_an_interrupted_swap_is_finished_by_the_next_build(ws):
    build_wiki(ws)
    build_wiki(ws, variant="pooled-links", rebuild=True)
    staged = staging_dir(ws)
    # simulate a kill between the two renames of a swap: live moved aside, the new layer not yet in
    shutil.copytree(ws.wiki_dir, staged)
    old = ws.wiki_dir.parent / f".{ws.wiki_dir.name}.old"
    ws.wiki_dir.rename(old)
    assert load_pages(ws) == []
    build_wiki(ws, variant="pooled-links")
    assert not old.exists() and not staged.exists() and {p.variant for p in load_pages(ws)} == {"pooled-links"}


def test_index_backend_wiki_reindexes_after_a_variant_rebuild(ws):
    # regression: after `wiki build --variant pooled-links --rebuild` the wiki index said "up to date"
    # (the pages' text is the same) while every search refused it as built from another layer
    build_wiki(ws)
    assert not build_index(ws, backend="wiki", embedder="hash").up_to_date
    assert build_index(ws, backend="wiki", embedder="hash").up_to_date
    build_wiki(ws, variant="pooled-links", rebuild=True)
    rep = build_index(ws, backend="wiki", embedder="hash")
    assert not rep.up_to_date
    hits = open_retriever(ws, backend="wiki", embedder="hash").search("gold card annual fee", k=3)
    assert hits and all(h.page_ids for h in hits)
