"""The arms runner on a tiny fixture with a fake harness: same cases per arm, workers, resume, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrag.errors import ConfigError, EmptyInputError, UserError
from skillrag.evaluation.arms import ResultsFile, arm_workspace, run_evaluation
from skillrag.evaluation.config import ArmSpec, EvalConfig, load_eval_config
from skillrag.evaluation.testing import ScriptedJudge, fake_run_case
from skillrag.skill.cases import CaseFile


def _config(case_path: Path, **kw) -> EvalConfig:
    arms = kw.pop("arms", [
        {"name": "hybrid-wiki", "backend": "wiki", "mode": "hybrid"},
        {"name": "bm25-wiki", "backend": "wiki", "mode": "bm25"},
        {"name": "hybrid-direct", "backend": "direct", "mode": "hybrid"},
    ])
    return EvalConfig.model_validate({"name": "t", "cases": str(case_path), "arms": arms, **kw})


def test_every_arm_runs_the_same_cases_with_its_own_settings(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    ids = cf.ids()
    passes = {"hybrid-wiki": ids[:10], "bm25-wiki": ids[:6], "hybrid-direct": ids[2:9]}
    runner = fake_run_case(cf.ground_truth, passes=passes)
    cfg = _config(case_path, workers=3)
    rep = run_evaluation(ws, cfg, tmp_path / "out", case_file=cf, runner=runner)
    assert rep.n_cases == 12
    assert {a: s["ran"] for a, s in rep.arms.items()} == {"hybrid-wiki": 12, "bm25-wiki": 12, "hybrid-direct": 12}
    by_arm: dict[str, set[str]] = {}
    for call in runner.calls:
        by_arm.setdefault(call["arm"], set()).add(call["case_id"])
        # the arm's workspace view carries its retrieval settings, nothing written to disk
        assert call["ws"].config.search.mode == cfg.arm(call["arm"]).mode
        assert call["ws"].config.search.backend == cfg.arm(call["arm"]).backend
    assert all(v == set(ids) for v in by_arm.values())
    res = ResultsFile(tmp_path / "out" / "results" / "bm25-wiki.jsonl").load()
    assert len(res) == 12
    assert sum(r.metrics["tools_grounded_all"] for r in res.values()) == 6
    assert all(r.metrics["tools_in_guidance_all"] for r in res.values())
    assert ws.config.search.mode == "hybrid"  # the workspace itself is untouched


def test_resume_skips_finished_cases_and_retries_errors(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    out = tmp_path / "out"
    cfg = _config(case_path, arms=[{"name": "a"}])
    failing = fake_run_case(cf.ground_truth, fail={"a": ["case_03", "case_07"]})
    rep = run_evaluation(ws, cfg, out, case_file=cf, runner=failing)
    assert rep.arms["a"] == {"ran": 12, "resumed": 0, "errors": 2}
    res = ResultsFile(out / "results" / "a.jsonl").load()
    assert res["case_03"].status == "error" and "scripted failure" in res["case_03"].error
    assert res["case_03"].metrics["accepted"] is False  # an error scores as a failed case

    fixed = fake_run_case(cf.ground_truth)
    rep = run_evaluation(ws, cfg, out, case_file=cf, runner=fixed)
    assert rep.arms["a"] == {"ran": 2, "resumed": 10, "errors": 0}
    assert sorted(c["case_id"] for c in fixed.calls) == ["case_03", "case_07"]
    res = ResultsFile(out / "results" / "a.jsonl").load()
    assert res["case_03"].status == "accepted" and len(res) == 12

    again = fake_run_case(cf.ground_truth)
    rep = run_evaluation(ws, cfg, out, case_file=cf, runner=again)
    assert rep.arms["a"] == {"ran": 0, "resumed": 12, "errors": 0} and again.calls == []


def test_cut_line_is_skipped_on_resume(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    out = tmp_path / "out"
    cfg = _config(case_path, arms=[{"name": "a"}], limit=3)
    run_evaluation(ws, cfg, out, case_file=cf, runner=fake_run_case(cf.ground_truth))
    path = out / "results" / "a.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # a crash mid-write
    runner = fake_run_case(cf.ground_truth)
    run_evaluation(ws, cfg, out, case_file=cf, runner=runner)
    assert len(runner.calls) == 1


def test_matched_effort_gives_every_arm_the_same_budget(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    cfg = _config(case_path, limit=2, matched_effort={"max_queries": 4, "max_fetches": 6},
                  arms=[{"name": "a", "budget": {"max_queries": 9}}, {"name": "b", "backend": "direct"}])
    runner = fake_run_case(cf.ground_truth)
    run_evaluation(ws, cfg, tmp_path / "out", case_file=cf, runner=runner)
    assert {(c["budget"].max_queries, c["budget"].max_fetches) for c in runner.calls} == {(4, 6)}
    res = ResultsFile(tmp_path / "out" / "results" / "a.jsonl").load()
    assert {r.metrics["queries"] for r in res.values()} == {4.0}

    cfg = _config(case_path, limit=2, arms=[{"name": "a", "budget": {"max_queries": 9}}])
    runner = fake_run_case(cf.ground_truth)
    run_evaluation(ws, cfg, tmp_path / "out2", case_file=cf, runner=runner)
    assert {c["budget"].max_queries for c in runner.calls} == {9}


def test_judges_run_when_a_model_is_given(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    page_text = "NAVPAGE-TEXT solves moving money"
    cfg = _config(case_path, limit=2, arms=[{"name": "a"}], judge={"calls": 3, "judges": ["guidance_match"]})
    judge = ScriptedJudge(["VERDICT: accept", "VERDICT: reject", "VERDICT: accept"], cycle=True)
    run_evaluation(ws, cfg, tmp_path / "out", case_file=cf, runner=fake_run_case(cf.ground_truth, page_text=page_text),
                   judge_model=judge.model)
    res = ResultsFile(tmp_path / "out" / "results" / "a.jsonl").load()
    assert all(r.judges["guidance_match"].decision is True and r.judges["guidance_match"].split for r in res.values())
    assert len(judge.prompts) == 6
    assert all("NAVPAGE" not in p for p in judge.prompts)
    # the page text was in the run record the judge did not see
    assert any("NAVPAGE" in str(r.record) for r in res.values())


def test_variant_arm_uses_a_variant_workspace(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    seen = []

    def preparer(w, arm, out_dir):
        seen.append((arm.name, arm.variant))
        return arm_workspace(w, arm, out_dir)

    cfg = _config(case_path, limit=1, arms=[{"name": "full"}, {"name": "nm", "variant": "no-merge"}])
    run_evaluation(ws, cfg, tmp_path / "out", case_file=cf, runner=fake_run_case(cf.ground_truth), preparer=preparer)
    assert seen == [("full", "full"), ("nm", "no-merge")]


def test_config_errors(case_path, tmp_path):
    with pytest.raises(ValueError):
        _config(case_path, arms=[{"name": "a"}, {"name": "a"}])
    with pytest.raises(ValueError):
        _config(case_path, arms=[{"name": "a", "harness": "llm"}])
    with pytest.raises(ValueError):
        _config(case_path, arms=[{"name": "a", "backend": "direct", "variant": "no-intent"}])
    with pytest.raises(ValueError):
        _config(case_path, arms=[{"name": "a"}], reference_arm="zzz")
    with pytest.raises(ValueError):
        _config(case_path, arms=[{"name": "a"}], judge={"calls": 2})
    p = tmp_path / "e.yaml"
    p.write_text("cases: cases.jsonl\narms: [{name: a, mode: fuzzy}]\n")
    with pytest.raises(ConfigError, match="mode"):
        load_eval_config(p)
    p.write_text("cases: cases.jsonl\narms: [{name: a}]\ncolour: red\n")
    with pytest.raises(ConfigError, match="colour: unknown setting"):
        load_eval_config(p)
    with pytest.raises(ConfigError, match="no such config"):
        load_eval_config(tmp_path / "missing.yaml")
    p.write_text("cases: sub/cases.jsonl\narms: [{name: a}]\n")
    assert load_eval_config(p).cases == (tmp_path / "sub" / "cases.jsonl").resolve()
    assert ArmSpec(name="x").backend == "wiki"


def test_bad_case_selection(ws, case_path, tmp_path):
    cf = CaseFile(case_path)
    with pytest.raises(UserError, match="case_ids not in"):
        run_evaluation(ws, _config(case_path, case_ids=["nope"]), tmp_path / "o", case_file=cf,
                       runner=fake_run_case(cf.ground_truth))
    with pytest.raises(ConfigError):
        run_evaluation(ws, _config(case_path), tmp_path / "o", case_file=cf, runner=fake_run_case(cf.ground_truth),
                       arms=["nope"])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(EmptyInputError):
        CaseFile(empty)


def test_a_missing_index_stops_the_run_instead_of_scoring_every_case_as_failed(ws, case_path, tmp_path):
    # regression: an arm whose search index was never built was reported as 0/N accepted (with a
    # McNemar test against the reference) and `eval run` exited 0
    from skillrag.errors import IndexStateError

    cf = CaseFile(case_path)
    ok = fake_run_case(cf.ground_truth)

    def runner(arm_ws, case, arm, budget):
        if arm.name == "b":
            raise IndexStateError("no wiki search index in WS; run `skillrag index --backend wiki`")
        return ok(arm_ws, case, arm, budget)

    cfg = _config(case_path, arms=[{"name": "a"}, {"name": "b"}], workers=2)
    out = tmp_path / "out"
    with pytest.raises(IndexStateError, match="skillrag index --backend wiki"):
        run_evaluation(ws, cfg, out, case_file=cf, runner=runner)
    assert len(ResultsFile(out / "results" / "a.jsonl").load()) == 12  # finished arms are kept
    assert ResultsFile(out / "results" / "b.jsonl").load() == {}  # no case scored as failed


def test_a_failed_run_is_not_sent_to_the_judges(ws, case_path, tmp_path):
    from skillrag.evaluation.testing import FakeRunResult

    cf = CaseFile(case_path)
    cfg = _config(case_path, limit=2, arms=[{"name": "a"}], judge={"calls": 3, "judges": ["guidance_match"]})
    judge = ScriptedJudge(["VERDICT: accept"], cycle=True)

    def runner(w, case, arm, budget):
        return FakeRunResult(status="failed", output=None, record={"steps": []})

    run_evaluation(ws, cfg, tmp_path / "out", case_file=cf, runner=runner, judge_model=judge.model)
    res = ResultsFile(tmp_path / "out" / "results" / "a.jsonl").load()
    assert judge.prompts == []  # no call spent on an empty output
    for r in res.values():
        j = r.judges["guidance_match"]
        assert j.decision is False and j.votes == [] and j.failure.startswith("no accepted output")
