"""`make demo`'s job: the whole pipeline on the packaged help center, offline."""

from __future__ import annotations

import json

import pytest

from skillrag.corpus import ArticleStore
from skillrag.demo import run_demo
from skillrag.skill import normalize
from skillrag.workspace import Workspace


@pytest.mark.slow
def test_demo_runs_end_to_end_and_is_idempotent(tmp_path):
    rep = run_demo(tmp_path / "demo")
    assert [s[0] for s in rep.steps] == ["workspace", "ingest", "wiki build", "index", "run"]
    assert rep.status == "accepted"
    # the run searched the default backend (wiki), so the demo built what it needs: the layer, both indexes
    assert Workspace.open(tmp_path / "demo").config.search.backend == "wiki"
    index_step = {s[0]: s[1] for s in rep.steps}["index"]
    assert index_step.startswith("direct: 37 items") and "; wiki: " in index_step
    saved = json.loads(rep.output_path.read_text())
    assert saved["case_id"] == "hp-001" and saved["snippets"]
    store = ArticleStore(Workspace.open(tmp_path / "demo"))
    for sn in saved["snippets"]:  # every snippet really is in the article it cites
        assert normalize(sn["text"]) in normalize(store.get(sn["source_article"]).body)
    again = run_demo(tmp_path / "demo")
    details = {s[0]: s[1] for s in again.steps}
    assert details["ingest"].startswith("0 added, 0 changed, 37 unchanged")
    assert (tmp_path / "demo" / "cases.jsonl").is_file()
    assert "(up to date)" in details["index"]
    assert again.status == "accepted"


@pytest.mark.slow
def test_demo_cli_next_hint_is_a_command_that_works(tmp_path, capsys):
    # regression: the hint said `--cases <cases.jsonl> --case-id ID`, a placeholder file the user had to guess
    from skillrag.cli.main import main

    ws = tmp_path / "demo"
    assert main(["demo", "--dir", str(ws)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--case-id hp-002" in out and "<cases.jsonl>" not in out
    assert main(["run", "-w", str(ws), "--case-id", "hp-002"]) == 0
    assert (ws / "runs" / "hp-002" / "output.json").is_file()


def test_demo_refuses_a_workspace_that_is_not_its_own(tmp_path, capsys):
    # regression: `demo --dir WS` silently added 37 demo articles to someone's workspace
    from skillrag.cli.main import main
    from skillrag.corpus import ingest

    ws = Workspace.init(tmp_path / "mine")
    src = tmp_path / "src"
    src.mkdir()
    (src / "note.md").write_text("# My note\n\nSomething of my own.\n", encoding="utf-8")
    ingest(ws, [src])
    assert main(["demo", "--dir", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "not the demo's (1 article(s) of its own)" in err
    assert [a.id for a in ArticleStore(ws).list()] == ["note"]  # nothing added
    assert not (ws.state_dir / "demo.json").exists() and not (ws.root / "cases.jsonl").exists()


def test_demo_refuses_a_non_workspace_folder_with_files_and_an_empty_workspace(tmp_path, capsys):
    from skillrag.demo import check_demo_dir
    from skillrag.errors import UserError

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("x")
    with pytest.raises(UserError, match="not a skillrag workspace"):
        check_demo_dir(docs)
    assert sorted(p.name for p in docs.iterdir()) == ["a.txt"]
    Workspace.init(tmp_path / "fresh")  # someone's new, still empty workspace
    with pytest.raises(UserError, match=r"not the demo's \(0 article"):
        check_demo_dir(tmp_path / "fresh")
    (tmp_path / "empty").mkdir()
    check_demo_dir(tmp_path / "empty")  # an empty folder or a new path is fine
    check_demo_dir(tmp_path / "new")


def test_demo_accepts_its_own_workspace_by_marker_or_by_its_articles(tmp_path):
    from skillrag.corpus import ingest
    from skillrag.demo import DEMO_MARKER, check_demo_dir, demo_article_ids
    from skillrag.demo_data import HELP_CENTER

    assert len(demo_article_ids()) == 37
    marked = Workspace.init(tmp_path / "marked")
    (marked.state_dir / DEMO_MARKER).write_text("{}")
    check_demo_dir(marked.root)  # created by the demo (an interrupted run too)
    old = Workspace.init(tmp_path / "old")
    ingest(old, [HELP_CENTER])
    check_demo_dir(old.root)  # a demo workspace made before the marker existed
