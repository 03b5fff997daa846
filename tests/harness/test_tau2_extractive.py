"""The extractive harness over every tau2-bench banking dev case (real shared data, real index).

Reads ../shared/data/tau2-banking (698 articles, 46 dev tasks) into a temporary workspace; nothing
from it is written into the repository. The workspace is built the default way: the extractive
navigation layer, then the index of the default backend (`wiki`, which also builds the direct index its
fused order uses; hybrid BM25 + MiniLM int8). That build is the slow part; each case then runs in well
under a second.
"""

from __future__ import annotations

import json
import statistics

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, ingest
from skillrag.evaluation.metrics import Reference, ScoredCase, compute_metrics
from skillrag.search import build_index
from skillrag.skill import CaseFile, import_tau2, validate_output, write_cases
from skillrag.text import STOP_WORDS
from skillrag.wiki import build_wiki
from skillrag.workspace import Workspace


@pytest.mark.shared
@pytest.mark.slow
def test_extractive_briefs_every_tau2_dev_case(tau2_dir, tmp_path, capsys):
    ws = Workspace.init(tmp_path / "tau2")
    ingest(ws, [tau2_dir / "documents"])
    assert ws.config.search.backend == "wiki"  # the default this test measures
    build_wiki(ws, builder="extractive")
    build_index(ws)
    cases_path = tmp_path / "tau2_dev.jsonl"
    write_cases(cases_path, import_tau2(tau2_dir / "tasks_dev.json"))
    cases = CaseFile(cases_path)
    assert len(cases) == 46

    rc = main(["run-batch", "-w", str(ws.root), "--cases", str(cases_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["counts"] == {"accepted": 46}, report["counts"]

    bodies = {a.id: a.body for a in ArticleStore(ws).list()}
    non_model_ms, recall, tools = [], [], []
    for cid in cases.ids():
        record = json.loads((ws.runs_dir / cid / "record.json").read_text())
        output = json.loads((ws.runs_dir / cid / "output.json").read_text())
        assert record["status"] == "accepted" and record["model_calls"] == 0
        assert 2 <= len(record["queries"]) <= 5 and len(record["fetches"]) <= 12
        # an independent re-check of the saved output against the article bodies
        assert validate_output({k: v for k, v in output.items() if k != "audit"}, bodies) == []
        # a briefing, not role-play: no "Guidance for:" opener, no stop word listed as a matched term
        assert output["guidance"].startswith("Case briefing (retrieval only, no model).")
        for sn in output["snippets"]:
            if "matches case terms: " in sn["why"]:
                terms = sn["why"].split("matches case terms: ", 1)[1].split(";")[0].rstrip(".").split(", ")
                assert not {t.lower() for t in terms} & STOP_WORDS, sn["why"]
        non_model_ms.append(record["wall_ms"] - record["model_ms"])
        scored = ScoredCase(cid, record["status"], output, Reference.from_ground_truth(cases.ground_truth(cid)),
                            record)
        m = compute_metrics(scored, ["docs_consulted_recall", "tools_grounded_recall"])
        recall.append(m["docs_consulted_recall"])
        if m["tools_grounded_recall"] is not None:
            tools.append(m["tools_grounded_recall"])
    # Regression floors at issue #18's targets (0.45 and 0.40), not at today's figures (0.460 and 0.439 on the
    # default wiki backend with the extractive layer; the same on the hybrid-wiki arm of
    # benchmarks/eval_tau2.py): a harmless change may move a figure by a case. No timing is asserted here: the
    # per-case time is printed below and measured by benchmarks/eval_tau2.py.
    assert statistics.mean(recall) >= 0.45 and statistics.mean(tools) >= 0.40, (statistics.mean(recall),
                                                                                   statistics.mean(tools))
    with capsys.disabled():
        print(
            f"\ntau2 dev, extractive briefing: 46/46 accepted; non-model time per case: median "
            f"{statistics.median(non_model_ms):.0f} ms, max {max(non_model_ms):.0f} ms; "
            f"docs_consulted_recall {statistics.mean(recall):.3f}, tools_grounded_recall {statistics.mean(tools):.3f}"
        )
