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
    assert set(got["schemas"]["retrieve"]["properties"]) == {"query", "k", "tags", "title_prefix", "title_contains",
                                                             "id_prefix", "category", "customer_type", "detail",
                                                             "page", "case_id"}
    assert set(got["schemas"]["save_output"]["properties"]) == {"output", "check", "status", "case_id"}

    case = json.loads(got["case"].content[0].text)
    assert case["contact_reason"] == "Customer lost their debit card"
    assert gt_secret not in got["case"].content[0].text

    case_budget = json.loads(got["case"].content[0].text)["budget"]
    assert case_budget == {"counted": "after this call", "queries_left": 5, "queries_used": 0, "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}
    result = got["hits"].structured_content
    hits = result["hits"]
    assert len(hits) == 2 and hits[0]["article_id"] == "art_card_lost" and result["case_id"] == "case_1"
    assert result["budget"] == {"counted": "after this call", "queries_left": 4, "queries_used": 1, "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}

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


def test_mcp_budgets_pages_filters_check_and_warnings(wiki_ws, cases_path):
    from skillrag.cli.main import main
    from skillrag.skill import BudgetLedger
    from skillrag.skill.budget import refusal

    yml = wiki_ws.skills_dir / "cs-guidance"
    import shutil

    from skillrag.skill import builtin_skills_dir

    shutil.copytree(builtin_skills_dir() / "cs-guidance", yml)
    (yml / "skill.yaml").write_text((yml / "skill.yaml").read_text().replace("max_queries: 5", "max_queries: 3"))
    server, _tools = build_mcp_server(wiki_ws, cases=CaseFile(cases_path))
    assert "**3 queries**" in server.instructions and "${" not in server.instructions
    good = make_output("case_1", [("doc_cards_gold_001", "Late payments on the Gold Rewards Card cost $40.")],
                       titles={"doc_cards_gold_001": "Gold Rewards Card: annual fee"},
                       guidance="1. Late payments on the Gold Rewards Card cost $40; use `waive_fee_1200` once.")

    async def session() -> dict:
        got: dict = {}
        async with Client(server) as client:
            got["case"] = await client.call_tool("load_case", {"case_id": "case_1"})
            got["hits"] = await client.call_tool("retrieve", {"query": "card fee", "id_prefix": ["doc_cards_gold_"]})
            got["page"] = await client.call_tool("retrieve", {"page": "cards-gold"})
            got["art"] = await client.call_tool("get_article", {"article_id": "doc_cards_gold_001", "section": "2"})
            got["check"] = await client.call_tool("save_output", {"output": good, "check": True})
            got["saved"] = await client.call_tool("save_output", {"output": good})
            got["status"] = await client.call_tool("save_output", {"status": True})
            got["status_and_output"] = await client.call_tool("save_output", {"status": True, "output": good})
            got["third"] = await client.call_tool("retrieve", {"query": "lost card"})
            got["refused"] = await client.call_tool("retrieve", {"query": "one more"})
            got["unloaded"] = await client.call_tool("retrieve", {"query": "wire", "case_id": "case_2"})
            await client.call_tool("load_case", {"case_id": "case_2"})
            got["other"] = await client.call_tool("retrieve", {"query": "wire", "case_id": "case_2"})
        return got

    got = anyio.run(session)
    assert json.loads(got["case"].content[0].text)["as_of"]
    hits = got["hits"].structured_content
    assert {h["article_id"] for h in hits["hits"]} == {"doc_cards_gold_001", "doc_cards_gold_002"}
    assert hits["pages"][0]["page_id"] == "cards-gold" and hits["budget"]["queries_left"] == 2
    assert got["page"].structured_content["page"]["page_id"] == "cards-gold"
    art = got["art"].structured_content
    assert art["part"] == "section:2" and art["body"].startswith("## Fees\n\nLate payments")
    check = got["check"].structured_content
    assert check["checked_only"] and check["budget"]["saves_left"] == 4
    assert [w["subject"] for w in check["warnings"]] == ["waive_fee_1200"]
    saved = got["saved"].structured_content
    assert saved["path"] and saved["budget"]["saves_left"] == 3 and saved["evidence"][0]["source_article"] == \
        "doc_cards_gold_001"
    status = got["status"].structured_content  # the last save again, for the case loaded last, free
    assert status["case_id"] == "case_1" and status["budget"]["saves_left"] == 3
    assert status["last_save"]["path"] == saved["path"] and status["last_save"]["warnings"] == saved["warnings"]
    assert got["status_and_output"].is_error and "without output" in got["status_and_output"].content[0].text
    assert got["refused"].is_error
    state = BudgetLedger(wiki_ws).current("case_1", "cs-guidance")
    assert got["refused"].content[0].text == refusal("query", state)
    # a case never loaded has no budget to spend (a made-up id would be a fresh budget): refused
    assert got["unloaded"].is_error and "call load_case case_2 first" in got["unloaded"].content[0].text
    assert got["other"].structured_content["budget"]["queries_left"] == 2  # case_2: its own account
    # the same account as the command line: CLI calls for case_1 are refused with the same line
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["tool", "retrieve", "card", "--case", "case_1", "-w", str(wiki_ws.root)]) == 2
    assert err.getvalue() == f"error: {refusal('query', state)}\n"


# regression (issue 21, class 3): MCP `retrieve` took any k (10**9 returned every article with its
# passages in one query) while the CLI capped it at 200; one cap (workspace.config.MAX_K) now holds on
# every surface, checked before anything is spent
def test_k_has_one_cap_on_every_surface(ws, cases_path, capsys):
    from skillrag.cli.main import main
    from skillrag.workspace.config import MAX_K

    fake = FakeRetriever(ws)
    server, tools = build_mcp_server(ws, cases=CaseFile(cases_path), retriever=fake)

    async def session() -> dict:
        async with Client(server) as client:
            await client.call_tool("load_case", {"case_id": "case_1"})
            return {k: await client.call_tool("retrieve", {"query": "card", "k": k}) for k in (10**9, MAX_K + 1, 0)} \
                | {"ok": await client.call_tool("retrieve", {"query": "card", "k": MAX_K})}

    got = anyio.run(session)
    for k in (10**9, MAX_K + 1, 0):
        assert got[k].is_error and f"k must be a whole number from 1 to {MAX_K}, got {k}" in got[k].content[0].text
    assert not got["ok"].is_error and got["ok"].structured_content["budget"]["queries_used"] == 1
    assert [q[1] for q in fake.queries] == [MAX_K]  # the refused calls never searched
    assert tools.budget("case_1").queries == 1  # ... and spent nothing
    rc = main(["tool", "retrieve", "card", "-k", str(MAX_K + 1), "--case", "case_1", "-w", str(ws.root)])
    assert rc == 2 and f"{MAX_K}" in capsys.readouterr().err


# regression (issue 21, class 3): MCP `load_case(new_session=true)` gave a spent case a fresh budget. A
# new session starts the case's next run only after an accepted save (or while nothing is spent), the
# same rule as the command line's --new-session (both are SkillTools.load_case)
def test_new_session_never_resets_an_unfinished_budget(ws, cases_path):
    server, tools = build_mcp_server(ws, cases=CaseFile(cases_path), retriever=FakeRetriever(ws))
    good = make_output("case_1", [("art_card_lost", "Order a replacement card within 2 business days.")])

    async def session() -> dict:
        got: dict = {}
        async with Client(server) as client:
            got["fresh"] = await client.call_tool("load_case", {"case_id": "case_1", "new_session": True})
            got["again"] = await client.call_tool("load_case", {"case_id": "case_1", "new_session": True})
            for i in range(5):
                await client.call_tool("retrieve", {"query": f"lost card {i}"})
            got["reset"] = await client.call_tool("load_case", {"case_id": "case_1", "new_session": True})
            got["after"] = await client.call_tool("retrieve", {"query": "lost card"})
            await client.call_tool("get_article", {"article_id": "art_card_lost"})
            got["saved"] = await client.call_tool("save_output", {"output": good})
            got["rerun"] = await client.call_tool("load_case", {"case_id": "case_1", "new_session": True})
        return got

    got = anyio.run(session)
    assert not got["fresh"].is_error and not got["again"].is_error  # nothing spent yet: nothing to reset
    assert got["reset"].is_error
    assert "case 'case_1' is still open (queries 5 of 5" in got["reset"].content[0].text
    assert got["after"].is_error and "query budget spent" in got["after"].content[0].text  # still spent
    assert not got["saved"].is_error
    rerun = json.loads(got["rerun"].content[0].text)  # the case was done: its next run starts afresh
    assert rerun["budget"]["queries_left"] == 5 and tools.budget("case_1").queries == 0
