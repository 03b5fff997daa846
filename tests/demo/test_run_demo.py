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
