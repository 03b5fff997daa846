"""Families, aspects and the text the extractive builder reads (no workspace needed)."""

from __future__ import annotations

from skillrag.corpus import Article, content_hash
from skillrag.corpus.sections import parse_sections
from skillrag.wiki._statements import exclusions, key_line, purpose_statements, summary_line, units
from skillrag.wiki.aspects import OVERVIEW, find_aspects, noun_phrases, stem, word_uses
from skillrag.wiki.extractive import aspect_page, aspect_title, build_extractive, entity_page
from skillrag.wiki.families import (
    Facets,
    article_facets,
    capitalised_names,
    entity_title,
    find_families,
    group_key,
)


def art(aid: str, title: str, body: str, **kw) -> Article:
    return Article(id=aid, title=title, body=body, content_hash=content_hash(body), source_path=f"{aid}.json",
                   sections=parse_sections(body), **kw)


BANK = [
    art("doc_checking_accounts_blue_account_001", "Blue Account at a glance",
        "## Key details\n- Monthly maintenance fee: $20.00\n- Waiver: keep a daily balance of $625\n"),
    art("doc_checking_accounts_blue_account_002", "Blue Account Referral Program",
        "## Referral rewards\n- **Your bonus**: $35 for each qualifying referral\n"),
    art("doc_checking_accounts_blue_account_003", "International ATM withdrawals for Blue Account",
        "## Fees\nForeign ATM withdrawals cost 1% of the amount.\n"),
    art("doc_checking_accounts_purple_account_001", "Purple Account at a glance",
        "## Key details\n- Monthly maintenance fee: $15.00\n"),
    art("doc_checking_accounts_purple_account_002", "FAQ: Purple Account",
        "## Frequently asked questions\n\n- Q: Does the Purple Account have a referral program?\n"
        "  A: Yes. You earn $45 for each referral.\n"),
    art("doc_checking_accounts_dark_green_account_001", "Dark Green Account at a glance",
        "## Key details\n- Monthly maintenance fee: $0.00 for students\n"),
    art("doc_checking_accounts_dark_green_account_002", "Dark Green Account Referral Program",
        "Refer others and earn rewards when they join.\n\n### Referral rewards\n- Your bonus: $40 per referral\n"),
    art("doc_business_checking_accounts_navy_blue_001", "Navy Blue Business Checking: Complete Guide",
        "## Key costs\n- Monthly maintenance fee: $0.00\n\n## Business Referral Program\n\n"
        "| Referral Detail | Value |\n| --- | --- |\n| Your referral bonus | $100 |\n"),
    art("doc_business_checking_accounts_navy_blue_002", "Navy Blue Account: Wire Transfer Pricing",
        "## Outgoing wires\nFee per outgoing domestic wire: $15.00\n"),
    art("doc_business_checking_accounts_navy_blue_003", "Navy Blue Account: Overdraft Protection and Fees",
        "## Overdraft\nThe overdraft fee is $30.\n"),
    art("doc_business_checking_accounts_beige_001", "Beige Account Referral Program",
        "## Rewards\nYour reward: $500 for each qualifying referral.\n"),
    art("doc_business_checking_accounts_beige_002", "Implementing Beige: Enterprise Treasury Onboarding",
        "## Overview\nMaintain at least $250,000.\n"),
    art("doc_bank_accounts_bank_accounts_(general)_001", "Internal: Checking Account Referral Program Terms",
        "## Limits\nAt most 2 referral bonuses in any rolling 9-day window.\n"),
    art("doc_bank_accounts_bank_accounts_(general)_002", "Internal: Opening Personal Checking Accounts",
        "## Procedure\n1. Verify the customer with verify_identity_1001.\n"),
]


