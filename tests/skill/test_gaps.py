"""The evidence-gap warnings of ``save_output`` (``skillrag.skill.gaps``): what the case states is not a
policy claim, structure labels and quote marks are not names, titles must be the cited article's, and
real misses (a tool name, an article figure with no snippet) are still reported."""

from __future__ import annotations

from skillrag.skill import CaseFile, CaseRecord, Message, SkillRegistry, SkillTools, write_cases
from skillrag.skill.gaps import case_text, evidence_gaps
from skillrag.skill.testing import make_output

BODY = ("Referral bonus: $100 per approved friend, up to 5 friends a year. Look the referral up with "
        "`lookup_referral_4410`. The Silver Plus Account's rate is 2.5%. TIER 1 members get free wires; "
        "TIER 2 members pay $15. Cobalt Blue Account holders earn 1%.")
CASE = {
    "case_id": "c9",
    "contact_reason": "Referral bonus missing",
    "case_notes": ["Friend's user id: friend_user_5839. Customer holds a Cobalt Blue account.",
                   "Customer moved $30,000 and spends $700 a month; a competitor offers 8%."],
    "case_messages": [{"role": "customer", "content": "Where is my bonus?"}],
    "as_of": "2025-10-02",
}
SNIP = {"source_article": "a", "source_title": "Referrals", "text": "Referral bonus: $100 per approved friend",
        "why": "step 1"}


def _flagged(guidance: str, *, case: str | None = None, snippets: list | None = None) -> list[str]:
    out = {"guidance": guidance, "snippets": snippets or [SNIP]}
    return [g.subject for g in evidence_gaps(out, {"a": BODY}, titles={"a": "Referrals"}, fetched=["a"], case=case)
            if g.kind == "unquoted_identifier"]


def test_amounts_ids_names_and_field_names_the_case_states_are_not_flagged():
    guidance = ("1. The $100 bonus is paid per friend; check friend_user_5839 with `lookup_referral_4410`.\n"
                "2. The customer's $30,000 and $700 a month beat the competitor's 8%; as_of decides the window.\n"
                "3. Keep the Cobalt Blue account open; TIER 2 members pay $15.")
    without = _flagged(guidance)
    assert {"friend_user_5839", "$30,000", "$700", "8%", "as_of", "Cobalt Blue"} <= set(without)
    with_case = _flagged(guidance, case=case_text(CASE))
    # what is left are the real misses: an article's tool and an article's figure with no snippet
    assert sorted(with_case) == ["$15", "lookup_referral_4410"]


def test_a_case_amount_is_matched_by_value_and_a_case_name_by_whole_words():
    case = case_text({"case_notes": ["They spent 700 dollars with the Cobalt Blue Accountant."]})
    assert "$700" not in _flagged("1. Refund the $700.", case=case)  # the same amount, written differently
    # "Cobalt Blue Account" is not what the case says ("Accountant"): still an article name to quote
    assert _flagged("1. Offer the Cobalt Blue Account.", case=case) == ["Cobalt Blue Account"]


def test_structure_labels_are_not_names_and_names_match_in_any_case():
    assert _flagged("1. Step 1: verify identity.\n2. Tier 1 and Tier 2 members differ; see CODE 05.") == []
    # a product name is still flagged, and a quote written in capitals covers it
    assert _flagged("1. Open a Silver Plus Account.") == ["Silver Plus Account"]
    upper = {**SNIP, "text": "The Silver Plus Account's rate is 2.5%."}
    assert _flagged("1. Open a SILVER PLUS ACCOUNT.", snippets=[upper]) == []


def test_quote_marks_and_possessives_are_not_part_of_a_name():
    snip = {**SNIP, "text": "The Silver Plus Account's rate is 2.5%."}
    assert _flagged("1. Recommend the 'Silver Plus Account' (2.5%).", snippets=[snip]) == []
    assert _flagged("1. Recommend the Silver Plus Account's rate of 2.5%.", snippets=[snip]) == []


def test_tool_names_match_in_any_case():
    snip = {**SNIP, "text": "Look the referral up with `lookup_referral_4410`."}
    assert _flagged("1. Call LOOKUP_REFERRAL_4410.", snippets=[snip]) == []


def test_a_source_title_that_is_not_the_articles_title_is_warned():
    out = {"guidance": "1. Pay the $100 bonus.",
           "snippets": [SNIP, {**SNIP, "source_title": "referrals ", "text": "up to 5 friends a year"},
                        {**SNIP, "source_title": "Referral Program FAQ", "text": "Referral bonus: $100"}]}
    gaps = evidence_gaps(out, {"a": BODY}, titles={"a": "Referrals"}, fetched=["a"])
    wrong = [g for g in gaps if g.kind == "source_title_mismatch"]
    assert [g.subject for g in wrong] == ["snippets[2]"]  # case and spacing are not a different title
    assert "'Referral Program FAQ' is not the title of a ('Referrals')" in wrong[0].message
    assert not [g for g in evidence_gaps(out, {"a": BODY}, fetched=["a"]) if g.kind == "source_title_mismatch"]


