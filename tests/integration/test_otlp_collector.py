"""The integration tier for traces: a real ``skillrag run`` process sends its spans over OTLP/HTTP
(protobuf) to a receiver listening on 127.0.0.1, configured by the standard ``OTEL_*`` variables alone.

Receivers:

- ``OtlpProtoTestServer`` of ``opentelemetry-test-utils`` (the OpenTelemetry Python project's own OTLP
  receiver for tests: an HTTP server decoding the protobuf export requests with ``opentelemetry-proto``).
  It runs everywhere in a few seconds; CI runs it. No OpenTelemetry Collector or Jaeger build installs
  from the registries this project reaches (Debian has none; the one PyPI wrapper of a collector binary
  ships a testing-only build whose only receiver is ``filelog``), so this is the receiver CI uses.
- Arize Phoenix, a trace backend operators use (``phoenix serve``: OTLP/HTTP receiver, span store and REST
  API), when ``SKILLRAG_PHOENIX`` names its executable (e.g. a separate venv's ``bin/phoenix``): skipped
  otherwise. It is not in CI: its install is about 850 MB and it takes about a minute to start here.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from skillrag.search import build_index
from skillrag.wiki import build_wiki
from skillrag.workspace import Workspace

pytestmark = pytest.mark.otlp

ARTICLE = (
    "## Procedure\n\n1. Verify the customer's identity with two security questions.\n"
    "2. Freeze the card with `freeze_card_4410` and confirm the freeze to the customer.\n"
    "3. Order a replacement card with `order_replacement_card_2231`.\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    from skillrag.corpus import ingest
    from skillrag.skill import CaseRecord, Message, write_cases

    ws = Workspace.init(tmp_path / "ws")
    cfg = ws.config_path.read_text(encoding="utf-8").replace("embedder: minilm-int8", "embedder: hash")
    ws.config_path.write_text(cfg, encoding="utf-8")
    ws = Workspace.open(ws.root)
    src = tmp_path / "src"
    src.mkdir()
    (src / "kb_card_lost.md").write_text("---\nid: kb_card_lost\ntitle: Lost or stolen debit cards\n---\n"
                                         + ARTICLE, encoding="utf-8")
    ingest(ws, [src])
    build_wiki(ws, builder="extractive")
    build_index(ws)
    write_cases(ws.root / "cases.jsonl", [CaseRecord(
        case_id="case_lost", contact_reason="Customer lost their debit card and wants it frozen",
        case_messages=[Message(role="customer", content="I lost my card. Please freeze it.")])])
    return ws


def _run(ws: Workspace, endpoint: str, service: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | {
        "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": service}
    return subprocess.run([sys.executable, "-m", "skillrag.cli.main", "run", "-w", str(ws.root), "--case-id",
                           "case_lost", "--json"], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_run_reaches_an_otlp_receiver_as_one_trace(workspace):
    from opentelemetry.test._otlp_test_server import OtlpProtoTestServer

    with OtlpProtoTestServer(host="127.0.0.1") as receiver:
        proc = _run(workspace, f"http://127.0.0.1:{receiver.port}", "skillrag-otlp-test")
        assert proc.returncode == 0, proc.stderr
        # the process exits only after its batch processor exported every span (SDK shutdown at exit)
        got = receiver.drain_spans()
    names = [r.span.name for r in got]
    assert names.count("skillrag.run") == 1, names
    run = next(r for r in got if r.span.name == "skillrag.run")
    res = {a.key: a.value.string_value for a in run.resource.attributes}
    assert res["service.name"] == "skillrag-otlp-test" and run.scope.name == "skillrag"
    assert {r.span.trace_id for r in got} == {run.span.trace_id}
    tools = [r.span for r in got if r.span.name.startswith("skillrag.tool.")]
    assert tools and all(t.parent_span_id == run.span.span_id for t in tools)
    assert {t.name for t in tools} >= {"skillrag.tool.load_case", "skillrag.tool.retrieve", "skillrag.tool.save_output"}
    attrs = {a.key: a.value for a in run.span.attributes}
    assert attrs["skillrag.case_id"].string_value == "case_lost"
    assert attrs["skillrag.run.status"].string_value == "accepted"
    record = (workspace.runs_dir / "case_lost" / "record.json").read_text()
    assert run.span.trace_id.hex() in record  # the record names the trace the receiver holds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    exe = os.environ.get("SKILLRAG_PHOENIX")
    if not exe:
        pytest.skip("SKILLRAG_PHOENIX is not set (the path of a `phoenix` executable)")
    port, grpc = _free_port(), _free_port()
    env = os.environ | {"PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"), "PHOENIX_HOST": "127.0.0.1",
                        "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_TELEMETRY_ENABLED": "false"}
    proc = subprocess.Popen([exe, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:  # readiness: its health endpoint answers (or the process died)
            assert proc.poll() is None, "phoenix serve exited"
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "phoenix did not start in 240 s"
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _attr(attrs: dict, key: str):
    """A dotted attribute as Phoenix returns it: flat, or unflattened into nested objects."""
    if key in attrs:
        return attrs[key]
    for part in key.split("."):
        attrs = attrs[part]
    return attrs


def test_a_run_is_stored_by_phoenix(workspace, phoenix):
    proc = _run(workspace, phoenix, "skillrag-phoenix-test")
    assert proc.returncode == 0, proc.stderr
    spans = httpx.get(f"{phoenix}/v1/projects/default/spans", params={"limit": 100}, timeout=10).json()["data"]
    run = next(s for s in spans if s["name"] == "skillrag.run")
    assert _attr(run["attributes"], "skillrag.case_id") == "case_lost"
    tools = [s for s in spans if s["name"].startswith("skillrag.tool.")]
    assert tools and all(s["parent_id"] == run["context"]["span_id"] for s in tools)
    record = (workspace.runs_dir / "case_lost" / "record.json").read_text()
    assert run["context"]["trace_id"] in record