def test_families_by_id_stem_with_readable_names_and_categories():
    fams = {f.key: f for f in find_families(BANK)}
    navy = fams["doc_business_checking_accounts_navy_blue"]
    assert navy.found_by == "id-stem" and len(navy.articles) == 3
    assert navy.category == "business checking accounts"
    assert navy.name == "Navy Blue Account" and navy.title == "Navy Blue Account (business checking)"
    assert fams["doc_checking_accounts_blue_account"].title == "Blue Account (checking accounts)"
    assert fams["doc_bank_accounts_bank_accounts_(general)"].title == "Bank Accounts (general)"
    assert fams["doc_business_checking_accounts_beige"].name == "Beige Account"
    assert sum(len(f.articles) for f in fams.values()) == len(BANK)  # every article in exactly one family


def test_facets_tell_business_and_personal_siblings_apart_with_the_families_rule():
    """Issue 22: business products flooded personal searches and nothing told them apart. Each article's
    facets are its family's category and the customer type that category is for."""
    facets = article_facets(BANK)
    fams = {f.key: f for f in find_families(BANK)}
    for f in fams.values():  # the category is the family's, for every member
        assert {facets[a.id].category for a in f.articles} == {f.category.lower()}
    assert facets["doc_business_checking_accounts_navy_blue_002"] == Facets("business checking accounts", "business")
    # no customer word, but its "business ..." twin is in the corpus: personal
    assert facets["doc_checking_accounts_purple_account_001"] == Facets("checking accounts", "personal")
    assert facets["doc_bank_accounts_bank_accounts_(general)_002"] == Facets("", "")  # a general family
    alone = article_facets([a for a in BANK if not a.id.startswith("doc_business_")])
    assert alone["doc_checking_accounts_purple_account_001"] == Facets("checking accounts", "")  # no twin: unknown
    loose = art("kb_17", "Business Checking: wire cut-off times", "Wires sent after 5 pm go out the next day.")
    assert article_facets([loose])["kb_17"] == Facets("", "business")  # no family: the title's customer word


def test_families_from_titles_named_entities_and_clusters():
    arts = [
        art("kb-1", "Gold Card: Annual Fee", "The annual fee is $95."),
        art("kb-2", "Gold Card: Lost Card", "Freeze the card first."),
        art("kb-3", "Linking Blue Savings with checking", "Link the Blue Savings account."),
        art("kb-4", "Interest on Blue Savings explained", "Interest is paid monthly."),
        art("kb-5", "Refund timing by membership tier", "Refunds are issued within ten business days of the return."),
        art("kb-6", "When refunds reach the card", "Refunds reach the card within ten business days of the return."),
        art("kb-7", "Store hours", "Stores open at nine."),
    ]
    fams = {tuple(f.ids()): f for f in find_families(arts, max_group=5)}
    assert fams[("kb-1", "kb-2")].found_by == "title" and fams[("kb-1", "kb-2")].name == "Gold Card"
    assert fams[("kb-3", "kb-4")].found_by == "named-entity" and fams[("kb-3", "kb-4")].name == "Blue Savings"
    assert fams[("kb-5", "kb-6")].found_by == "cluster"
    assert fams[("kb-7",)].found_by == "single"
    assert capitalised_names("Linking Blue Savings with Gold Card") == ["Linking Blue Savings", "Blue Savings", "Gold Card"]


def test_split_documents_form_one_family_in_document_order():
    secs = [art("m#b", "Manual: B", "## B\nb", parent="m", heading_path=["B"], parent_offset=10),
            art("m#a", "Manual: A", "## A\na", parent="m", heading_path=["A"], parent_offset=0)]
    (fam,) = find_families(secs)
    assert fam.found_by == "document" and fam.name == "Manual" and fam.ids() == ["m#a", "m#b"]
    assert group_key("m#a") == "m" and group_key("doc_x_003") == "doc_x"


def test_entity_titles():
    assert entity_title("Navy Blue Account", "business checking accounts") == "Navy Blue Account (business checking)"
    assert entity_title("Green Account (checking)", "checking accounts") == "Green Account (checking)"
    assert entity_title("Everyone Pay", "") == "Everyone Pay"


