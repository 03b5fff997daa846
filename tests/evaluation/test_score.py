"""`eval score`: outputs others saved, re-validated and scored with the eval run metrics and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.errors import EmptyInputError, UserError
from skillrag.evaluation.metrics import Reference, ScoredCase, compute_metrics
from skillrag.evaluation.score import ArmRuns, parse_arm, score_runs, score_summary
from skillrag.skill.cases import CaseFile

from .conftest import kb_output, save_run

LOST_OK = [("kb_card_lost", "Freeze the card with `freeze_card_4410` and confirm the freeze."),
           ("kb_card_lost", "Order a replacement card with `order_replacement_card_2231`.")]


def _runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    save_run(runs, "lost", kb_output("lost", LOST_OK, "1. Freeze with freeze_card_4410.\n"
                                                      "2. order_replacement_card_2231."))
    # cites the right article, but the quote is not in it: rejected on re-validation
    save_run(runs, "wire", kb_output("wire", [("kb_wire", "Use submit_wire_9001 right away, no approval.")],
                                     "Call submit_wire_9001."))
    # a built-in harness run that failed after an earlier accepted one: the old output is not used
    save_run(runs, "stolen", kb_output("stolen", LOST_OK[:1]),
             record={"case_id": "stolen", "status": "budget_exceeded", "error": "query budget spent",
                     "queries": ["a", "b"], "fetches": [], "wall_ms": 100})
    save_run(runs, "other-case", kb_output("other-case", LOST_OK[:1]))  # not in the case file
    return runs


def test_statuses_metrics_and_lists(kb, tmp_path):
    ws, cases = kb
    cf = CaseFile(cases)
    out = score_runs(ws, cf, [ArmRuns("ext", _runs(tmp_path))])
    res = out.results["ext"]
    assert {c: r.status for c, r in res.items()} == {
        "lost": "accepted", "wire": "failed", "travel": "missing", "stolen": "budget_exceeded"}
    assert out.missing["ext"] == ["travel"]
    assert set(out.failed["ext"]) == {"wire", "stolen"}
    assert "not a verbatim substring" in res["wire"].error and res["wire"].output is None
    assert "earlier run" in res["stolen"].error
    assert out.extra["ext"] == ["other-case"]
    lost = res["lost"].metrics
    assert lost["accepted"] is True and lost["docs_cited_recall"] == 1.0 and lost["tools_grounded_all"] is True
    # the rejected output cited the right article and named the tool: it still scores as a failed case
    wire = res["wire"].metrics
    assert wire["accepted"] is False and wire["docs_consulted_recall"] == 0.0 and wire["tools_in_guidance_all"] is False
    assert res["stolen"].metrics["queries"] == 2.0  # the failed run's cost still counts
    # the same registry computes the same values as for an eval run of the same output
    ref = Reference.from_ground_truth(cf.ground_truth("lost"))
    assert lost == compute_metrics(ScoredCase("lost", "accepted", res["lost"].output, ref, None))
    rep = out.report(reference_arm="ext")
    summary = score_summary(out, rep)
    assert summary["n"] == 4 and summary["metrics"]["accepted"]["k"] == 1
    assert summary["metrics"]["accepted"]["mean"] == 0.25
    assert summary["metrics"]["docs_cited_recall"] == {"kind": "fraction", "mean": 0.25, "n": 4}
    assert [c["case_id"] for c in summary["cases"]] == ["lost", "wire", "travel", "stolen"]
    assert any("no output" in n and "travel" in n for n in rep.notes)


def test_only_ran_and_case_ids(kb, tmp_path):
    ws, cases = kb
    cf = CaseFile(cases)
    runs = _runs(tmp_path)
    out = score_runs(ws, cf, [ArmRuns("ext", runs)], only_ran=True)
    assert out.case_ids == ["lost", "wire", "stolen"] and out.missing["ext"] == []
    out = score_runs(ws, cf, [ArmRuns("ext", runs)], case_ids=["travel", "lost"])
    assert list(out.results["ext"]) == ["travel", "lost"] and out.missing["ext"] == ["travel"]
    with pytest.raises(UserError, match="not in kb_cases.jsonl: nope"):
        score_runs(ws, cf, [ArmRuns("ext", runs)], case_ids=["nope"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EmptyInputError):
        score_runs(ws, cf, [ArmRuns("ext", empty)], only_ran=True)


def test_audit_block_is_checked_and_case_id_must_match_folder(kb, tmp_path):
    from skillrag.skill import SkillRegistry, SkillTools

    ws, cases = kb
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"))
    runs = tmp_path / "runs"
    saved = tools.save_output(kb_output("lost", LOST_OK), runs / "lost" / "output.json")
    tampered = dict(saved.output)
    tampered["audit"] = {**tampered["audit"], "snippets": [{**tampered["audit"]["snippets"][0], "start": 0}]}
    save_run(runs, "lost", tampered)
    save_run(runs, "wire", kb_output("travel", [("kb_travel", "Customers travelling abroad can add a travel notice")]))
    res = score_runs(ws, CaseFile(cases), [ArmRuns("ext", runs)], only_ran=True).results["ext"]
    assert res["lost"].status == "failed" and "audit.snippets[0]" in res["lost"].error
    assert res["wire"].status == "failed" and "in the output of run folder 'wire'" in res["wire"].error


def test_several_arms_get_the_paired_report(kb, tmp_path):
    ws, cases = kb
    good, bad = tmp_path / "good", tmp_path / "bad"
    for cid in ("lost", "stolen"):
        save_run(good, cid, kb_output(cid, LOST_OK, "freeze_card_4410 then order_replacement_card_2231"))
    save_run(bad, "lost", kb_output("lost", LOST_OK[:1], "freeze_card_4410"))
    out = score_runs(ws, CaseFile(cases), [ArmRuns("good", good), ArmRuns("bad", bad)], only_ran=True)
    rep = out.report(reference_arm="good")
    cmp = rep.paired["bad"]["accepted"]
    assert (cmp.n_paired, cmp.test.b, cmp.test.c) == (2, 1, 0)  # bad has no output for "stolen"
    assert out.missing["bad"] == ["stolen"]
    summary = score_summary(out, rep)
    assert summary["n"] == 2 and summary["reference_arm"] == "good"
    assert summary["arms"]["good"]["metrics"]["tools_grounded_all"]["k"] == 2
    assert summary["paired"]["bad"]["accepted"]["b"] == 1


def test_arm_spec_parsing():
    assert parse_arm("a=runs/x") == ArmRuns("a", Path("runs/x"))
    with pytest.raises(UserError, match="NAME=RUNS_DIR"):
        parse_arm("runs")
    with pytest.raises(UserError, match="the name must be"):
        parse_arm("a/b=runs")


def test_cli_json_shape_and_report(kb, tmp_path, capsys):
    ws, cases = kb
    runs = _runs(tmp_path)
    rep_dir = tmp_path / "rep"
    assert main(["eval", "score", str(runs), "--cases", str(cases), "-w", str(ws.root), "--json",
                 "--report", str(rep_dir)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n"] == 4 and data["arm"] == "runs"
    assert data["metrics"]["accepted"]["mean"] == 0.25 and data["missing"] == ["travel"]
    assert {c["case_id"]: c["status"] for c in data["cases"]}["wire"] == "failed"
    assert (rep_dir / "report.md").is_file() and (rep_dir / "results" / "runs.jsonl").is_file()
    # the written results are the eval run format: eval report re-renders them
    assert main(["eval", "report", str(rep_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"][0]["accepted"].startswith("1/4 ")


def test_cli_infers_the_workspace_from_runs_dir(kb, tmp_path, capsys, monkeypatch):
    ws, cases = kb
    save_run(ws.runs_dir, "lost", kb_output("lost", LOST_OK))
    monkeypatch.delenv("SKILLRAG_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "score", str(ws.runs_dir), "--cases", str(cases), "--only-ran", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["accepted"]["k"] == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "score", "RUNS"], "--cases FILE is required"),
    (["eval", "score", "--cases", "CASES"], "give RUNS_DIR or --arm"),
    (["eval", "score", "RUNS", "--cases", "CASES", "--arm", "a=RUNS"], "give RUNS_DIR or --arm"),
    (["eval", "score", "--arm", "a", "--cases", "CASES"], "expected NAME=RUNS_DIR"),
    (["eval", "score", "--arm", "a=RUNS", "--arm", "a=RUNS", "--cases", "CASES"], "given twice"),
    (["eval", "score", "RUNS", "--cases", "CASES", "--judge-model", "test", "--verdicts", "v.jsonl"], "one of"),
    (["eval", "score", "RUNS", "--cases", "CASES", "--judge-model", "test", "--judge-calls", "2"], "odd"),
    (["eval", "score", "--arm", "a=nowhere", "--cases", "CASES"], "no such runs folder"),
    (["eval", "score", "RUNS", "--cases", "CASES", "--reference", "zz"], "is not an arm"),
    (["eval", "score", "--arm", "a=RUNS", "--arm", "b=RUNS", "--cases", "CASES", "--tool-log", "x.jsonl"],
     "ARM=FILE"),
])
def test_cli_errors_are_one_line(kb, tmp_path, capsys, argv, message):
    ws, cases = kb
    runs = _runs(tmp_path)
    argv = [str(runs) if a == "RUNS" else str(cases) if a == "CASES" else a.replace("RUNS", str(runs))
            for a in argv]
    assert main([*argv, "-w", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_cli_judge_model_runs_the_judges_and_records_bad_replies(kb, tmp_path, capsys):
    ws, cases = kb
    runs = _runs(tmp_path)
    # pydantic-ai's TestModel answers with text that is no verdict: every vote fails, nothing crashes
    assert main(["eval", "score", str(runs), "--cases", str(cases), "-w", str(ws.root), "--only-ran", "--json",
                 "--judge-model", "test", "--judge", "guidance_match"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {c["case_id"]: c for c in data["cases"]}
    assert rows["lost"]["judges"]["guidance_match"]["votes"] == [None, None, None]
    assert rows["lost"]["judges"]["guidance_match"]["decision"] is None
    assert rows["wire"]["judges"]["guidance_match"]["decision"] is False  # rejected output: not judged
    assert data["metrics"]["judge:guidance_match"]["failed_decisions"] == 1
    assert data["judge"] == "test"


def test_cli_save_scores_writes_the_file_the_live_judge_writes(kb, tmp_path, capsys):
    from skillrag.evaluation.online import output_sha256, read_scores

    ws, cases = kb
    runs = _runs(tmp_path)
    votes = tmp_path / "votes.jsonl"
    votes.write_text(json.dumps({"arm": "runs", "case_id": "lost", "judge": "correctness", "verdict": "accept",
                                 "voter": "agent-judge"}) + "\n", encoding="utf-8")
    assert main(["eval", "score", str(runs), "--cases", str(cases), "-w", str(ws.root), "--only-ran", "--json",
                 "--verdicts", str(votes), "--save-scores"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["written"]["scores"].startswith("3 ")  # lost, wire, stolen: the folders of scored cases
    lost = read_scores(runs / "lost")
    assert lost["source"] == "eval score" and lost["golden_set"] == str(cases) and lost["status"] == "accepted"
    assert lost["judges"]["correctness"]["decision"] is True
    assert lost["judges"]["correctness"]["votes"][0]["voter"] == "agent-judge"
    assert lost["output_sha256"] == output_sha256(runs / "lost")
    assert read_scores(runs / "wire")["judges"]["correctness"]["decision"] is False  # rejected: not judged
    # without judges there is nothing to save: one line
    assert main(["eval", "score", str(runs), "--cases", str(cases), "-w", str(ws.root), "--save-scores"]) == 2
    assert "--save-scores needs judges" in capsys.readouterr().err
