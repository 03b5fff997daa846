"""Quotable passages of a body: exact slices, whole sentences and list items, and what must never be quoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrag.text import passages, rule_of, tool_names, uses_tool

MANUAL = (Path(__file__).parents[1] / "harness" / "fixtures" / "manual" / "acme-support-manual.md").read_text(
    encoding="utf-8")


def _body(text: str) -> str:
    return text.split("---\n", 2)[2]  # the front matter is not part of an article body


@pytest.fixture(scope="module")
def manual():
    body = _body(MANUAL)
    return body, passages(body)


def test_every_passage_is_an_exact_slice(manual):
    body, ps = manual
    assert ps and all(body[p.start : p.end] == p.text for p in ps)
    assert [p.position for p in ps] == list(range(len(ps)))


def test_no_sentence_is_cut_at_an_abbreviation_or_an_amount():
    long = ("Returns are accepted for unworn items with their tags attached, e.g. boots, jackets or packs bought "
            "in the U.S. store for $129.50 or more, as long as the request is started within the return window "
            "for the member's tier shown on the order at the time of purchase, and the item is not listed as final "
            "sale in the catalogue. A second sentence follows here.")
    ps = passages(long)
    assert [p.text for p in ps] == [long[: long.index(" A second")], "A second sentence follows here."]


def test_the_long_manual_sentence_with_abbreviations_stays_whole(manual):
    _, ps = manual
    ret = [p.text for p in ps if p.text.startswith("Returns are accepted")]
    assert len(ret) == 1 and ret[0].endswith("not listed as final sale in the catalogue.")


def test_list_items_are_whole_and_numbered_steps_keep_their_number(manual):
    _, ps = manual
    step = next(p for p in ps if "create_return_label" in p.text and p.is_step)
    assert step.text == "Create the return with `create_return_label`." and step.step_no == 3
    assert step.heading == "Returns" and step.tools == ("create_return_label",) and step.uses_tool


def test_a_small_table_is_one_passage_with_its_header(manual):
    _, ps = manual
    table = next(p for p in ps if p.text.startswith("| Tier"))
    assert "| Gold | 90 days from delivery | Free |" in table.text and table.noise is None
    assert table.rule is not None


def test_agent_addressed_text_is_noise(manual):
    _, ps = manual
    agent = [p for p in ps if p.noise == "agent"]
    assert any("one tool call at a time" in p.text for p in agent)
    assert any("Do not make up any information" in p.text for p in agent)
    assert all(p.noise is None for p in ps if "`verify_member` before" in p.text)  # a real step stays


def test_parameter_lines_marketing_and_questions_are_noise(manual):
    _, ps = manual
    kinds = {p.text.split("\n")[0][:40]: p.noise for p in ps}
    assert kinds["Tool arguments for create_return_label:"] == "parameter"
    assert kinds["Do you love your Acme membership?"] == "marketing"
    assert kinds["Share the love with a friend!"] == "marketing"
    assert passages("- credit_card_account_id (string, required): The card account.")[0].noise == "parameter"
    assert passages("Have questions about your card? We're here to help.")[1].noise == "marketing"


def test_glossary_entries_are_marked(manual):
    _, ps = manual
    gloss = [p for p in ps if p.glossary]
    assert {p.tools[0] for p in gloss} == {"verify_member", "get_order_details", "create_return_label", "exchange_item"}


def test_a_lead_in_travels_with_its_short_list_and_alone_is_noise():
    body = ("Inform the customer of the following:\n- New payments are declined\n- Pending payments may post\n\n"
            "Check these in order:\n\n1. " + "The account must not have any pending disputes; " * 5 + "wait.\n")
    ps = passages(body)
    assert ps[0].text.startswith("Inform the customer of the following:\n- New") and ps[0].noise is None
    assert ps[1].text == "Check these in order:" and ps[1].noise == "lead-in"
    assert ps[2].is_step and ps[2].step_no == 1


def test_fenced_code_is_never_a_passage():
    body = "Use the tool like this:\n\n```\nfreeze_card(card_id=\"c_1\")\n```\n\nThen confirm the freeze with the customer."
    ps = passages(body)
    assert [p.text for p in ps] == ["Use the tool like this:", "Then confirm the freeze with the customer."]
    assert ps[0].noise == "lead-in"  # what it introduces is gone, so it is never quoted either


def test_tool_names_and_rules():
    assert tool_names("Use freeze_debit_card_3892 with the card_id") == ("freeze_debit_card_3892",)
    assert tool_names("Use 'annual_fee_waived' as the flag_type") == ()  # a quoted value, a field
    assert tool_names("Then log it using log_verification.") == ("log_verification",)
    assert uses_tool("Use the get_closure_reason_history_8293 tool to check") and not uses_tool("see card_id")
    assert rule_of("Premium accounts never pay a fee.").kind == "condition"
    assert rule_of("Refunds post within 5 business days.").kind == "limit"
    assert rule_of("The fee is $10.").kind == "amount"
    assert rule_of("Add the card to your wallet.") is None


def test_a_backticked_call_is_a_tool_use():
    text = "- Tool to give the customer: `submit_claim_0042(user_id: str, order_id: str)`"
    assert uses_tool(text) and tool_names(text) == ("submit_claim_0042",)
    assert not uses_tool("Pass `order_id(string)` as the key")  # a field, even in a call form


def test_an_instruction_inside_a_parameter_line_is_its_own_passage():
    body = ("## Tool arguments\n\n"
            "- **order_id** (string) - ID of the order. Use lookup_orders_0077 to find it.\n"
            "- **reason** (string) - Why the customer returns it. Ask the customer.\n")
    ps = passages(body)
    assert [(p.text, p.noise) for p in ps] == [
        ("**order_id** (string) - ID of the order.", "parameter"),
        ("Use lookup_orders_0077 to find it.", None),
        ("**reason** (string) - Why the customer returns it. Ask the customer.", "parameter"),  # no tool: stays whole
    ]
    assert ps[1].uses_tool and all(body[p.start : p.end] == p.text for p in ps)


def test_a_fence_right_under_a_paragraph_line_still_starts_code():
    body = 'Example response (illustrative):\n```\n{\n  "order_id": "<order_id>",\n  "status": "<status>"\n}\n```\nThen confirm the status with the customer.'
    ps = passages(body)
    assert [p.text for p in ps] == ["Example response (illustrative):", "Then confirm the status with the customer."]


def test_a_sentence_that_refers_back_stays_with_the_one_before_it():
    """Found by a new user: "Escalate these to the Member Care team" was quoted alone, and the plan
    read as "escalate every cancellation"."""
    body = ("## Cancelling\n\nMedical cancellations (with a doctor's note) waive the cancellation fee. "
            "Escalate these to the Member Care team with `escalate_member_care`.\n\n"
            "Standard cancellations need 30 days' notice. The fee is $50.\n")
    texts = [p.text for p in passages(body)]
    assert texts == [
        ("Medical cancellations (with a doctor's note) waive the cancellation fee. Escalate these to the "
         "Member Care team with `escalate_member_care`."),
        "Standard cancellations need 30 days' notice.",  # no back-reference: sentences stay apart
        "The fee is $50.",
    ]
    ps = passages(body)
    assert all(body[p.start:p.end] == p.text for p in ps) and ps[0].tools == ("escalate_member_care",)
    # a first sentence that points back has nothing before it in its paragraph; a pair over the
    # line limit stays apart
    long = "A" + "a" * 330 + " rule applies. Escalate these at once.\n"
    assert [p.text for p in passages(long)][-1] == "Escalate these at once."