def test_aspects_compare_sibling_entities_with_their_key_lines():
    fams = find_families(BANK)
    aspects = {(a.category, a.name): a for a in find_aspects(fams)}
    ref = aspects[("checking accounts", "Referral Program")]
    by_family = {m.family.name: m for m in ref.members}
    # titles name it (Blue, Dark Green); an FAQ question finds it in Purple's FAQ
    assert {"Blue Account", "Purple Account", "Dark Green Account"} <= set(by_family)
    assert "$45" in by_family["Purple Account"].key_line
    assert by_family["Dark Green Account"].key_line == "Your bonus: $40 per referral"
    # the general rules on checking account referrals are listed too
    assert "doc_bank_accounts_bank_accounts_(general)_001" in ref.ids()
    assert "doc_bank_accounts_bank_accounts_(general)_002" not in ref.ids()
    # the business accounts are another category: a section heading finds Navy Blue's programme
    biz = aspects[("business checking accounts", "Referral Program")]
    assert biz.ids() == ["doc_business_checking_accounts_beige_001", "doc_business_checking_accounts_navy_blue_001"]
    navy = next(m for m in biz.members if m.family.name == "Navy Blue Account")
    assert navy.heading == "Business Referral Program" and navy.key_line == "Your referral bonus: $100"
    # every category gets an overview: one lead article per entity
    overview = aspects[("checking accounts", OVERVIEW)]
    assert overview.ids() == ["doc_checking_accounts_blue_account_001", "doc_checking_accounts_dark_green_account_001",
                              "doc_checking_accounts_purple_account_001"]


def test_aspect_and_entity_pages_list_every_article():
    fams = find_families(BANK)
    ref = next(a for a in find_aspects(fams) if a.name == "Referral Program" and a.category == "checking accounts")
    page = aspect_page(ref, "referral-program-checking-accounts")
    assert page.kind == "aspect" and aspect_title(ref) == page.title == "Referral Program across checking accounts"
    assert page.source_ids() == ref.ids() and all(s.summary for s in page.sources)
    assert any(s.text == "Purple Account: You earn $45 for each referral." for s in page.steps)
    navy = next(f for f in fams if f.name == "Navy Blue Account")
    ep = entity_page(navy, "navy", max_steps=1)
    assert ep.kind == "entity" and ep.source_ids() == navy.ids()  # the article list is never capped ...
    assert len(ep.steps) == 1  # ... only the procedure text


def test_no_merge_layer_is_one_topic_page_per_article():
    pages = build_extractive(BANK, variant="no-merge")
    assert len(pages) == len(BANK) and {p.kind for p in pages} == {"topic"}


def test_units_purpose_statements_and_explicit_exclusions():
    body = ("This article says when a refund is issued. It does not decide whether the item may be returned; "
            "see Return eligibility.\n\n| Tier | Refund |\n|---|---|\n| Plus | 5 days |\n\n"
            "Customers with a balance above $5,000 do not pay the fee.\n")
    a = art("kb-refund", "Refund timing", body)
    assert "Plus: 5 days" in units(body)
    assert purpose_statements(a) == ["This article says when a refund is issued."]
    assert exclusions(a) == ["It does not decide whether the item may be returned; see Return eligibility."]
    # a plain negative fact is no exclusion
    assert exclusions(art("x", "X", "Customers with a balance above $5,000 do not pay the annual fee.")) == []
    assert summary_line(a) == "This article says when a refund is issued."
    fees = "Overview of our fees.\n\n- Monthly fee: $20\n- Statements are sent every month by post.\n"
    assert key_line([fees], {stem("fee")}, stem) == "Monthly fee: $20"


