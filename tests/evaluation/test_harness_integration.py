"""The arms runner with the real extractive harness (skillrag.harness.run_case) on a three-article
workspace; a word-overlap retriever double stands in for the search index (no model, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.corpus import ingest
from skillrag.evaluation.arms import ResultsFile, harness_runner, run_evaluation
from skillrag.evaluation.config import EvalConfig
from skillrag.evaluation.report import load_results, summarize, write_report
from skillrag.evaluation.testing import ScriptedJudge
from skillrag.skill.cases import CaseFile
from skillrag.skill.testing import FakeRetriever
from skillrag.workspace import Workspace

from .conftest import KB

pytest.importorskip("skillrag.harness")

ARTICLES = KB  # the conftest's three-article knowledge base
CASES = [
    {"case_id": "lost", "contact_reason": "Customer lost their debit card and needs it frozen and replaced",
     "case_messages": [{"role": "customer", "content": "I lost my debit card. Please freeze it."}],
     "ground_truth": {"reference_guidance": "Verify, freeze with freeze_card_4410, order a replacement.",
                      "required_documents": ["kb_card_lost"],
                      "expected_tools": ["freeze_card_4410", "order_replacement_card_2231"]}},
    {"case_id": "wire", "contact_reason": "Customer wants to send a wire transfer of $8,000",
     "ground_truth": {"reference_guidance": "Get a second approver, then submit_wire_9001.",
                      "required_documents": ["kb_wire"], "expected_tools": ["submit_wire_9001"]}},
]


@pytest.fixture
def setup(tmp_path: Path):
    ws = Workspace.init(tmp_path / "ws")
    src = tmp_path / "src"
    src.mkdir()
    (src / "kb.json").write_text(json.dumps(ARTICLES), encoding="utf-8")
    ingest(ws, [src])
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return ws, cases


def test_real_extractive_harness_through_the_arms_runner(setup, tmp_path):
    ws, cases = setup
    cf = CaseFile(cases)
    cfg = EvalConfig.model_validate({
        "name": "it", "cases": str(cases), "matched_effort": {"max_queries": 3, "max_fetches": 4},
        "arms": [{"name": "direct-bm25", "backend": "direct", "mode": "bm25"}],
        "judge": {"judges": ["snippets_sufficient"], "calls": 3},
    })
    opened = []

    def factory(w, arm):
        opened.append(arm.name)
        return FakeRetriever(w)

    judge = ScriptedJudge(["VERDICT: accept"], cycle=True)
    out = tmp_path / "out"
    runner = harness_runner(cf, out / "runs", retriever_factory=factory)
    rep = run_evaluation(ws, cfg, out, case_file=cf, runner=runner, judge_model=judge.model)
    assert rep.arms["direct-bm25"]["errors"] == 0
    assert opened == ["direct-bm25"]  # one retriever for the whole arm
    res = ResultsFile(out / "results" / "direct-bm25.jsonl").load()
    lost = res["lost"]
    assert lost.status == "accepted", lost.error
    assert lost.metrics["docs_consulted_recall"] == 1.0
    assert 1 <= lost.metrics["queries"] <= 3 and lost.metrics["fetches"] <= 4  # the matched budget held
    assert lost.metrics["seconds"] > 0 and lost.metrics["search_seconds"] >= 0
    assert lost.record["budgets"]["max_queries"] == 3
    assert (out / "runs" / "direct-bm25" / "lost.json").exists()
    # judges saw the verbatim snippets of the saved output
    assert any("freeze_card_4410" in p or "Freeze the card" in p for p in judge.prompts)
    report = summarize(load_results(out), reference_arm="direct-bm25")
    paths = write_report(report, out)
    assert "Snippets-Sufficient" in paths["md"].read_text()


def test_variant_arm_builds_its_own_layer_and_index(setup, tmp_path):
    from skillrag.search import build_index, open_retriever
    from skillrag.wiki import Layer, build_wiki
    from skillrag.workspace.config import load_config

    ws, _cases = setup
    cfg_ws = load_config(ws.config_path)
    cfg_ws.search.embedder = "hash"  # deterministic test embedder, no model file
    ws = Workspace(root=ws.root, config=cfg_ws)
    build_wiki(ws, builder="extractive", variant="full")
    build_index(ws, backend="wiki")

    from skillrag.evaluation.arms import arm_workspace
    from skillrag.evaluation.config import ArmSpec

    out = tmp_path / "out"
    full = arm_workspace(ws, ArmSpec(name="full", mode="bm25"), out)
    assert full.root == ws.root and full.config.search.mode == "bm25"
    arm = ArmSpec(name="nm", variant="no-merge", mode="bm25")
    vws = arm_workspace(ws, arm, out)
    assert vws.root == (out / "variants" / "no-merge").resolve()
    assert Layer(vws).manifest().variant == "no-merge"
    assert Layer(ws).manifest().variant == "full"  # the source layer is untouched
    assert len(Layer(vws).pages()) == len(ARTICLES)  # no merged entities: one page per article
    hits = open_retriever(vws, backend="wiki", mode="bm25").search("wire transfer approver", k=3)
    assert hits and hits[0].article_id == "kb_wire"
    again = arm_workspace(ws, arm, out)  # reused, not rebuilt
    assert again.root == vws.root


def test_eval_run_cli_end_to_end_with_a_real_index(setup, tmp_path, capsys):
    """`skillrag eval run` over a real direct index (hash embedder), real extractive harness, and a
    judge model resolved from a spec (pydantic-ai's TestModel, whose replies carry no verdict)."""
    from skillrag.cli.main import main
    from skillrag.search import build_index
    from skillrag.workspace.config import dump_config, load_config

    ws, cases = setup
    cfg_ws = load_config(ws.config_path)
    cfg_ws.search.embedder = "hash"
    ws.config_path.write_text(dump_config(cfg_ws), encoding="utf-8")
    build_index(Workspace.open(ws.root), backend="direct")
    conf = tmp_path / "eval.yaml"
    conf.write_text(
        f"name: e2e\ncases: {cases}\nreference_arm: bm25\nworkers: 2\n"
        "judge: {model: test, calls: 3, judges: [correctness]}\n"
        "arms:\n  - {name: bm25, backend: direct, mode: bm25}\n  - {name: hybrid, backend: direct, mode: hybrid}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["eval", "run", str(conf), "-w", str(ws.root), "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["arm"] for r in data["summary"]} == {"bm25", "hybrid"}
    res = ResultsFile(out / "results" / "hybrid.jsonl").load()
    assert set(res) == {"lost", "wire"} and all(r.status == "accepted" for r in res.values())
    verdict = res["lost"].judges["correctness"]
    assert verdict.decision is None and "no majority" in verdict.failure  # unparseable → failure, no crash
    md = (out / "report.md").read_text()
    assert "Correctness (reference-free)" in md and "0/2 0.0%" in md
    # a second run resumes: nothing re-runs
    assert main(["eval", "run", str(conf), "-w", str(ws.root), "--out", str(out), "--json"]) == 0
    assert len((out / "results" / "hybrid.jsonl").read_text().splitlines()) == 2


def test_llm_arm_runs_with_a_model_spec_and_records_tokens(setup, tmp_path):
    """An llm-harness arm resolves its model from the spec ("test" = pydantic-ai TestModel, whose junk
    saves the evidence contract rejects): the cases fail, nothing crashes, tokens are counted."""
    ws, cases = setup
    cf = CaseFile(cases)
    cfg = EvalConfig.model_validate({"name": "llm", "cases": str(cases), "arms": [
        {"name": "llm", "harness": "llm", "model": "test", "backend": "direct"}]})
    out = tmp_path / "out"
    run_evaluation(ws, cfg, out, case_file=cf,
                   runner=harness_runner(cf, out / "runs", retriever_factory=lambda w, a: FakeRetriever(w)))
    res = ResultsFile(out / "results" / "llm.jsonl").load()
    assert {r.status for r in res.values()} == {"failed"}
    assert all(r.metrics["accepted"] is False and r.metrics["tokens"] > 0 for r in res.values())
    assert all(r.record["harness"] == "llm" and "rejected" in r.record["error"] for r in res.values())


def test_tool_gaps_reach_the_report(setup, tmp_path):
    ws, cases = setup
    cf = CaseFile(cases)
    cfg = EvalConfig.model_validate({"name": "g", "cases": str(cases), "arms": [{"name": "a", "backend": "direct"}]})
    out = tmp_path / "out"
    run_evaluation(ws, cfg, out, case_file=cf,
                   runner=harness_runner(cf, out / "runs", retriever_factory=lambda w, a: FakeRetriever(w)))
    res = ResultsFile(out / "results" / "a.jsonl").load()
    # every expected tool of the two cases is named in the corpus, so none is "not_in_corpus"
    assert all(r.tool_gaps["not_in_corpus"] == 0 and sum(r.tool_gaps.values()) >= 1 for r in res.values())
    report = summarize(load_results(out))
    assert sum(report.arms[0].tool_gaps.values()) == 3
    assert "Where the expected tools stand" in write_report(report, out)["md"].read_text()


def test_an_arm_budget_is_resolved_over_the_skill_and_workspace_by_the_one_resolver(setup, tmp_path):
    """An arm's ``budget`` takes any of the run budgets (``BudgetOverrides``), not only queries and fetches;
    what it leaves unset comes from the skill, then the workspace (``Budgets.resolve``)."""
    from pydantic import ValidationError

    ws, cases = setup
    cf = CaseFile(cases)
    cfg = EvalConfig.model_validate({
        "name": "it", "cases": str(cases), "case_ids": ["lost"],
        "arms": [{"name": "a", "backend": "direct", "mode": "bm25",
                  "budget": {"max_queries": 2, "max_save_retries": 1, "max_seconds": 30}}],
    })
    out = tmp_path / "out"
    runner = harness_runner(cf, out / "runs", retriever_factory=lambda w, arm: FakeRetriever(w))
    run_evaluation(ws, cfg, out, case_file=cf, runner=runner)
    got = ResultsFile(out / "results" / "a.jsonl").load()["lost"].record["budgets"]
    # cs-guidance's skill.yaml sets max_fetches 12 and leaves max_tokens to the workspace (200000)
    assert (got["max_queries"], got["max_save_retries"], got["max_seconds"], got["max_fetches"],
            got["max_tokens"]) == (2, 1, 30.0, 12, 200_000)
    with pytest.raises(ValidationError, match="max_queries"):
        EvalConfig.model_validate({"name": "x", "cases": str(cases), "arms": [{"name": "a", "budget": {"max_queries": 0}}]})
