"""The one tool-name rule, with a test for each way the five earlier rules disagreed."""

from skillrag.text import code_names, is_field_name, tool_names, uses_tool


def test_backticked_called_or_named_a_tool():
    assert tool_names("Open the claim with `open_damage_claim` (damage type `structural`).") == ("open_damage_claim",)
    assert tool_names("- Tool to give the customer: `submit_claim(user_id: str)`") == ("submit_claim",)
    assert tool_names("Then log it using log_verification.") == ("log_verification",)
    assert tool_names("Run the lookup_order tool first.") == ("lookup_order",)
    assert tool_names("Tool: escalate_to_tier2") == ("escalate_to_tier2",)


def test_the_numbered_convention_needs_no_context():
    assert tool_names("Use freeze_debit_card_3892 with the card_id") == ("freeze_debit_card_3892",)
    assert tool_names("freeze_debit_card_3892 locks the card.") == ("freeze_debit_card_3892",)


def test_wiki_rule_disagreement_a_backticked_name_without_digits_is_a_tool():
    """The wiki typed only digit-suffixed names as tools, so `open_damage_claim` was a procedure link."""
    assert tool_names("File it with `open_damage_claim`.") == ("open_damage_claim",)


def test_harness_rule_disagreement_bare_value_names_are_not_tools():
    """The harness took any bare name with two underscores for a tool: a list of transaction types
    named six tools that do not exist."""
    text = "**type**: one of:\n  - debit_card_purchase\n  - ach_transfer_in\n  - wire_transfer_out"
    assert tool_names(text) == ()


def test_case_rule_disagreement_a_user_name_is_not_a_tool():
    """The case reader took every snake_case word for a tool (a user name, ``coffeelover_fati``)."""
    assert tool_names("My username is coffeelover_fati.") == ()


def test_a_call_tells_the_reader_to_use_a_tool():
    """Written as a call, a name is used as a tool (no earlier rule of the quoting side saw it)."""
    line = "- get_pending_replacement_orders_5765({"
    assert uses_tool(line) and tool_names(line) == ("get_pending_replacement_orders_5765",)
    assert not uses_tool("Pass `order_id(string)` as the key")  # a field, even in a call form


def test_fields_values_and_article_ids_are_not_tools():
    assert tool_names("Use 'annual_fee_waived' as the flag_type") == ()  # a quoted value, a field
    assert tool_names("See doc_bank_accounts_general_001 for details.") == ()  # an article id
    assert is_field_name("credit_card_account_id") and not is_field_name("freeze_card")
    assert not uses_tool("see card_id")
    # a field after "using" is an input, not a tool (a τ² article: "verify using date_of_birth")
    assert tool_names("Customer must be at least 18 (verify using date_of_birth)") == ()


def test_code_names_are_wider_than_tools():
    """The save warnings compare every name written as code, tools and fields alike: a guidance that
    names ``card_id`` must quote where it comes from."""
    text = "Ask for the card_id, then call `freeze_card_4410` with `structural`."
    assert code_names(text) == ("card_id", "freeze_card_4410", "structural")
    assert tool_names(text) == ("freeze_card_4410",)


def test_code_names_in_order_of_first_mention():
    """``review.export`` lists the approved guidance's tools in the order it first names them."""
    text = "Call `verify_identity` first; then toggle_airplane_mode(), `Settings`, `a b`; verify_identity again."
    assert code_names(text) == ("verify_identity", "toggle_airplane_mode", "Settings")
