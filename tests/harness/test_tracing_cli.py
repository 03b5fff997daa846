"""``OTEL_TRACES_EXPORTER=console skillrag run ...`` prints the run's spans; unset, nothing is traced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillrag.search import build_index
from skillrag.wiki import build_wiki
from skillrag.workspace import Workspace


@pytest.fixture
def indexed(ws: Workspace, cases_path: Path) -> Workspace:
    cfg = ws.config_path.read_text(encoding="utf-8").replace("embedder: minilm-int8", "embedder: hash")
    ws.config_path.write_text(cfg, encoding="utf-8")
    ws = Workspace.open(ws.root)
    build_wiki(ws, builder="extractive")
    build_index(ws)
    (ws.root / "cases.jsonl").write_text(cases_path.read_text(encoding="utf-8"), encoding="utf-8")
    return ws


def _run(ws: Workspace, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "skillrag.cli.main", "run", "-w", str(ws.root), "--case-id", "case_lost", "--json"],
        env=clean | env, capture_output=True, text=True, timeout=120, check=False,
    )


def _spans(stderr: str) -> list[dict]:
    """The JSON span objects the SDK's console exporter wrote (one indented object per span)."""
    dec, out, i = json.JSONDecoder(), [], 0
    while (i := stderr.find("{\n", i)) != -1:
        obj, end = dec.raw_decode(stderr, i)
        if isinstance(obj, dict) and "context" in obj and "name" in obj:
            out.append(obj)
        i = end
    return out


def test_console_exporter_prints_the_spans_of_a_run(indexed):
    proc = _run(indexed, OTEL_TRACES_EXPORTER="console", OTEL_SERVICE_NAME="skillrag-ci")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # stdout stays the --json document: spans go to stderr
    spans = _spans(proc.stderr)
    names = [s["name"] for s in spans]
    assert names.count("skillrag.run") == 1 and "skillrag.tool.load_case" in names
    assert "skillrag.tool.retrieve" in names and names[-1] == "skillrag.run"  # the root ends last
    run = next(s for s in spans if s["name"] == "skillrag.run")
    assert run["attributes"]["skillrag.case_id"] == "case_lost" and run["parent_id"] is None
    assert run["resource"]["attributes"]["service.name"] == "skillrag-ci"
    assert {s["context"]["trace_id"] for s in spans} == {run["context"]["trace_id"]}
    retrieve = next(s for s in spans if s["name"] == "skillrag.tool.retrieve")
    assert retrieve["attributes"]["skillrag.retrieve.backend"] == "wiki"
    assert retrieve["attributes"]["skillrag.retrieve.mode"] == "hybrid"
    # the record names the same trace (the console exporter writes it as 0x + 32 hex digits)
    record = json.loads((indexed.runs_dir / "case_lost" / "record.json").read_text())
    assert result["status"] == "accepted" and "0x" + record["trace_id"] == run["context"]["trace_id"]


@pytest.mark.parametrize("exporter", [None, "none"])
def test_without_an_exporter_nothing_is_traced(indexed, exporter):
    proc = _run(indexed, **({"OTEL_TRACES_EXPORTER": exporter} if exporter else {}))
    assert proc.returncode == 0, proc.stderr
    assert _spans(proc.stderr) == [] and "skillrag.run" not in proc.stderr
    assert json.loads((indexed.runs_dir / "case_lost" / "record.json").read_text())["trace_id"] is None


def test_an_exporter_that_is_not_installed_is_one_line(indexed):
    proc = _run(indexed, OTEL_TRACES_EXPORTER="zipkin_json")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: OTEL_TRACES_EXPORTER='zipkin_json'") and proc.stderr.count("\n") == 1
