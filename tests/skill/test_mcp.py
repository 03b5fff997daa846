"""The MCP server: an in-process client lists the tools and calls all four (and list_skills)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from skillrag.service.mcp_server import TOOL_NAMES, build_mcp_server
from skillrag.skill import CaseFile
from skillrag.skill.testing import FakeRetriever, make_output


def test_mcp_lists_and_calls_the_tools(ws, cases_path, gt_secret):
    server, tools = build_mcp_server(ws, cases=CaseFile(cases_path), retriever=FakeRetriever(ws))

    async def session() -> dict:
        got: dict = {}
        async with Client(server) as client:
            listed = await client.list_tools()
            got["names"] = [t.name for t in listed.tools]
            got["schemas"] = {t.name: t.input_schema for t in listed.tools}
            got["case"] = await client.call_tool("load_case", {"case_id": "case_1"})
            got["hits"] = await client.call_tool("retrieve", {"query": "lost card replacement fee", "k": 2})
            got["art"] = await client.call_tool("get_article", {"article_id": "art_card_lost", "section": "Replacement"})
            good = make_output("case_1", [("art_card_lost", "Order a replacement card within 2 business days.")])
            got["saved"] = await client.call_tool("save_output", {"output": good})
            bad = make_output("case_1", [("art_card_lost", "Order a new card today"), ("art_fees", "short")])
            got["rejected"] = await client.call_tool("save_output", {"output": bad})
            got["missing"] = await client.call_tool("get_article", {"article_id": "nope"})
            got["skills"] = await client.call_tool("list_skills", {})
        return got

    got = anyio.run(session)
    assert got["names"] == list(TOOL_NAMES)
    assert set(got["schemas"]["get_article"]["properties"]) == {"article_id", "section", "summary", "case_id"}
    assert set(got["schemas"]["retrieve"]["properties"]) == {"query", "k", "tags", "title_prefix", "id_prefix",
                                                             "page", "case_id"}
    assert set(got["schemas"]["save_output"]["properties"]) == {"output", "check"}

    case = json.loads(got["case"].content[0].text)
    assert case["contact_reason"] == "Customer lost their debit card"
    assert gt_secret not in got["case"].content[0].text

    case_budget = json.loads(got["case"].content[0].text)["budget"]
    assert case_budget == {"queries_left": 5, "fetches_left": 12, "saves_left": 4}
    result = got["hits"].structured_content
    hits = result["hits"]
    assert len(hits) == 2 and hits[0]["article_id"] == "art_card_lost" and result["case_id"] == "case_1"
    assert result["budget"] == {"queries_left": 4, "fetches_left": 12, "saves_left": 4}

    art = got["art"].structured_content
    assert art["body"].startswith("## Replacement") and art["part"] == "section:2"
    assert art["title"] == "Lost or stolen debit cards" and [s["heading"] for s in art["sections"]] == [
        "Freezing the card", "Replacement"]

    assert not got["saved"].is_error
    saved = got["saved"].structured_content
    assert saved["accepted"] and (ws.runs_dir / "case_1" / "output.json").is_file()
    assert saved["evidence"][0]["content_hash"]

    assert got["rejected"].is_error
    msg = got["rejected"].content[0].text
    assert "not a verbatim substring of article 'art_card_lost'" in msg
    assert "snippets[1].text: 5 characters, at least 15 required" in msg

    assert got["missing"].is_error and "no article with id 'nope'" in got["missing"].content[0].text
    assert "cs-guidance" in [s["name"] for s in got["skills"].structured_content["result"]]

    assert [c.tool for c in tools.calls] == ["load_case", "retrieve", "get_article", "save_output",
                                             "save_output", "get_article"]
    logged = (ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()
    assert len(logged) == 6


@pytest.mark.slow
def test_skillrag_mcp_command_over_stdio(ws, cases_path):
    """`skillrag mcp -w DIR` as a real subprocess, driven by the SDK's stdio client."""
    import sys

    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillrag.cli.main", "mcp", "-w", str(ws.root), "--cases", str(cases_path)],
    )

    async def session():
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            case = await client.call_tool("load_case", {"case_id": "case_1"})
            art = await client.call_tool("get_article", {"article_id": "art_fees"})
            return names, case, art

    names, case, art = anyio.run(session)
    assert names == list(TOOL_NAMES)
    assert json.loads(case.content[0].text)["case_id"] == "case_1"
    assert art.structured_content["body"].startswith("## Fees")
