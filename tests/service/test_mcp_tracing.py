"""An MCP-driven run: each tool call over MCP is traced by the same SkillTools span as every surface,
attributed to the case and its session (in-process MCP client, SDK in-memory exporter)."""

from __future__ import annotations

import json

import anyio
from mcp import Client

from skillrag.corpus import ingest
from skillrag.service.mcp_server import build_mcp_server
from skillrag.skill import CaseFile
from skillrag.skill.testing import FakeRetriever, make_output
from skillrag.tracing.testing import attributes_of, record_spans
from skillrag.workspace import Workspace

ARTICLE = {"id": "fees", "title": "Fees", "content": "Standard accounts pay a $10 replacement fee."}


def test_mcp_tool_calls_are_tool_spans_of_one_case_session(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.json").write_text(json.dumps([ARTICLE]), encoding="utf-8")
    ingest(ws, [tmp_path / "kb"])
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"case_id": "c1", "contact_reason": "Replacement card fee"}) + "\n", encoding="utf-8")
    server, _ = build_mcp_server(ws, cases=CaseFile(cases), retriever=FakeRetriever(ws), log_path=tmp_path / "l.jsonl")
    bad = make_output("c1", [("fees", "Premium accounts pay nothing.")])
    good = make_output("c1", [("fees", "Standard accounts pay a $10 replacement fee.")])

    async def session():
        async with Client(server) as client:
            await client.call_tool("load_case", {"case_id": "c1"})
            await client.call_tool("retrieve", {"query": "replacement fee"})
            await client.call_tool("get_article", {"article_id": "fees"})
            await client.call_tool("save_output", {"output": bad})
            return await client.call_tool("save_output", {"output": good})

    with record_spans() as exporter:
        assert not anyio.run(session).is_error
    spans = exporter.get_finished_spans()
    tools = sorted((s for s in spans if s.name.startswith("skillrag.tool.")), key=lambda s: s.start_time)
    assert [s.name for s in tools] == ["skillrag.tool.load_case", "skillrag.tool.retrieve", "skillrag.tool.get_article",
                                       "skillrag.tool.save_output", "skillrag.tool.save_output"]
    assert {s.attributes["skillrag.surface"] for s in tools} == {"mcp"}
    assert {s.attributes["skillrag.case_id"] for s in tools} == {"c1"}
    sessions = {s.attributes.get("skillrag.session_id") for s in tools if s.name != "skillrag.tool.load_case"}
    assert len(sessions) == 1 and None not in sessions  # one case session ties the MCP-driven run together
    saves = attributes_of(spans, "skillrag.tool.save_output")
    assert [s["skillrag.save.accepted"] for s in saves] == [False, True]
    assert any("not a verbatim" in r for r in saves[0]["skillrag.save.reasons"])
