"""Importing tau2-bench banking tasks; ground truth never reaches an agent-facing call."""

from __future__ import annotations

import json

import anyio
import pytest

from skillrag.cli.main import main
from skillrag.errors import MalformedSourceError
from skillrag.skill import CaseFile, SkillRegistry, SkillTools, import_tau2
from skillrag.skill.tau2 import task_to_record
from skillrag.workspace import Workspace

TASK = {
    "id": "task_x",
    "description": {"notes": "Agent must freeze the card and escalate to the security team."},
    "user_scenario": {"instructions": (
        "**Your character:** Ana, 30.\n\n**Your goal:** Get your stolen card frozen. Then get a new one. "
        "And more.\n\n1. **Opening:** \"Hi, my card was stolen!\""
    )},
    "evaluation_criteria": {
        "actions": [
            {"name": "unlock_discoverable_agent_tool", "arguments": {"agent_tool_name": "freeze_card_1234"},
             "requestor": "assistant"},
            {"name": "call_discoverable_agent_tool", "arguments": {"agent_tool_name": "freeze_card_1234"}},
            {"name": "give_discoverable_user_tool", "arguments": {"discoverable_tool_name": "get_pin_99"}},
            {"name": "transfer_to_human_agents", "arguments": {"summary": "stolen"}},
        ],
        "communicate_info": ["the card is frozen"],
    },
    "required_documents": ["doc_cards_stolen_001"],
}


def test_task_mapping():
    rec = task_to_record(TASK)
    assert rec.case_id == "task_x"
    assert rec.contact_reason == "Get your stolen card frozen. Then get a new one."
    assert rec.case_messages[0].role == "customer"
    assert rec.case_messages[0].content == "Hi, my card was stolen!"
    assert len(rec.case_notes) == 3
    gt = rec.truth()
    assert gt.required_documents == ["doc_cards_stolen_001"]
    assert gt.expected_tools == ["freeze_card_1234", "get_pin_99", "transfer_to_human_agents"]
    assert len(gt.expected_actions) == 4 and gt.expected_actions[1]["requestor"] == "assistant"
    assert "security team" in gt.reference_guidance and "the card is frozen" in gt.reference_guidance
    case_text = json.dumps(rec.case().model_dump(mode="json"))
    for secret in ("freeze_card_1234", "doc_cards_stolen_001", "security team", "get_pin_99"):
        assert secret not in case_text


def test_bad_task_files(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"not": "a list"}')
    with pytest.raises(MalformedSourceError, match="expected a JSON list"):
        import_tau2(p)
    p.write_text('[{"no_id": 1}]')
    with pytest.raises(MalformedSourceError, match="item 0"):
        import_tau2(p)


def _hidden_values(task: dict, gt) -> list[str]:
    """Ground-truth values that the customer's own scenario text does not already state."""
    scenario = json.dumps(task["user_scenario"])
    vals = list(gt.required_documents) + list(gt.expected_tools)
    vals += [ln.strip() for ln in gt.reference_guidance.splitlines() if len(ln.strip()) > 25]
    return [v for v in vals if v and v not in scenario]


@pytest.mark.shared
@pytest.mark.slow
def test_tau2_import_gives_46_cases_and_no_leak(tau2_dir, tmp_path, capsys):
    out = tmp_path / "cases.jsonl"
    assert main(["cases", "import-tau2", str(tau2_dir / "tasks_dev.json"), "-o", str(out)]) == 0
    cf = CaseFile(out)
    assert len(cf) == 46
    tasks = {t["id"]: t for t in json.loads((tau2_dir / "tasks_dev.json").read_text())}
    assert set(cf.ids()) == set(tasks)

    ws = Workspace.init(tmp_path / "ws")
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"), cf)
    from skillrag.service.mcp_server import build_mcp_server

    server, _ = build_mcp_server(ws, cases=cf)
    capsys.readouterr()
    n_hidden = 0
    for cid in cf.ids():
        gt = cf.ground_truth(cid)
        assert gt.required_documents == tasks[cid]["required_documents"]
        assert gt.expected_actions, cid
        hidden = _hidden_values(tasks[cid], gt)
        n_hidden += len(hidden)
        outputs = [json.dumps(tools.load_case(cid).model_dump(mode="json"))]
        assert main(["tool", "load-case", cid, "-w", str(ws.root), "--cases", str(out)]) == 0
        assert main(["cases", "show", cid, "--cases", str(out)]) == 0
        outputs.append(capsys.readouterr().out)
        for text in outputs:
            for key in ("ground_truth", "reference_guidance", "required_documents", "expected_"):
                assert key not in text, (cid, key)
            for v in hidden:
                assert v not in text, (cid, v)
    assert n_hidden > 46 * 3  # the check compared real hidden values, not an empty list

    async def via_mcp() -> list[str]:
        from mcp import Client

        texts = []
        async with Client(server) as client:
            for cid in cf.ids():
                res = await client.call_tool("load_case", {"case_id": cid})
                assert not res.is_error
                texts.append(res.content[0].text)
        return texts

    for cid, text in zip(cf.ids(), anyio.run(via_mcp), strict=True):
        for v in _hidden_values(tasks[cid], cf.ground_truth(cid)):
            assert v not in text
        assert "required_documents" not in text