def test_case_text_holds_every_field_name_and_value():
    text = case_text(CASE)
    for part in ("case_notes", "as_of", "friend_user_5839", "role", "Where is my bonus?", "2025-10-02"):
        assert part in text


def test_save_output_leaves_the_cases_own_facts_alone(wiki_ws, tmp_path):
    """End to end: the case file the tools read tells save_output what the case states."""
    path = tmp_path / "cases.jsonl"
    write_cases(path, [CaseRecord(case_id="c9", contact_reason="Gold card fee", case_notes=[
        "Customer says a competitor charges $195 and gave user id cust_user_77."],
        case_messages=[Message(role="customer", content="Why $95?")])])
    sk = SkillRegistry(wiki_ws).get("cs-guidance")
    title = "Gold Rewards Card: annual fee"
    out = make_output("c9", [("doc_cards_gold_001",
                              "The Gold Rewards Card has an annual fee of $95, waived in the first year.")],
                      titles={"doc_cards_gold_001": title},
                      guidance=("1. The Gold Rewards Card fee is $95 (the competitor's is $195); note cust_user_77.\n"
                                "2. Late payments cost $40."))
    with_case = SkillTools(wiki_ws, sk, CaseFile(path))
    with_case.load_case("c9")
    with_case.get_article("doc_cards_gold_001")
    saved = with_case.save_output(out, check=True)
    assert [g.subject for g in saved.warnings] == ["$40"]  # the article's figure, unquoted
    no_case = SkillTools(wiki_ws, sk)  # no case file: every identifier counts as a claim
    flagged = {g.subject for g in no_case.save_output(out, check=True).warnings}
    assert {"$195", "cust_user_77", "$40"} <= flagged
    assert saved.output["audit"]["warnings"] == [g.to_dict() for g in saved.warnings]


def _unused(guidance: str, snippets: list[dict]) -> list[str]:
    out = {"guidance": guidance, "snippets": snippets}
    bodies = {"a": " ".join(s["text"] for s in snippets)}
    return [g.subject for g in evidence_gaps(out, bodies) if g.kind == "unused_snippet"]


def test_unused_snippet_reads_hyphens_case_and_inflection_like_the_other_checks():
    snip = {"source_article": "a", "source_title": "t", "why": "the rule",
            "text": "Membership in this tier is extended by invitation only."}
    # "invitation-only" and "by invitation only" are the same two terms, next to each other in both
    assert _unused("1. Tell the customer the Diamond Elite card is Invitation-Only; they cannot apply.", [snip]) == []
    # a step that shares nothing with it still leaves it unused
    assert _unused("1. Verify the customer's identity.", [snip]) == ["snippets[0]"]


def test_unused_snippet_counts_the_why_and_the_step_it_names():
    snip = {"source_article": "a", "source_title": "t", "text": "Wires leave the same business day.",
            "why": "the cut-off time"}
    guidance = "1. Verify the customer.\n2. Send the transfer before 5 pm."
    assert _unused(guidance, [snip]) == ["snippets[0]"]
    assert _unused(guidance, [{**snip, "why": "Step 2: when it is sent"}]) == []
    # a bulleted guidance counts its bullets as steps 1, 2, ...
    assert _unused("- Verify the customer.\n- Send the transfer.", [{**snip, "why": "step 2"}]) == []


def test_a_subject_carries_no_punctuation_and_no_leading_article():
    body = "The Green Account charges a monthly fee of $15, waived above $1,500."
    snip = {"source_article": "a", "source_title": "t", "text": "Verify the customer first.", "why": "step 1"}
    out = {"guidance": "1. The Green Account fee is $15, and it is waived above $1,500.", "snippets": [snip]}
    assert sorted(g.subject for g in evidence_gaps(out, {"a": body}) if g.kind == "unquoted_identifier") == [
        "$1,500", "$15", "Green Account"]
    # and a quote of the name without the article covers the name the guidance opens a sentence with
    quoted = {**snip, "text": "Green Account: a monthly fee of $15, waived above $1,500."}
    assert [g for g in evidence_gaps({**out, "snippets": [quoted]}, {"a": body + " " + quoted["text"]})
            if g.kind == "unquoted_identifier"] == []


WIRE = {"source_article": "a", "source_title": "t", "text": "Domestic wires cost $25 and leave the same day.",
        "why": "Step 2: the wire fee"}
MAIL = {"source_article": "a", "source_title": "t", "text": "Replacement cards are mailed within 5 business days.",
        "why": "Step 1: delivery time"}
STEPS = "1. Order the replacement card; the replacement fee is $25.\n2. For the domestic wire, say it leaves today."


def _warned(guidance: str, snippets: list[dict], case: str | None = None, **kw) -> list[tuple[str, str]]:
    out = {"guidance": guidance, "snippets": snippets, **kw}
    body = " ".join(s["text"] for s in snippets)
    return [(g.kind, g.subject) for g in evidence_gaps(out, {"a": body}, case=case)
            if g.kind in ("unquoted_identifier", "unsupported_derived")]


