"""`skillrag run` / `run-batch` through the real CLI entry point, on a workspace built the default way:
the extractive navigation layer and a real (BM25 + hash-embedder) index of the default `wiki` backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.search import build_index
from skillrag.wiki import build_wiki
from skillrag.workspace import Workspace


@pytest.fixture
def indexed(ws: Workspace, cases_path: Path) -> Workspace:
    cfg = ws.config_path.read_text(encoding="utf-8").replace("embedder: minilm-int8", "embedder: hash")
    ws.config_path.write_text(cfg, encoding="utf-8")
    ws = Workspace.open(ws.root)
    assert ws.config.search.embedder == "hash" and ws.config.search.backend == "wiki"  # the library default
    build_wiki(ws, builder="extractive")
    build_index(ws)  # the default backend's needs: the direct index (fused order) and the wiki index
    (ws.root / "cases.jsonl").write_text(cases_path.read_text(encoding="utf-8"), encoding="utf-8")
    return ws


def test_run_prints_guidance_and_evidence(indexed, capsys):
    rc = main(["run", "-w", str(indexed.root), "--case-id", "case_lost"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "guidance · case_lost" in out and "evidence (verbatim)" in out
    assert "Lost or stolen debit cards" in out and "freeze_card_4410" in out
    assert "accepted · harness extractive" in out
    saved = json.loads((indexed.runs_dir / "case_lost" / "output.json").read_text())
    record = json.loads((indexed.runs_dir / "case_lost" / "record.json").read_text())
    assert saved["n_snippets"] >= 1 and record["status"] == "accepted" and record["queries"]


def test_run_with_case_file_and_out_path_json(indexed, tmp_path, capsys):
    case = {
        "case_id": "adhoc_1",
        "contact_reason": "Customer needs to send a wire transfer of $9,000",
        "case_messages": [{"role": "customer", "content": "Who has to approve my wire?"}],
    }
    (tmp_path / "case.json").write_text(json.dumps(case))
    out_file = tmp_path / "res" / "adhoc.json"
    rc = main(
        ["run", "-w", str(indexed.root), "--case", str(tmp_path / "case.json"), "-o", str(out_file), "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["status"] == "accepted"
    assert any(s["source_article"] == "kb_wire" for s in data["output"]["snippets"])
    assert out_file.is_file() and (tmp_path / "res" / "adhoc.record.json").is_file()


def test_run_llm_with_test_model_fails_cleanly(indexed, capsys):
    # pydantic-ai's TestModel calls every tool with made-up arguments: junk the contract rejects
    rc = main(
        ["run", "-w", str(indexed.root), "--case-id", "case_lost", "--harness", "llm", "--model", "test"]
    )
    io = capsys.readouterr()
    assert rc == 1
    assert "error: run failed" in io.err or "error: run budget_exceeded" in io.err
    record = json.loads((indexed.runs_dir / "case_lost" / "record.json").read_text())
    assert record["model"] == "test" and record["model_calls"] >= 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--case-id", "nope"], "no case with id 'nope'"),
        ([], "pass --case FILE, or --case-id ID"),
        (["--case-id", "case_lost", "--harness", "llm"], "needs a model"),
        (["--case-id", "case_lost", "--harness", "llm", "--model", "mystery:x"], "unknown provider"),
        (["--case-id", "case_lost", "--skill", "nope"], "no skill named 'nope'"),
        (["--case", "missing.json"], "no such case file"),
    ],
)
def test_run_bad_input_is_one_error_line(indexed, capsys, args, needle):
    rc = main(["run", "-w", str(indexed.root), *args])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and needle in err
    assert len(err.strip().splitlines()) == 1


def test_run_without_index_says_how_to_fix(ws, cases_path, capsys):
    argv = ["run", "-w", str(ws.root), "--cases", str(cases_path), "--case-id", "case_lost"]
    rc = main(argv)  # the default backend (wiki) and no navigation layer yet: never a silent `direct` run
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "no navigation layer" in err and "`skillrag wiki build`" in err and "search.backend: direct" in err
    build_wiki(ws, builder="extractive")
    rc = main(argv)  # a layer, but no index
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and "run `skillrag index --backend wiki`" in err
    record = json.loads((ws.runs_dir / "case_lost" / "record.json").read_text())  # recorded, as any failure
    assert record["status"] == "failed" and "skillrag index --backend wiki" in record["error"]
    assert not (ws.runs_dir / "case_lost" / "output.json").exists()


def test_run_batch_runs_then_resumes(indexed, capsys):
    rc = main(["run-batch", "-w", str(indexed.root), "--workers", "2", "--json"])
    first = json.loads(capsys.readouterr().out)
    assert rc == 0 and first["counts"] == {"accepted": 2}
    rc = main(["run-batch", "-w", str(indexed.root), "--json"])
    second = json.loads(capsys.readouterr().out)
    assert rc == 0 and second["counts"] == {"skipped": 2}
    # a case whose record is not accepted is run again
    rec_path = indexed.runs_dir / "case_wire" / "record.json"
    rec = json.loads(rec_path.read_text())
    rec["status"] = "failed"
    rec_path.write_text(json.dumps(rec))
    rc = main(["run-batch", "-w", str(indexed.root), "--json"])
    third = json.loads(capsys.readouterr().out)
    assert third["counts"] == {"accepted": 1, "skipped": 1}
    assert [i["status"] for i in third["items"]] == ["skipped", "accepted"]


def test_run_batch_table_and_out_dir(indexed, tmp_path, capsys):
    rc = main(["run-batch", "-w", str(indexed.root), "--ids", "case_wire", "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert rc == 0 and "case_wire" in out and "accepted: 1" in out
    assert (tmp_path / "o" / "case_wire" / "output.json").is_file()
    assert (tmp_path / "o" / "case_wire" / "record.json").is_file()


@pytest.mark.parametrize("case_id", ["../../escaped", "a/b", ".."])
def test_run_rejects_a_case_id_that_would_leave_runs_dir(indexed, tmp_path, capsys, case_id):
    # regression: a hand-written case with id "../../x" wrote record.json outside the workspace
    (tmp_path / "case.json").write_text(json.dumps({"case_id": case_id, "contact_reason": "lost debit card"}))
    rc = main(["run", "-w", str(indexed.root), "--case", str(tmp_path / "case.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "error:" in err and "not a valid case id" in err and "Traceback" not in err
    assert not (tmp_path / "escaped").exists() and not (indexed.root / "escaped").exists()
    assert sorted(p.name for p in indexed.runs_dir.iterdir()) == []


def test_run_out_path_that_is_a_folder_is_a_one_line_error(indexed, tmp_path, capsys):
    # regression: `run -o DIR` wrote DIR.record.json beside the folder, then died on IsADirectoryError
    target = tmp_path / "results"
    target.mkdir()
    assert not list(tmp_path.glob("*.record.json"))
    rc = main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "-o", str(target)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error:") and "is a folder" in err and "Traceback" not in err
    assert not list(tmp_path.glob("*.record.json")) and not any(target.iterdir())


def test_run_out_over_an_existing_file_that_is_not_an_output_is_refused(indexed, tmp_path, capsys):
    """Found by a new user: `run -o cases.jsonl` replaced the case file with an output, `-o docs/x.md` a
    source article. An existing file is replaced only when it is an earlier output."""
    cases = indexed.root / "cases.jsonl"
    before = cases.read_bytes()
    rc = main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "-o", str(cases)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "exists and is not a saved output" in err
    assert cases.read_bytes() == before and not list(indexed.root.glob("cases*.record.json"))
    out = tmp_path / "c.json"
    assert main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "-o", str(out)]) == 0
    assert main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "-o", str(out)]) == 0  # an output: replaced


@pytest.mark.parametrize("suffix", ["/", "/sub/"])
def test_run_out_path_with_a_trailing_slash_names_a_folder_and_is_refused(indexed, tmp_path, capsys, suffix):
    # regression: `run -o newdir/` (missing folder) wrote a file named `newdir`
    target = str(tmp_path / "newdir") + suffix
    rc = main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "-o", target])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "names a folder; -o takes the output file's path" in err and "run-batch --out DIR" in err
    assert not (tmp_path / "newdir").exists() and not list(tmp_path.glob("newdir*"))
    assert not (indexed.runs_dir / "case_lost").exists()


def test_a_model_without_the_llm_harness_is_refused(indexed, capsys):
    """Found by a new user: `run --model openai:gpt-4.1` without `--harness llm` ran the extractive harness
    and exited 0 with no model call."""
    rc = main(["run", "-w", str(indexed.root), "--case-id", "case_lost", "--model", "openai:gpt-4.1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "needs --harness llm" in err
    assert not (indexed.runs_dir / "case_lost").exists()
