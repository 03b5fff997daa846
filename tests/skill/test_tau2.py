"""Importing tau2-bench tasks (banking text briefs, telecom structured instructions): the customer's
situation reaches the agent, the simulator's directions and the ground truth never do."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from skillrag.cli.main import main
from skillrag.errors import MalformedSourceError, UserError
from skillrag.skill import CaseFile, SkillRegistry, SkillTools, import_tau2
from skillrag.skill.tau2 import YOU_NOTE, situation_text, task_to_record
from skillrag.workspace import Workspace

DATA = Path(__file__).parent / "data"

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
    # the opening line is the message, not a note; the first note says who "you" is
    assert rec.case_notes == [YOU_NOTE, "**Your character:** Ana, 30.",
                              "**Your goal:** Get your stolen card frozen. Then get a new one. And more."]
    assert rec.source == "tau2" and rec.source_id == "task_x"
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


#: Phrases of the user-simulator's directions in the tau2 banking briefs, never shown to an agent.
SIMULATOR_DIRECTIONS = ("playing the role", "Never respond as", "How to Behave", "Don't dump", "###STOP###",
                        "Conversation Flow", "Tool usage", "You have access to", "end the conversation",
                        "Do NOT volunteer", "real customer", "deflect", "If the agent explains",
                        "You are now on the line", "Respond reactively")


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
    # the benchmark's clock (log_verification's time_verified), never today; 9 tasks state none and
    # take the clock the other 37 state
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["as_of"] for r in records} == {"2025-11-14"}
    assert sum(r["as_of_source"].startswith("file: the clock 37 of the 46 tasks") for r in records) == 9

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
            assert '"as_of": "2025-11-14"' in text or "as_of: 2025-11-14" in text or "2025-11-14" in text
            for key in ("ground_truth", "reference_guidance", "required_documents", "expected_",
                        "simulator_instructions", "source_id", "as_of_source", "time_verified", "03:40:00"):
                assert key not in text, (cid, key)
            for direction in SIMULATOR_DIRECTIONS:
                assert direction.lower() not in text.lower(), (cid, direction)
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


BRIEF = """You are playing the role of a customer contacting a customer service representative agent. Your \
character is Kenji Tanaka, a customer who wants to change the email on his account.

Your email is kenji.t@example.com. Your phone number is 206-555-0100. You do not know your date of birth on file, \
but do NOT reveal that you don't know it. Just deflect or say you don't have it handy.

**Your situation:** You moved to Denver last month. You want the card that gives you the highest cash back: \
make this extremely upfront. If there are several such cards, you prefer the one with the smallest annual fee. \
You would stay with the bank if the agent presents a card with no annual fee.

**Information you know:**
- Your user ID is 8f2a77 (do NOT volunteer this unless specifically asked for it).

## How to Behave

1. **Start naturally:** "Hi, I need to update my email address. I changed providers."
2. **If asked about your old email:** "It was kenji.old@example.com, I think."
3. **If the agent explains the verification rules:** "Fine, what else do you need?"
4. **After that is done, bring up the second issue:** "Also, my card was declined at a gas station yesterday."
5. **Tool usage:** You have access to `update_email`. Use it only after the agent verifies you.
- If the situation remains unresolved after 5 exchanges, demand to be transferred to a human agent.

