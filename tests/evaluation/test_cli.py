"""`skillrag eval` through the CLI entry point: metrics, report, compare, and clear errors."""

from __future__ import annotations

import json

import skillrag.evaluation as ev
from skillrag.cli.main import main
from skillrag.evaluation.arms import run_evaluation
from skillrag.evaluation.config import EvalConfig
from skillrag.evaluation.testing import fake_run_case
from skillrag.skill.cases import CaseFile


def test_public_names_are_pinned():
    assert sorted(ev.__all__) == sorted(set(ev.__all__))
    for name in ev.__all__:
        assert hasattr(ev, name), name


def test_metrics_lists_registry(capsys):
    assert main(["eval", "metrics", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert {"tools_grounded_all", "judge:snippets_sufficient", "judge:correctness"} <= names


def _results(ws, case_path, out):
    cf = CaseFile(case_path)
    ids = cf.ids()
    cfg = EvalConfig.model_validate({"name": "cli", "cases": str(case_path), "arms": [{"name": "a"}, {"name": "b"}]})
    run_evaluation(ws, cfg, out, case_file=cf,
                   runner=fake_run_case(cf.ground_truth, passes={"a": ids[:9], "b": ids[:4]}))


def test_report_and_compare(ws, case_path, tmp_path, capsys):
    out = tmp_path / "out"
    _results(ws, case_path, out)
    assert main(["eval", "report", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert data["summary"][0]["tools_grounded_all"] == "9/12 75.0% [46.8, 91.1]"
    assert main(["eval", "compare", str(out / "results" / "a.jsonl"), str(out / "results" / "b.jsonl"),
                 "--metric", "tools_grounded_all", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)["tools_grounded_all"]
    assert (cmp["test"]["b"], cmp["test"]["c"]) == (5, 0)
    assert round(cmp["test"]["p_value"], 4) == 0.0625


def test_errors_are_one_line(tmp_path, capsys):
    assert main(["eval", "run", str(tmp_path / "missing.yaml"), "-w", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no such config file" in err and err.count("\n") == 1
    assert main(["eval", "report", str(tmp_path)]) == 2
    assert "no results" in capsys.readouterr().err
    assert main(["eval", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 2
    assert "no such results file" in capsys.readouterr().err


def test_run_command_with_a_bad_arm(ws, case_path, tmp_path, capsys):
    cfg = tmp_path / "e.yaml"
    cfg.write_text(f"cases: {case_path}\narms: [{{name: a}}]\n")
    assert main(["eval", "run", str(cfg), "-w", str(ws.root), "--arm", "zzz"]) == 2
    assert "no arm named 'zzz'" in capsys.readouterr().err