CARDS = [
    art("doc_credit_cards_eco_card_001", "Eco Card: Referral Program - Earn Rewards for Referring Friends",
        "## Your bonus\nThe referral is paid when your friend spends $500. Each friend is counted once.\n"),
    art("doc_credit_cards_eco_card_002", "Eco Card: Partner Merchants and Eco-Friendly Shopping Guide",
        "Shop with partners for an early reward. Our friendly staff can help.\n"),
    art("doc_credit_cards_silver_card_001", "Silver Card: Referral Program - Earn Rewards for Referring Friends",
        "## Your bonus\nThe bonus is $100 per referral.\n"),
    art("doc_credit_cards_silver_card_002", "Who can open a Silver Card?",
        "You can open a card online. Applicants must be 18.\n\n## Stop payments\nA stop payment is $30.\n"),
    art("doc_credit_cards_gold_card_001", "Gold Card: Referral Program", "The bonus is $75 per referral.\n"),
    art("doc_credit_cards_gold_card_002", "Why can't I open a Gold Card?",
        "To open a card you need a score of 700.\n\n## Bonus payment\nThe bonus payment arrives in May.\n"),
]


def test_aspect_names_are_noun_phrases_that_recur_across_siblings():
    """A lone adjective or verb ("Eco-Friendly" and "Referring Friends" share the stem friend; "open")
    is no aspect, and phrases that only share a word ("Stop payments", "Bonus payment") stay apart."""
    aspects = {a.name: a for a in find_aspects(find_families(CARDS))}
    assert set(aspects) == {OVERVIEW, "Referral Program"}
    assert aspects["Referral Program"].ids() == ["doc_credit_cards_eco_card_001", "doc_credit_cards_gold_card_001",
                                                 "doc_credit_cards_silver_card_001"]


def test_noun_phrases_end_in_a_noun_the_corpus_uses_as_one():
    uses = word_uses([("The interest is paid monthly. You can open the app. An early payment helps. "
                       "Each payment is posted. The referral is $40. Payments may go through late.")])
    assert uses.noun_like("payments") and uses.noun_like("referral") and uses.noun_like("program")  # unseen
    assert not uses.noun_like("open") and not uses.noun_like("early") and not uses.noun_like("calculated")
    got = noun_phrases("How is interest calculated and when is it paid?", set(), uses)
    assert [s for _k, s in got] == ["interest"]
    assert noun_phrases("Didn't go through: Early payment, CODE 82", set(), uses) == [
        (frozenset({"early", "payment"}), "Early payment"), (frozenset({"code"}), "CODE")]
    referral = noun_phrases("Referral Program", set(), uses)
    assert referral == [(frozenset({"referral"}), "Referral Program")]  # "program" is generic: same key
    assert noun_phrases("Referring Friends", set(), uses)[0][0] == frozenset({"referring", "friend"})


def test_a_general_familys_page_says_what_its_titles_are_about():
    general = [
        art("doc_credit_cards_credit_cards_(general)_001", "Understanding Credit Card Referral Statuses",
            "We want to help you understand what this means and how it might apply to your situation.\n"),
        art("doc_credit_cards_credit_cards_(general)_002", "Credit Card Referral Offers and Restrictions", "x.\n"),
        art("doc_credit_cards_credit_cards_(general)_003", "Filing a Cash Back Dispute (Internal)", "y.\n"),
        art("doc_credit_cards_credit_cards_(general)_004", "Cash Back Dispute Corrections", "z.\n"),
    ]
    fam = next(f for f in find_families(CARDS + general) if f.key.endswith("(general)"))
    page = entity_page(fam, "credit-cards-general")
    assert "We want to help you" not in page.intent  # one article's sentence is not the family's purpose
    assert page.intent.startswith("Credit Cards (general): 4 general articles whose rules apply across")
    assert page.intent.endswith("most often about cash back, dispute, referral.")  # "cash back", not "back dispute"


def test_a_backticked_tool_without_digits_is_a_tool_link():
    """The wiki's own rule took only digit-suffixed names for tools, so `open_damage_claim` became a
    procedure link while freeze_debit_card_3892 was a tool: the text layer's one rule types both."""
    from skillrag.wiki._statements import classify_link
    from skillrag.wiki.page import LinkType

    assert classify_link("How to file a claim", "Open the claim with `open_damage_claim`.") == LinkType.tool
    assert classify_link("How to freeze", "Use freeze_debit_card_3892 at once.") == LinkType.tool
    assert classify_link("How to file a claim", "Keep the card_id at hand.") == LinkType.procedure