def test_a_figure_is_matched_against_the_snippets_of_the_step_that_states_it():
    # $25 is quoted, but only by the wire snippet, which backs step 2: step 1's fee has no quote behind it
    out = {"guidance": STEPS, "snippets": [WIRE, MAIL]}
    [gap] = [g for g in evidence_gaps(out, {"a": WIRE["text"] + MAIL["text"]}) if g.kind == "unquoted_identifier"]
    assert gap.subject == "$25"
    assert "step 1 states the amount $25" in gap.message and "snippets[0] (linked to step 2)" in gap.message
    # the snippet that does back both steps says so in its why
    assert _warned(STEPS, [{**WIRE, "why": "Steps 1 and 2: the fee"}, MAIL]) == []
    # a line before the first step belongs to no step: any snippet backs its figure
    assert _warned("Fees: $25.\n1. Order the replacement card.", [WIRE, MAIL]) == []


def test_derived_figures_are_not_flagged_but_their_sources_are_checked():
    fee = {"source_article": "a", "source_title": "t", "why": "step 1",
           "text": "The annual fee is $200, and a $150 travel credit is applied each year."}
    guidance = "1. The card costs $50 a year net of the travel credit."
    assert _warned(guidance, [fee]) == [("unquoted_identifier", "$50")]
    derived = [{"value": "$50", "from": ["$200.00", "$150"], "how": "annual fee $200 minus the $150 credit"}]
    assert _warned(guidance, [fee], derived=derived) == []
    # a source no snippet holds is reported on the entry (and not again on the figure)
    bad = [{**derived[0], "from": ["$200", "$175", "a waived first year"]}]
    out = {"guidance": guidance, "snippets": [fee], "derived": bad}
    [gap] = evidence_gaps(out, {"a": fee["text"]})
    assert (gap.kind, gap.subject) == ("unsupported_derived", "derived[0]")
    assert "'$175', 'a waived first year'" in gap.message
    # a phrase is matched as text, any case; a figure the case states is a source too
    ok = [{"value": "$1,230", "from": ["Travel Credit", "$1,080"], "how": "her $1,080 balance plus $150"}]
    case = case_text({"case_notes": ["Her balance is $1,080."]})
    assert _warned("1. Her new balance is $1,230.", [fee], derived=ok, case=case) == []


def test_an_edited_version_matches_a_figure_against_the_step_the_why_was_written_for():
    fee = {"source_article": "a", "source_title": "t", "why": "Backs step 1: the fee.",
           "text": "A replacement card costs $25 unless the account is premium."}
    v0 = "1. Tell the customer the replacement fee of $25.\n2. Freeze the card in the app."
    v1 = "1. Freeze the card in the app.\n2. Tell the customer the replacement fee of $25."
    body = {"a": fee["text"]}
    # read as this version's step 1 ("Freeze"), the why would leave step 2's $25 without its snippet
    [gap] = [g for g in evidence_gaps({"guidance": v1, "snippets": [fee]}, body) if g.kind == "unquoted_identifier"]
    assert gap.subject == "$25" and "step 2 states" in gap.message
    # the why names step 1 of version 0, which is step 2 of the edit: nothing to warn about
    assert [g for g in evidence_gaps({"guidance": v1, "snippets": [fee]}, body, basis=[v0])
            if g.kind == "unquoted_identifier"] == []


def test_an_argument_an_article_read_names_is_not_a_tool_claim():
    body = ("Call `file_dispute_7731(transaction_id, card_action)`: set card_action to 'freeze' for a lost "
            "card. Use the refund_tool action for refunds.")
    snip = {"source_article": "a", "source_title": "Referrals", "text": "set card_action to 'freeze' for a lost card",
            "why": "step 1"}
    guidance = ("1. Call file_dispute_7731 with transaction_id = the charge and card_action = freeze (one call per "
                "entry of the transaction_ids); then run refund_tool; keep made_up_field empty.")
    out = {"guidance": guidance, "snippets": [snip]}
    flagged = [g.subject for g in evidence_gaps(out, {"a": body}, titles={"a": "Referrals"}, fetched=["a"])
               if g.kind == "unquoted_identifier"]
    # the tools still need a snippet (one by the numbered convention, one by use); the arguments the
    # article writes do not; a name no article read writes is still flagged
    assert sorted(flagged) == ["file_dispute_7731", "made_up_field", "refund_tool"]


def test_emphasis_in_capitals_is_not_a_product_name():
    """Found by the agent harness: "Check ALL" and "Do NOT" were flagged as unbacked product names because
    an article writes the same words; a name needs two words that are not stop words."""
    body = BODY + " Check all of the following. Do not skip it. The Gold Rewards Card is a card."
    out = {"guidance": "1. Check ALL of them. 2. Do NOT skip it. 3. Offer the Gold Rewards Card.",
           "snippets": [SNIP]}
    flagged = [g.subject for g in evidence_gaps(out, {"a": body}, titles={"a": "Referrals"}, fetched=["a"])
               if g.kind == "unquoted_identifier"]
    assert flagged == ["Gold Rewards Card"]  # a real product name is still flagged
