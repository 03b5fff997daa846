"""`skillrag index` / `skillrag search` through the real entry point."""

import json

from skillrag.cli.main import main


def test_index_then_search_json(ws, capsys):
    assert main(["index", "-w", str(ws.root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reports"][0]["items"] == 5 and out["reports"][0]["embedded"] == 5
    assert main(["index", "-w", str(ws.root)]) == 0
    assert "direct: up to date (5 items" in capsys.readouterr().out
    assert main(["search", "swift wire abroad", "-w", str(ws.root), "-k", "2", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)  # the same object on both backends; no pages on direct
    assert set(got) == {"hits", "pages"} and got["pages"] == []
    hits = got["hits"]
    assert len(hits) == 2 and hits[0]["article_id"] == "wire"
    assert set(hits[0]) == {"article_id", "score", "relevance", "bm25_rank", "dense_rank", "title", "section",
                            "preview", "page_ids", "category", "customer_type"}
    assert hits[0]["page_ids"] == []


def test_search_table_and_filters(ws, capsys):
    main(["index", "-w", str(ws.root)])
    capsys.readouterr()
    assert main(["search", "card", "-w", str(ws.root), "--mode", "bm25", "--tag", "cards"]) == 0
    out = capsys.readouterr().out
    assert "lost_card" in out and "card_fees" in out and "wire" not in out
    assert main(["search", "account", "-w", str(ws.root), "--prefix", "open_", "--json"]) == 0
    assert [h["article_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["open_savings"]
    assert main(["search", "account", "-w", str(ws.root), "--title-contains", "SAVINGS", "--json"]) == 0
    assert [h["article_id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["open_savings"]


def test_cli_errors_are_one_line(ws, capsys):
    assert main(["search", "wire", "-w", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no direct search index") and err.count("\n") == 1
    main(["index", "-w", str(ws.root)])
    capsys.readouterr()
    assert main(["search", "  ", "-w", str(ws.root)]) == 2
    assert capsys.readouterr().err == "error: empty query: give some words to search for\n"
    assert main(["search", "wire", "-w", str(ws.root), "--mode", "fuzzy"]) == 2
    assert "unknown mode 'fuzzy'" in capsys.readouterr().err
    assert main(["index", "-w", str(ws.root), "--embedder", "nope"]) == 2
    assert "unknown embedder 'nope'" in capsys.readouterr().err


def test_wiki_backend_without_a_layer(ws, capsys):
    assert main(["index", "-w", str(ws.root), "--backend", "wiki"]) == 2
    assert "no navigation layer" in capsys.readouterr().err
    assert main(["index", "-w", str(ws.root), "--backend", "all"]) == 0
    captured = capsys.readouterr()
    assert "direct: 5 items" in captured.out and "wiki: no navigation layer yet" in captured.err
    assert main(["search", "wire", "-w", str(ws.root), "--backend", "wiki"]) == 2
    assert "skillrag wiki build" in capsys.readouterr().err


def test_wiki_backend_over_a_real_extractive_layer(ws, capsys):
    from skillrag.wiki import build_wiki

    build_wiki(ws, builder="extractive")
    assert main(["index", "-w", str(ws.root), "--backend", "wiki"]) == 0
    capsys.readouterr()
    assert main(["search", "swift wire abroad", "-w", str(ws.root), "--backend", "wiki", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    hits, pages = got["hits"], got["pages"]
    assert hits and all(h["page_ids"] for h in hits)
    assert "wire" in [h["article_id"] for h in hits]
    assert pages and pages[0]["page_id"] in hits[0]["page_ids"] + [p["page_id"] for p in pages]
    assert all({"page_id", "kind", "title", "intent", "relevance", "articles"} <= set(p) for p in pages)
    assert any(a["id"] == "wire" for p in pages for a in p["articles"])
    assert main(["search", "swift wire abroad", "-w", str(ws.root), "--backend", "wiki", "--id-prefix", "wire"]) == 0
    out = capsys.readouterr().out
    assert "wire" in out and "page " in out and "lost_card" not in out


def test_the_default_backend_is_wiki_and_index_builds_what_it_needs(tmp_path, capsys):
    """A fresh workspace's flow (init, ingest, wiki build, index) with the library default `wiki`: `index`
    with no --backend builds the direct index (the fused order uses it) and the wiki index; without a layer
    every command refuses with one line and nothing is embedded, never a silent fall back to `direct`."""
    from skillrag.corpus import ingest
    from skillrag.search import read_manifest
    from skillrag.wiki import build_wiki

    from .conftest import make_workspace

    ws = make_workspace(tmp_path, backend=None)
    assert ws.config.search.backend == "wiki" and "backend: wiki" in ws.config_path.read_text()
    for argv in (["index"], ["search", "wire"]):
        assert main([*argv, "-w", str(ws.root)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert "no navigation layer" in err and "`skillrag wiki build`" in err and "--backend direct" in err
    assert read_manifest(ws, "direct") is None and read_manifest(ws, "wiki") is None  # nothing half-done

    build_wiki(ws, builder="extractive")
    assert main(["index", "-w", str(ws.root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["backend"], r["items"] > 0, r["embedded"] > 0) for r in out["reports"]] == [
        ("direct", True, True), ("wiki", True, True)]
    assert out["reports"][0]["items"] == 5 and out["skipped"] == [] and out["notes"] == []
    assert main(["index", "-w", str(ws.root)]) == 0
    printed = capsys.readouterr().out
    assert "direct: up to date (5 items" in printed and "wiki: up to date (" in printed
    assert main(["search", "swift wire abroad", "-w", str(ws.root), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)  # the wiki backend's answer: hits led to by pages, and the pages
    assert got["pages"] and got["hits"][0]["article_id"] == "wire" and got["hits"][0]["page_ids"]
    assert main(["search", "swift wire abroad", "-w", str(ws.root), "--backend", "direct", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["article_id"] == "wire"  # built by the default `index` too

    # a new article is reached through pages only: `index` says the layer is behind until `wiki build`
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "atm.md").write_text("# ATM withdrawals abroad\n\nForeign ATMs charge 3 dollars.\n", encoding="utf-8")
    ingest(ws, [extra], tag="more")
    assert main(["index", "-w", str(ws.root)]) == 0
    printed = capsys.readouterr()
    err = printed.err
    assert "wiki: up to date" not in printed.out  # not beside "the layer is older than the corpus"
    assert "wiki: index up to date with the navigation layer (" in printed.out
    assert "the layer is older than the corpus: run `skillrag wiki build`" in printed.out
    assert "navigation layer is older than the corpus (1 new, 0 changed, 0 removed" in err
    assert "run `skillrag wiki build`, then `skillrag index`" in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1  # one line (beside the progress bars' blanks)
    build_wiki(ws, builder="extractive")
    assert main(["index", "-w", str(ws.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == []
    assert main(["search", "foreign atm withdrawals", "-w", str(ws.root), "-k", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["article_id"] == "atm"
