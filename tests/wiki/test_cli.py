from __future__ import annotations

import json

from skillrag.cli.main import main
from skillrag.wiki import Layer, load_pages


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_build_pages_show_audit(ws, capsys):
    w = str(ws.root)
    rc, out, _ = run(capsys, "wiki", "build", "-w", w)
    assert rc == 0 and "4 pages over 6 articles" in out and "4 created" in out
    rc, out, _ = run(capsys, "wiki", "build", "-w", w)
    assert rc == 0 and "up to date" in out
    rc, out, _ = run(capsys, "wiki", "pages", "-w", w, "--json")
    pages = json.loads(out)
    assert rc == 0 and len(pages) == 4
    assert sorted(p["kind"] for p in pages) == ["aspect", "entity", "entity", "topic"]
    assert sum(len(p["sources"]) for p in pages if p["kind"] != "aspect") == 6
    pid = pages[0]["id"]
    rc, out, _ = run(capsys, "wiki", "show", pid, "-w", w)
    assert rc == 0 and out == Layer(ws).page_path(pid).read_text(encoding="utf-8")
    rc, out, _ = run(capsys, "wiki", "show", pid, "-w", w, "--json")
    assert json.loads(out)["article_ids"] == load_pages(ws)[0].article_ids()
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w)
    assert rc == 0 and "PASS" in out and "6/6" in out
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w, "--json")
    data = json.loads(out)["structure"]
    assert data["ok"] and data["coverage"] == 1.0 and data["dangling"] == []


def test_bad_input_is_one_error_line(ws, capsys):
    w = str(ws.root)
    rc, _, err = run(capsys, "wiki", "show", "no-such-page", "-w", w)
    assert rc == 2 and err.strip() == "error: no wiki page 'no-such-page' (see `skillrag wiki pages`)"
    rc, _, err = run(capsys, "wiki", "show", "../../etc/passwd", "-w", w)
    assert rc == 2 and err.startswith("error: ") and "not a valid page id" in err
    rc, _, err = run(capsys, "wiki", "build", "-w", w, "--variant", "bogus")
    assert rc == 2 and "unknown variant" in err
    rc, _, err = run(capsys, "wiki", "build", "-w", w, "--builder", "llm")
    assert rc == 2 and "needs a model" in err
    rc, _, err = run(capsys, "wiki", "audit", "-w", w, "--fix")
    assert rc == 2 and "--fix needs --links" in err


def test_audit_fails_with_exit_1_on_a_broken_layer(ws, capsys):
    w = str(ws.root)
    run(capsys, "wiki", "build", "-w", w)
    page = load_pages(ws)[0]
    Layer(ws).write(page.model_copy(update={"sources": (), "steps": ()}))
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w)
    assert rc == 1 and "FAIL" in out and "unreferenced" in out


def test_dry_run_prints_a_token_estimate(ws, capsys):
    rc, out, _ = run(capsys, "wiki", "build", "-w", str(ws.root), "--builder", "llm", "--model", "test",
                     "--dry-run", "--json")
    est = json.loads(out)
    assert rc == 0 and est["articles"] == 6 and est["input_tokens"] > 0
    assert not Layer(ws).exists()


def test_llm_build_through_the_cli_with_the_test_model_reports_failures(ws, capsys):
    # pydantic-ai's TestModel fills the schema with placeholder values: the validator must reject them all
    rc, _, err = run(capsys, "wiki", "build", "-w", str(ws.root), "--builder", "llm", "--model", "test")
    assert rc == 1 and err.count("failed: ") == 6 + 1 and "no step links to the article being processed" in err
    assert "failed: aspect:overview: " in err and "must list every article of the aspect" in err


def test_semantic_audit_through_the_cli(ws, capsys):
    w = str(ws.root)
    run(capsys, "wiki", "build", "-w", w)
    n_links = sum(len(p.article_ids()) for p in load_pages(ws))
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w, "--links", "--model", "test", "--json")
    data = json.loads(out)["links"]
    assert rc == 0 and data["links"] == n_links == len(data["judgements"])
    assert data["model"] == "test" and 0.0 <= data["pass_rate"] <= 1.0
    assert data["passed"] + len(data["flagged"]) == n_links
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w, "--links", "--model", "test")
    assert rc == 0 and "semantic audit (test)" in out and f"{n_links} from cache" in out


def test_audit_of_an_empty_workspace_is_an_error_not_a_pass(tmp_path, capsys):
    from skillrag.workspace import Workspace

    Workspace.init(tmp_path / "empty")
    rc, out, err = run(capsys, "wiki", "audit", "-w", str(tmp_path / "empty"))
    assert rc == 2 and "PASS" not in out
    assert err.startswith("error: nothing to audit") and err.count("\n") == 1
