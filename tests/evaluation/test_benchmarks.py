"""Benchmarks as data: the packaged demo cases, the tau2 adapter, a plain JSONL file."""

from __future__ import annotations

import json

import pytest

from skillrag.corpus import ingest
from skillrag.errors import UserError
from skillrag.evaluation.arms import ResultsFile, run_evaluation
from skillrag.evaluation.benchmarks import BENCHMARKS, prepare_benchmark
from skillrag.evaluation.config import EvalConfig, load_eval_config
from skillrag.evaluation.testing import fake_run_case
from skillrag.skill.cases import CaseFile


def test_demo_benchmark_runs_through_the_config(ws, tmp_path):
    cfg = EvalConfig.model_validate({"benchmark": {"name": "demo"}, "arms": [{"name": "a"}], "limit": 3})
    bench = prepare_benchmark("demo", tmp_path)
    cf = CaseFile(bench.cases)
    runner = fake_run_case(cf.ground_truth)
    with pytest.raises(UserError, match="skillrag ingest"):
        run_evaluation(ws, cfg, tmp_path / "out", runner=runner)
    ingest(ws, [bench.corpus])
    rep = run_evaluation(ws, cfg, tmp_path / "out", runner=runner)
    assert rep.n_cases == 3
    res = ResultsFile(tmp_path / "out" / "results" / "a.jsonl").load()
    # the demo ground truth names tools, so the tool metrics are defined
    assert all(r.metrics["tools_in_guidance_recall"] is not None for r in res.values())


def test_jsonl_and_errors(case_path, tmp_path):
    assert prepare_benchmark("jsonl", tmp_path, case_path).cases == case_path
    with pytest.raises(UserError, match="unknown benchmark"):
        prepare_benchmark("squad", tmp_path)
    with pytest.raises(UserError, match="needs a source"):
        prepare_benchmark("tau2-banking-dev", tmp_path)
    with pytest.raises(UserError, match="not a tau2-banking folder"):
        prepare_benchmark("tau2-banking-dev", tmp_path, tmp_path)
    with pytest.raises(ValueError, match="exactly one"):
        EvalConfig.model_validate({"arms": [{"name": "a"}]})
    with pytest.raises(ValueError, match="unknown benchmark"):
        EvalConfig.model_validate({"benchmark": {"name": "squad"}, "arms": [{"name": "a"}]})
    p = tmp_path / "e.yaml"
    p.write_text("benchmark: {name: tau2-banking-dev, source: data/tau2}\narms: [{name: a}]\n")
    assert load_eval_config(p).benchmark.source == (tmp_path / "data" / "tau2").resolve()
    assert set(BENCHMARKS) == {"demo", "tau2-banking-dev", "jsonl"}


@pytest.mark.shared
def test_tau2_adapter_on_the_real_dev_set(tau2_dir, tmp_path):
    bench = prepare_benchmark("tau2-banking-dev", tmp_path, tau2_dir)
    cf = CaseFile(bench.cases)
    assert len(cf.ids()) == 46
    truths = [cf.ground_truth(c) for c in cf.ids()]
    assert all(t.required_documents for t in truths)
    assert sum(1 for t in truths if t.expected_tools) >= 40
    docs = {p.stem for p in bench.corpus.glob("*.json")}
    assert all(d in docs for t in truths for d in t.required_documents)
    raw = json.loads((tau2_dir / "tasks_dev.json").read_text())
    assert {t["id"] for t in raw} == set(cf.ids())


def test_example_config_in_the_repo_is_valid():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "eval_tau2.yaml"
    cfg = load_eval_config(path)
    assert cfg.reference == "hybrid-wiki" and len(cfg.arms) == 9
    assert cfg.benchmark.source.parts[-3:] == ("shared", "data", "tau2-banking")
    assert cfg.budget_for(cfg.arm("bm25-direct")).max_fetches == 8
