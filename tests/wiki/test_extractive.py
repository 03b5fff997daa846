from __future__ import annotations

import pytest

from skillrag.corpus import ArticleStore
from skillrag.errors import EmptyInputError, UserError
from skillrag.wiki import audit_structure, build_wiki, layer_fingerprint, load_pages
from skillrag.wiki.extractive import build_extractive, classify_link, group_key
from skillrag.wiki.page import LinkType
from skillrag.workspace import Workspace


def test_group_key_strips_the_trailing_number():
    assert group_key("doc_credit_cards_gold_rewards_card_003") == "doc_credit_cards_gold_rewards_card"
    assert group_key("doc_bank_accounts_(general)_012") == "doc_bank_accounts_(general)"
    assert group_key("faq") == "faq"


def test_a_family_gets_one_entity_page_with_links_typed_by_section(ws):
    build_wiki(ws)
    pages = {p.id: p for p in load_pages(ws)}
    gold = pages["gold-card"]
    assert gold.kind == "entity" and gold.title == "Gold Card"  # a name, not a keyword list
    assert gold.source_ids() == ["doc_cards_gold_001", "doc_cards_gold_002", "doc_cards_gold_003"]
    assert all(s.summary for s in gold.sources)  # one line on what each covers
    # no article states a purpose: the intent says what the entity is from its lead article's facts
    # (the facts are joined with "; " without their own full stops: never ".;", found by a new user)
    assert gold.intent == "Gold Card: The annual fee is $95 and is billed each January; Customers with a " \
                          "balance above $5,000 do not pay the annual fee."
    # "Customers with a balance above $5,000 do not pay the annual fee" is a fact, not an exclusion
    assert gold.does_not_solve == ()
    types = {(ln.article_id, ln.type) for ln in gold.links()}
    assert ("doc_cards_gold_002", LinkType.tool) in types  # freeze_card_1234 is a tool name
    assert ("doc_cards_gold_003", LinkType.eligibility) in types
    assert {p.kind for p in pages.values()} == {"entity", "aspect", "topic"}
    assert pages["disputes-001"].kind == "topic" and pages["disputes-001"].source_ids() == ["doc_disputes_001"]
    # the two product families are compared on one page through their lead articles
    assert pages["overview"].kind == "aspect"
    assert pages["overview"].source_ids() == ["doc_cards_gold_001", "doc_savings_blue_001"]


def test_classify_link():
    assert classify_link("Eligibility Requirements") is LinkType.eligibility
    assert classify_link("Monthly maintenance fee") is LinkType.fee
    assert classify_link("Opening Procedure", "Use open_bank_account_4821 to open it.") is LinkType.tool
    assert classify_link("Escalation") is LinkType.escalation
    assert classify_link("Miscellaneous", "nothing here") is LinkType.reference


def test_same_articles_same_layer(ws, tmp_path, corpus_dir, make_ws):
    build_wiki(ws)
    other = make_ws(tmp_path / "ws2", corpus_dir)
    build_wiki(other)
    assert layer_fingerprint(ws) == layer_fingerprint(other)


def test_structural_audit_passes_on_the_extractive_layer(ws):
    build_wiki(ws)
    rep = audit_structure(ws)
    assert rep.ok and rep.coverage == 1.0 and rep.referenced == 6 and not rep.dangling


def test_variants_from_the_same_code(ws):
    arts = ArticleStore(ws).list()
    full = build_extractive(arts)
    no_merge = build_extractive(arts, variant="no-merge")
    no_intent = build_extractive(arts, variant="no-intent")
    pooled = build_extractive(arts, variant="pooled-links")
    # no-merge: one page per article
    assert len(no_merge) == len(arts) and all(len(p.sources) == 1 for p in no_merge)
    assert len(full) < len(arts)
    # no-intent: raw procedural text replaces the intent fields; links and sources unchanged
    for a, b in zip(full, no_intent, strict=True):
        assert b.solves == () and b.does_not_solve == () and b.intent != a.intent
        assert b.links() == a.links() and b.sources == a.sources
    gold = next(p for p in no_intent if "doc_cards_gold_001" in p.source_ids())
    assert "The annual fee is $95" in gold.intent
    # pooled-links: no link on any step; the same (type, article) links pooled at page level
    for a, b in zip(full, pooled, strict=True):
        assert all(not s.links for s in b.steps) and b.pooled_links
        assert {(ln.type, ln.article_id) for ln in b.pooled_links} == {(ln.type, ln.article_id) for ln in a.links()}
        assert set(b.article_ids()) == set(a.article_ids())
    assert {p.variant for p in pooled} == {"pooled-links"}


@pytest.mark.parametrize("variant", ["no-merge", "no-intent", "pooled-links"])
def test_variant_layers_build_and_pass_the_audit(ws, variant):
    rep = build_wiki(ws, variant=variant)
    assert rep.variant == variant
    assert audit_structure(ws).ok
    assert {p.variant for p in load_pages(ws)} == {variant}


def test_switching_variant_needs_rebuild(ws):
    build_wiki(ws)
    with pytest.raises(UserError, match="--rebuild"):
        build_wiki(ws, variant="no-merge")
    rep = build_wiki(ws, variant="no-merge", rebuild=True)
    assert rep.pages == 6 and rep.swapped and {p.kind for p in load_pages(ws)} == {"topic"}


def test_empty_corpus_is_a_clear_error(tmp_path):
    ws = Workspace.init(tmp_path / "empty")
    with pytest.raises(EmptyInputError, match="ingest"):
        build_wiki(ws)
    with pytest.raises(UserError, match="unknown variant"):
        build_wiki(ws, variant="nope")
