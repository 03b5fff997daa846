"""Ids on the MCP and CLI paths (issue 15, item 7): ``save_output`` with a case id that ends in a
newline is refused, and no ``runs/ok\\n/`` folder appears. Real workspace, in-process MCP client."""

from __future__ import annotations

import json

import anyio
from mcp import Client

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.service.mcp_server import build_mcp_server
from skillrag.skill import CaseFile
from skillrag.skill.testing import FakeRetriever, make_output
from skillrag.workspace import Workspace

ARTICLE = {"id": "fees", "title": "Fees", "content": "Standard accounts pay a $10 replacement fee."}


def _ws(tmp_path) -> Workspace:
    ws = Workspace.init(tmp_path / "ws")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.json").write_text(json.dumps([ARTICLE]), encoding="utf-8")
    ingest(ws, [tmp_path / "kb"])
    return ws


def _run_folders(ws: Workspace) -> list[str]:
    return sorted(p.name for p in ws.runs_dir.iterdir() if p.is_dir()) if ws.runs_dir.is_dir() else []


def test_mcp_save_output_refuses_a_case_id_with_a_newline(tmp_path):
    ws = _ws(tmp_path)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"case_id": "ok", "contact_reason": "Replacement card fee"}) + "\n", encoding="utf-8")
    server, _ = build_mcp_server(ws, cases=CaseFile(cases), retriever=FakeRetriever(ws),
                                 log_path=tmp_path / "calls.jsonl")
    bad = make_output("ok\n", [("fees", "Standard accounts pay a $10 replacement fee.")])
    good = make_output("ok", [("fees", "Standard accounts pay a $10 replacement fee.")])

    async def session():
        async with Client(server) as client:
            before = await client.call_tool("save_output", {"output": good})
            await client.call_tool("load_case", {"case_id": "ok"})
            return (before, await client.call_tool("save_output", {"output": bad}),
                    await client.call_tool("save_output", {"output": good}))

    unloaded, refused, accepted = anyio.run(session)
    # a case never loaded has no budget: saving for it is refused (a made-up id gets no fresh budget)
    assert unloaded.is_error and "call load_case ok first" in unloaded.content[0].text
    assert refused.is_error and "case_id" in refused.content[0].text
    assert not accepted.is_error
    assert _run_folders(ws) == ["ok"]


def test_cli_save_output_refuses_a_case_id_with_a_newline(tmp_path, capsys):
    ws = _ws(tmp_path)
    out = tmp_path / "out.json"
    out.write_text(json.dumps(make_output("ok\n", [("fees", "Standard accounts pay a $10 replacement fee.")])),
                   encoding="utf-8")
    code = main(["tool", "save-output", str(out), "-w", str(ws.root)])
    assert code in (1, 2)  # a rejected output (1) or bad input (2), never a write
    assert "case_id" in capsys.readouterr().err
    assert _run_folders(ws) == []
