"""Report: summary figures from known outcomes, Markdown + HTML + plots written, compare two files."""

from __future__ import annotations

import json

import pytest

from skillrag.errors import EmptyInputError, UserError
from skillrag.evaluation.arms import run_evaluation
from skillrag.evaluation.config import EvalConfig
from skillrag.evaluation.report import NOT_MEASURED, compare_files, load_results, summarize, write_report
from skillrag.evaluation.testing import ScriptedJudge, fake_run_case
from skillrag.skill.cases import CaseFile


def _run(ws, case_path, out, judge=None):
    cf = CaseFile(case_path)
    ids = cf.ids()
    # reference passes 10/12; arm "worse" passes 6 of those → b=4, c=0 on tools_grounded_all
    passes = {"ref": ids[:10], "worse": ids[:6], "other": ids[2:12]}
    cfg = EvalConfig.model_validate({
        "name": "tiny", "cases": str(case_path), "reference_arm": "ref",
        "arms": [{"name": "ref"}, {"name": "worse", "mode": "bm25"}, {"name": "other", "backend": "direct"}],
        **({"judge": {"judges": ["guidance_match", "snippets_sufficient"]}} if judge else {}),
    })
    run_evaluation(ws, cfg, out, case_file=cf, runner=fake_run_case(cf.ground_truth, passes=passes),
                   judge_model=judge.model if judge else None)
    specs = {a.name: a.model_dump() for a in cfg.arms}
    return summarize(load_results(out), name=cfg.name, reference_arm="ref", specs=specs,
                     judge_model="scripted" if judge else None)


def test_summary_figures_match_the_outcomes(ws, case_path, tmp_path):
    rep = _run(ws, case_path, tmp_path / "out")
    arms = {a.name: a for a in rep.arms}
    assert [a.name for a in rep.arms] == ["ref", "worse", "other"]
    assert arms["ref"].rates["tools_grounded_all"].format() == "10/12 83.3% [55.2, 95.3]"
    assert arms["worse"].rates["tools_grounded_all"].k == 6
    cmp = rep.paired["worse"]["tools_grounded_all"]
    assert (cmp.test.b, cmp.test.c) == (4, 0) and cmp.test.p_value == pytest.approx(0.125)
    assert cmp.delta_pp == pytest.approx(-100 * 4 / 12)
    cmp = rep.paired["other"]["tools_grounded_all"]
    assert (cmp.test.b, cmp.test.c) == (2, 2) and cmp.test.p_value == pytest.approx(1.0)
    # the localiser: guidance names every tool in all 12 cases; the 2 gap cases of ref consulted 1 of 2 docs
    gap = arms["ref"].gaps[0]
    assert gap.gap_cases == 2 and gap.gap_docs_missed == 2 and gap.gap_pp == pytest.approx(100 * 2 / 12)
    assert arms["ref"].medians["queries"] == 3 and arms["ref"].medians["search_seconds"] == pytest.approx(0.015)
    assert rep.judge_names == [] and NOT_MEASURED in rep.notes[0]
    # recall: worse consults 1 of 2 docs on 4 more cases than ref → mean delta -4 * 0.5 / 12
    d = rep.paired_scores["worse"]["docs_consulted_recall"]
    assert d.n_nonzero == 4 and d.mean_delta == pytest.approx(-2 / 12) and d.p_value is not None


def test_report_files_contain_intervals_and_tests(ws, case_path, tmp_path):
    rep = _run(ws, case_path, tmp_path / "out")
    paths = write_report(rep, tmp_path / "out")
    md = paths["md"].read_text()
    html = paths["html"].read_text()
    for text in (md, html):
        assert "10/12 83.3% [55.2, 95.3]" in text
        assert "0.125" in text  # McNemar p of worse vs ref
        assert NOT_MEASURED in text
        assert "investment localiser" in text
        assert "Wilcoxon" in text
    assert "<table>" in html and "rates.png" in html
    assert paths["rates"].stat().st_size > 1000 and paths["latency"].read_bytes()[:4] == b"\x89PNG"
    assert json.loads(paths["json"].read_text())["reference_arm"] == "ref"


def test_report_with_judges(ws, case_path, tmp_path):
    judge = ScriptedJudge(["VERDICT: accept", "VERDICT: accept", "VERDICT: reject"], cycle=True)
    rep = _run(ws, case_path, tmp_path / "out", judge=judge)
    assert rep.judge_names == ["guidance_match", "snippets_sufficient"]
    s = rep.arms[0].judges["guidance_match"]
    assert s.rate.k == 12 and s.split_cases == 12 and s.calls == 36 and s.disagreement == pytest.approx(1 / 3)
    assert "judge:snippets_sufficient" in rep.paired["worse"]
    assert any(g.evidence_metric == "judge:snippets_sufficient" for g in rep.arms[0].gaps)
    md = write_report(rep, tmp_path / "out")["md"].read_text()
    assert "Guidance-Match" in md and "single-call disagreement" in md and NOT_MEASURED not in md


def test_compare_two_result_files(ws, case_path, tmp_path):
    _run(ws, case_path, tmp_path / "out")
    res = tmp_path / "out" / "results"
    cmp = compare_files(res / "ref.jsonl", res / "worse.jsonl")
    assert (cmp["tools_grounded_all"].test.b, cmp["tools_grounded_all"].test.c) == (4, 0)
    with pytest.raises(UserError, match="no such results file"):
        compare_files(res / "ref.jsonl", res / "nope.jsonl")
    with pytest.raises(UserError, match="expected one results file"):
        compare_files(tmp_path / "out", res / "ref.jsonl")
    with pytest.raises(UserError, match="unknown metric"):
        compare_files(res / "ref.jsonl", res / "worse.jsonl", metrics=["bleu"])


def test_empty_results(tmp_path):
    with pytest.raises(EmptyInputError):
        load_results(tmp_path)
    with pytest.raises(EmptyInputError):
        summarize({})
