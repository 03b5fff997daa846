"""The extractive harness over every tau2-bench banking dev case (real shared data, real index).

Reads ../shared/data/tau2-banking (698 articles, 46 dev tasks) into a temporary workspace; nothing
from it is written into the repository. The index is built with the workspace defaults (hybrid
BM25 + MiniLM int8): that build is the slow part; each case then runs in well under a second.
"""

from __future__ import annotations

import json
import statistics

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, ingest
from skillrag.search import build_index
from skillrag.skill import CaseFile, import_tau2, validate_output, write_cases
from skillrag.workspace import Workspace


@pytest.mark.shared
@pytest.mark.slow
def test_extractive_accepts_every_tau2_dev_case_under_2s(tau2_dir, tmp_path, capsys):
    ws = Workspace.init(tmp_path / "tau2")
    ingest(ws, [tau2_dir / "documents"])
    build_index(ws)
    cases_path = tmp_path / "tau2_dev.jsonl"
    write_cases(cases_path, import_tau2(tau2_dir / "tasks_dev.json"))
    cases = CaseFile(cases_path)
    assert len(cases) == 46

    rc = main(["run-batch", "-w", str(ws.root), "--cases", str(cases_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["counts"] == {"accepted": 46}, report["counts"]

    bodies = {a.id: a.body for a in ArticleStore(ws).list()}
    non_model_ms, recall = [], []
    for cid in cases.ids():
        record = json.loads((ws.runs_dir / cid / "record.json").read_text())
        output = json.loads((ws.runs_dir / cid / "output.json").read_text())
        assert record["status"] == "accepted" and record["model_calls"] == 0
        assert 3 <= len(record["queries"]) <= 5
        # an independent re-check of the saved output against the article bodies
        assert validate_output({k: v for k, v in output.items() if k != "audit"}, bodies) == []
        non_model_ms.append(record["wall_ms"] - record["model_ms"])
        required = set(cases.ground_truth(cid).required_documents)
        cited = {s["source_article"] for s in output["snippets"]}
        recall.append(len(required & cited) / len(required))
    assert max(non_model_ms) < 2000, f"slowest case took {max(non_model_ms):.0f} ms"
    with capsys.disabled():
        print(
            f"\ntau2 dev, extractive harness: 46/46 accepted; non-model time per case: median "
            f"{statistics.median(non_model_ms):.0f} ms, max {max(non_model_ms):.0f} ms; "
            f"required-document recall of cited articles: mean {statistics.mean(recall):.3f}"
        )