You are now on the line with a customer support agent. Never respond as a customer service representative.
"""


def test_simulator_directions_are_kept_out_and_facts_kept():
    task = {"id": "task_b", "user_scenario": {"instructions": BRIEF},
            "evaluation_criteria": {"actions": [{"name": "update_email", "arguments": {}}]}}
    rec = task_to_record(task, domain="banking")
    case = rec.case()
    seen = json.dumps(case.model_dump(mode="json"))
    for direction in ("playing the role", "do NOT reveal", "deflect", "make this extremely upfront", "volunteer",
                      "How to Behave", "Fine, what else", "update_email", "human agent", "Never respond",
                      "on the line", "If the agent"):
        assert direction not in seen, direction
    notes = "\n".join(case.case_notes)
    for fact in ("Kenji Tanaka", "kenji.t@example.com", "206-555-0100", "You do not know your date of birth on file.",
                 "You moved to Denver last month.", "You want the card that gives you the highest cash back.",
                 "you prefer the one with the smallest annual fee",
                 "You would stay with the bank if the agent presents a card with no annual fee.",
                 "Your user ID is 8f2a77.",
                 'If asked about your old email: "It was kenji.old@example.com, I think."',
                 'Also raises: "Also, my card was declined at a gas station yesterday."'):
        assert fact in notes, fact
    assert case.case_messages[0].content == "Hi, I need to update my email address. I changed providers."
    assert rec.source == "tau2-banking"
    assert rec.truth().extra["simulator_instructions"] == BRIEF  # nothing lost for evaluation


def test_situation_text_drops_a_directed_list_but_keeps_facts_about_you():
    text = ("IMPORTANT: The account_type parameter must be one of:\n- Navy Account\n- Beige Account\n\n"
            "You will ask about these cards one at a time, only moving to the next if the agent cannot help:\n"
            "1. **Gold Card**: You saw a $100 bonus for it.")
    assert situation_text(text) == ["1. **Gold Card**: You saw a $100 bonus for it."]


def test_telecom_tasks_import_into_valid_cases(tmp_path):
    out = tmp_path / "telecom.jsonl"
    # these tasks state no clock: the date is the operator's to give
    assert main(["cases", "import-tau2", str(DATA / "tau2_telecom_tasks.json"), "-o", str(out),
                 "--as-of", "2025-06-02"]) == 0
    cf = CaseFile(out)  # every id is a valid case id: the file loads
    assert {str(c.as_of) for c in cf.cases()} == {"2025-06-02"}
    tasks = json.loads((DATA / "tau2_telecom_tasks.json").read_text())
    assert len(cf) == 3
    ids = cf.ids()
    assert ids[2] == "plain_task_3"  # a valid source id is kept
    for cid in ids[:2]:
        assert cid.startswith("telecom-") and len(cid) == len("telecom-") + 10
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["source_id"] for r in records] == [t["id"] for t in tasks]
    assert {r["source"] for r in records} == {"tau2-telecom"}

    sig = cf.load(ids[0])
    assert sig.contact_reason == ("Your phone shows no signal since you came back from a hiking trip. "
                                  "You cannot make calls or send texts.")
    assert sig.contact_reason_path == ["no_signal"]
    seen = json.dumps(sig.model_dump(mode="json"))
    for direction in ("Express mild frustration", "tool call", "ground your responses", "restart the phone",
                      "clarification", "sim_card_loose", "airplane", "domain"):
        assert direction not in seen, direction
    notes = "\n".join(sig.case_notes)
    for fact in ("Known to the customer: You are Dana Okafor with phone number 555-010-4471.",
                 "Pixelon 7", "Not known to the customer: You do not know your account number.",
                 "You will consider the issue resolved only when the status bar shows at least two signal bars.",
                 "You are willing to visit a store if needed, but you do not want to buy a new phone.",
                 "You need the phone working before Monday."):
        assert fact in notes, fact
    gt = cf.ground_truth(ids[0])
    assert gt.expected_tools == ["toggle_airplane_mode", "reseat_sim_card"]
    assert gt.expected_actions[0]["requestor"] == "user"
    assert "Expected end state:" in gt.reference_guidance and "assert_service_status" in gt.reference_guidance
    assert gt.extra["domain"] == "telecom" and "Express mild frustration" in \
        gt.extra["simulator_instructions"]["task_instructions"]

    bill = cf.load(ids[1])
    bill_text = json.dumps(bill.model_dump(mode="json"))
    assert "retired teacher" not in bill_text and "partial credit" not in bill_text and "dump" not in bill_text
    assert "You want the whole $84 removed from the bill." in bill_text
    assert any(n.startswith("Ticket: Customer Luis Ferreira") for n in bill.case_notes)  # tau2's own ticket
    assert cf.ground_truth(ids[1]).extra["persona"].startswith("You are a 58-year-old")
    assert "Agent should check the roaming add-on" in cf.ground_truth(ids[1]).reference_guidance
    assert "end the conversation" not in json.dumps(cf.load(ids[2]).model_dump(mode="json"))


def test_duplicate_mapped_ids_and_bad_instructions_are_refused(tmp_path):
    task = json.loads((DATA / "tau2_telecom_tasks.json").read_text())[0]
    p = tmp_path / "t.json"
    p.write_text(json.dumps([task, task]))
    with pytest.raises(MalformedSourceError, match="item 1 .* already used"):
        import_tau2(p)
    p.write_text(json.dumps([{"id": "x", "user_scenario": {"instructions": 3}}]))
    with pytest.raises(MalformedSourceError, match="item 0 \\(id 'x'\\): user_scenario.instructions"):
        import_tau2(p)


def _task(tid: str, **extra) -> dict:
    return {"id": tid, "user_scenario": {"instructions": "**Your goal:** Open an account."}, **extra}


def _verified(when: str) -> dict:
    return {"evaluation_criteria": {"actions": [
        {"name": "get_user", "arguments": {"user_id": "u1"}},
        {"name": "log_verification", "arguments": {"name": "Ana", "time_verified": when}}]}}


def test_the_cases_clock_is_the_one_the_task_states_never_today(tmp_path, capsys):
    tasks = [_task("t1", **_verified("2025-11-14 03:40:00 EST")),
             _task("t2", description={"notes": "Decide which promotion applies on the current date (11/13/2025)."}),
             _task("t3")]
    p = tmp_path / "tasks.json"
    p.write_text(json.dumps(tasks[:2]))
    recs = {r.case_id: r for r in import_tau2(p)}
    assert str(recs["t1"].as_of) == "2025-11-14"
    assert recs["t1"].as_of_source == ("task: evaluation_criteria.actions[1].arguments.time_verified = "
                                       "'2025-11-14 03:40:00 EST'")
    assert str(recs["t2"].as_of) == "2025-11-13" and "current date (11/13/2025" in recs["t2"].as_of_source
    # t3 states none and the others disagree: the import asks for the date
    p.write_text(json.dumps(tasks))
    with pytest.raises(UserError, match=r"1 task states no clock and the others disagree \(2025-11-14 \(1 task\), "
                       r"2025-11-13 \(1 task\)\): give the date with --as-of"):
        import_tau2(p, domain="banking")
    p.write_text(json.dumps(tasks[:1] + tasks[2:]))
    [t1, t3] = import_tau2(p)
    assert str(t3.as_of) == "2025-11-14" and t3.as_of_source.startswith("file: the clock 1 of the 2 tasks")
    [t1, t3] = import_tau2(p, as_of="2025-10-01")  # the option decides for a task that states none ...
    assert str(t3.as_of) == "2025-10-01" and t3.as_of_source.startswith("--as-of 2025-10-01")
    assert str(t1.as_of) == "2025-11-14"  # ... and a task's own clock wins
    # the agent sees the date, nothing else of where it came from
    out = tmp_path / "c.jsonl"
    assert main(["cases", "import-tau2", str(p), "-o", str(out)]) == 0
    shown = json.dumps(CaseFile(out).load("t1").model_dump(mode="json"))
    assert '"as_of": "2025-11-14"' in shown
    for hidden in ("03:40", "EST", "time_verified", "as_of_source", "log_verification"):
        assert hidden not in shown


def test_no_stated_clock_is_refused_with_a_line_asking_for_as_of(tmp_path, capsys):
    p = tmp_path / "tasks.json"
    p.write_text(json.dumps([_task("t1"), _task("t2")]))
    out = tmp_path / "c.jsonl"
    assert main(["cases", "import-tau2", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no task states the benchmark's clock" in err and "--as-of YYYY-MM-DD" in err
    assert not out.exists()
    assert main(["cases", "import-tau2", str(p), "-o", str(out), "--as-of", "14/11/2025"]) == 2
    assert "is not a date: give it as YYYY-MM-DD" in capsys.readouterr().err
    assert main(["cases", "import-tau2", str(p), "-o", str(out), "--as-of", "2025-11-14"]) == 0
    assert {str(c.as_of) for c in CaseFile(out).cases()} == {"2025-11-14"}
