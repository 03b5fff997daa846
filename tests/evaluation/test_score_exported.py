"""`eval score` on outputs an external harness saved through the exported skill's scripts gives the same
metric values as `eval run` on the same outputs.

`eval run` runs the real extractive harness over a real BM25 index. An "external harness" then replays
each run through the exported scripts in subprocesses, exactly as a coding agent would: load_case.py,
every retrieve.py query and get_article.py fetch the run made, and save_output.py with the run's output
(which lands in WORKSPACE/runs/<case_id>/output.json and appends to the tool log). `eval score` over
that folder must reproduce every metric of `eval run`, the query and fetch counts included (read from
the tool log); only times and tokens differ (another process, no model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.evaluation.arms import ResultsFile, run_evaluation
from skillrag.evaluation.config import EvalConfig
from skillrag.search import build_index
from skillrag.skill import SkillRegistry
from skillrag.skill.cases import CaseFile
from skillrag.skill.export import export_skill
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig

from .conftest import KB, KB_CASES

pytest.importorskip("skillrag.harness")

TIMING = {"seconds", "search_seconds", "generation_seconds", "tokens"}


def _script(folder: Path, name: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLRAG_WORKSPACE", "SKILLRAG_CASES")}
    return subprocess.run([sys.executable, str(folder / "scripts" / f"{name}.py"), *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


@pytest.mark.slow
def test_eval_score_on_exported_script_outputs_matches_eval_run(tmp_path, capsys):
    cfg = WorkspaceConfig(name="ext")
    cfg.search.embedder, cfg.search.backend, cfg.search.mode = "hash", "direct", "bm25"
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    src = tmp_path / "src"
    src.mkdir()
    (src / "kb.json").write_text(json.dumps(KB), encoding="utf-8")
    ingest(ws, [src])
    build_index(ws, backend="direct")
    cases = tmp_path / "cases.jsonl"
    picked = [c for c in KB_CASES if c["case_id"] in ("lost", "wire")]
    cases.write_text("".join(json.dumps(c) + "\n" for c in picked), encoding="utf-8")
    cf = CaseFile(cases)

    # 1. eval run: the built-in extractive harness, outputs kept in the results file
    out = tmp_path / "eval"
    run_evaluation(ws, EvalConfig.model_validate({
        "name": "ref", "cases": str(cases), "matched_effort": {"max_queries": 2, "max_fetches": 3},
        "arms": [{"name": "extractive", "backend": "direct", "mode": "bm25"}]}), out, case_file=cf)
    ran = ResultsFile(out / "results" / "extractive.jsonl").load()
    assert {r.status for r in ran.values()} == {"accepted"}

    # 2. an external harness replays each run through the exported scripts
    skill = export_skill(SkillRegistry(ws).get("cs-guidance"), tmp_path / "export", workspace=ws.root, cases=cases)
    for cid, res in ran.items():
        assert _script(skill, "load_case", cid).returncode == 0
        for step in res.record["steps"]:
            args = step["args"]
            if step["name"] == "retrieve":
                extra = ["-k", str(args["k"])] if "k" in args else []
                r = _script(skill, "retrieve", args["query"], *extra)
            elif step["name"] == "get_article":
                r = _script(skill, "get_article", args["article_id"])
            else:
                continue
            assert r.returncode == 0, r.stderr
        draft = tmp_path / "drafts" / cid / "output.json"
        draft.parent.mkdir(parents=True)
        draft.write_text(json.dumps({k: v for k, v in res.output.items() if k != "audit"}), encoding="utf-8")
        r = _script(skill, "save_output", str(draft))
        assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in ws.runs_dir.iterdir() if p.is_dir()) == sorted(ran)
    assert (ws.runs_dir / "tool_calls.jsonl").is_file()

    # 3. eval score over what the scripts saved
    assert main(["eval", "score", str(ws.runs_dir), "--cases", str(cases), "-w", str(ws.root), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["n"] == len(ran) and scored["missing"] == [] and scored["failed"] == {}
    for row in scored["cases"]:
        want = {k: v for k, v in ran[row["case_id"]].metrics.items() if k not in TIMING}
        got = {k: v for k, v in row["metrics"].items() if k not in TIMING}
        assert got == want, row["case_id"]
        assert row["cost_source"] == "tool_log"
        assert row["metrics"]["queries"] >= 1 and row["metrics"]["fetches"] >= 1 and row["metrics"]["seconds"] > 0
    # and the aggregate figures agree with what eval run reports over the same cases
    for name in ("accepted", "docs_consulted_recall", "tools_grounded_recall", "queries", "fetches"):
        vals = [float(r.metrics[name]) for r in ran.values() if r.metrics[name] is not None]
        assert scored["metrics"][name]["mean"] == pytest.approx(sum(vals) / len(vals)), name
