"""What the four tools give an agent (Python API and the shared JSON views): budgets in every result,
titled articles with sections and offsets, unambiguous section reads, filters, pages, the reference
date, save checks and evidence-gap warnings, and a bounded tool-call log."""

from __future__ import annotations

import json
from datetime import date

import pytest

from skillrag.corpus import ArticleStore
from skillrag.errors import ArticleNotFound, BudgetExceeded, ContractViolation, UserError
from skillrag.search import SearchFilters, open_retriever
from skillrag.skill import CaseFile, CaseRecord, SkillRegistry, SkillTools, write_cases
from skillrag.skill.budget import refusal
from skillrag.skill.gaps import evidence_gaps
from skillrag.skill.testing import FakeRetriever, make_output
from skillrag.skill.views import (
    BODY_RULE,
    SUMMARY_RULE,
    article_json,
    article_text,
    case_json,
    retrieve_json,
    save_json,
)


@pytest.fixture
def tools(wiki_ws, cases_path):
    return SkillTools(wiki_ws, SkillRegistry(wiki_ws).get("cs-guidance"), CaseFile(cases_path),
                      log_path=wiki_ws.runs_dir / "tool_calls.jsonl")


def test_every_result_carries_the_budget_and_refusals_are_one_line(tools):
    case = tools.load_case("case_1")
    assert case_json(case, tools.budget())["budget"] == {"counted": "after this call", "queries_left": 5, "queries_used": 0, "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}
    for i in range(5):
        res = tools.retrieve(f"gold card fee {i}")
        assert res.budget.queries_left == 4 - i
    with pytest.raises(BudgetExceeded) as ei:
        tools.retrieve("one more")
    assert str(ei.value) == refusal("query", tools.budget())
    with pytest.raises(BudgetExceeded):
        tools.read_page("cards-gold")  # a page read is a query too
    view = tools.get_article("doc_cards_gold_001", summary=True)  # a summary is a fetch
    assert view.budget.fetches_left == 11 and article_json(view)["budget"]["fetches_left"] == 11
    # a summary's text form never says "quote word for word from below" (a new user saw both lines)
    text = article_text(view)
    assert SUMMARY_RULE in text and BODY_RULE not in text
    assert BODY_RULE in article_text(tools.get_article("doc_cards_gold_001"))
    with pytest.raises(ArticleNotFound):
        tools.get_article("doc_nope")  # failed calls cost nothing
    assert tools.budget().fetches_left == 11
    assert [c.ok for c in tools.calls].count(False) == 3


def test_article_header_and_json_give_title_sections_and_offsets(tools, wiki_ws):
    tools.load_case("case_1")
    art = ArticleStore(wiki_ws).get("doc_cards_(general)_010")
    view = tools.get_article("doc_cards_(general)_010")
    text = article_text(view)
    head, body = text.split(BODY_RULE + "\n")
    assert head.splitlines()[:3] == ["id: doc_cards_(general)_010", "title: Internal: card disputes",
                                     "part: whole article"]
    assert "  1. Disputes" in head and "    2. Provisional credit" in head and "budget: case case_1, after this call:" in head
    assert body == art.body
    data = article_json(view)
    assert set(data) == {"id", "title", "parent", "heading_path", "part", "offset", "content_hash", "sections",
                         "body", "charged", "budget"}
    assert data["parent"] is None and data["offset"] == 0
    sec = data["sections"][1]
    assert sec["path"] == "Disputes > Provisional credit" and sec["heading"] == "Provisional credit"
    quote = data["body"][sec["start"]: sec["end"]]
    assert quote.startswith("## Provisional credit") and "file_dispute_7731" in quote
    one = article_json(tools.get_article("doc_cards_(general)_010", section="Disputes > Escalation"))
    assert one["part"] == "section:3" and art.body[one["offset"]:].startswith(one["body"])


def test_repeated_headings_are_read_by_number_or_refused_with_the_choices(tools):
    tools.load_case("case_1")
    with pytest.raises(UserError) as ei:
        tools.get_article("doc_cards_gold_001", section="fees")
    assert "has 2 sections named 'fees': 1 (Fees), 2 (Fees)" in str(ei.value)
    first, second = (tools.get_article("doc_cards_gold_001", section=n) for n in ("1", "2"))
    assert "annual fee of $95" in first.text and "$40" in second.text and second.part == "section:2"
    with pytest.raises(ArticleNotFound, match=r"sections: 1 Fees; 2 Fees"):
        tools.get_article("doc_cards_gold_001", section="7")
    assert tools.budget().fetches_left == 11  # one article (two of its sections: one fetch); the failed reads cost nothing


def test_as_of_from_the_case_else_the_session_day(tools, tmp_path, wiki_ws):
    assert tools.load_case("case_1").as_of == date.today()
    p = tmp_path / "dated.jsonl"
    write_cases(p, [CaseRecord(case_id="c_dated", contact_reason="x", as_of=date(2025, 9, 1))])
    t = SkillTools(wiki_ws, tools.skill, CaseFile(p))
    case = t.load_case("c_dated")
    assert case.as_of == date(2025, 9, 1) and case_json(case, t.budget())["as_of"] == "2025-09-01"
    assert t.budget().as_of == "2025-09-01"


def test_retrieve_filters_and_pages_over_the_wiki(tools):
    tools.load_case("case_1")
    res = tools.retrieve("card fee replacement", filters={"id_prefixes": ["doc_cards_gold_"]})
    assert {h.article_id for h in res} == {"doc_cards_gold_001", "doc_cards_gold_002"}
    data = retrieve_json(res)
    assert data["filters"] == {"id_prefixes": ["doc_cards_gold_"]} and data["case_id"] == "case_1"
    assert data["pages"][0]["page_id"] == "cards-gold"
    assert sorted(a["id"] for a in data["pages"][0]["articles"]) == ["doc_cards_gold_001", "doc_cards_gold_002"]
    # compact hits: no ranks or page ids; ``tools`` only on a hit whose article names one
    by_id = {h["article_id"]: h for h in data["hits"]}
    # (the fixture's family has no category or customer type: unknown facets are left out)
    assert set(by_id["doc_cards_gold_001"]) == {"article_id", "title", "relevance", "section", "preview"}
    assert by_id["doc_cards_gold_002"]["tools"] == ["order_replacement_card_2231"]
    # a page's article already shown as a hit carries no title; the cap and filters say so in short
    assert all(set(a) == {"id"} for a in data["pages"][0]["articles"])
    full = retrieve_json(tools.retrieve("card fee replacement", filters={"id_prefixes": ["doc_cards_gold_"]},
                                        detail="pages"))
    hit = next(h for h in full["hits"] if h["article_id"] == "doc_cards_gold_002")
    assert set(hit) == {"article_id", "title", "relevance", "bm25_rank", "dense_rank", "section", "preview",
                        "page_ids", "category", "customer_type", "tools"}
    internal = tools.retrieve("card disputes credit", filters={"title_prefixes": ["internal:"]})
    assert [h.article_id for h in internal] == ["doc_cards_(general)_010"]
    page = tools.read_page("cards-gold")
    assert page.page.title and [a.id for a in page.page.articles] == ["doc_cards_gold_001", "doc_cards_gold_002"]
    assert page.budget.queries_left == 1
    with pytest.raises(UserError, match="no navigation page 'no-such-page'"):
        tools.read_page("no-such-page")
    assert tools.budget().queries_left == 1


def test_direct_backend_has_no_pages(wiki_ws, cases_path):
    skill = SkillRegistry(wiki_ws).get("cs-guidance")
    t = SkillTools(wiki_ws, skill, CaseFile(cases_path), retriever=open_retriever(wiki_ws, backend="direct"))
    t.load_case("case_1")
    res = t.retrieve("gold card annual fee")
    assert res.pages == [] and all(h.page_ids == () for h in res)
    assert res[0].preview.startswith("The Gold Rewards Card has an annual fee of $95")


def test_allowed_sources_intersect_filters(ws, skill, cases_path):
    fake = FakeRetriever(ws)
    cfg = skill.config.model_copy(update={"allowed_sources": ["kb"]})
    t = SkillTools(ws, type(skill)(**{**skill.__dict__, "config": cfg}), CaseFile(cases_path), retriever=fake)
    t.load_case("case_1")
    t.retrieve("card", filters={"title_prefixes": ["Lost"]})
    # every stored article is in the skill's scope: the agent's filters go through as they are
    assert fake.queries[-1][2] == SearchFilters(title_prefixes=["Lost"])
    cfg = skill.config.model_copy(update={"allowed_sources": ["elsewhere"]})
    t = SkillTools(ws, type(skill)(**{**skill.__dict__, "config": cfg}), CaseFile(cases_path), retriever=fake)
    t.load_case("case_2")
    assert t.retrieve("card") == [] and t.budget().queries_left == 4  # no article in scope: nothing found
    with pytest.raises(UserError, match="source tag\\(s\\) kb are outside this skill's sources \\(none\\)"):
        t.retrieve("card", filters={"source_tags": ["kb"]})


GOOD = "Give provisional credit within 10 business days with `file_dispute_7731`."


def test_check_saves_nothing_and_spends_nothing(tools, wiki_ws):
    tools.load_case("case_1")
    tools.get_article("doc_cards_(general)_010")
    out = make_output("case_1", [("doc_cards_(general)_010", GOOD)],
                      titles={"doc_cards_(general)_010": "Internal: card disputes"},
                      guidance="1. Give provisional credit within 10 business days using `file_dispute_7731`.")
    checked = tools.save_output(out, check=True)
    assert checked.checked_only and checked.path is None and checked.warnings == []
    assert checked.budget.saves_left == 4 and not (wiki_ws.runs_dir / "case_1").exists()
    bad = make_output("case_1", [("doc_cards_(general)_010", "Give credit within 10 days.")])
    with pytest.raises(ContractViolation):
        tools.save_output(bad, check=True)
    assert tools.budget().saves_left == 4
    saved = tools.save_output(out)
    assert saved.path.is_file() and saved.budget.saves_left == 3
    ev = save_json(saved)["evidence"][0]
    body = ArticleStore(wiki_ws).get("doc_cards_(general)_010").body
    assert body[ev["start"]: ev["end"]] == GOOD
    with pytest.raises(ContractViolation):
        tools.save_output(bad)
    assert tools.budget().saves_left == 2  # a rejected save is an attempt


def test_each_warning_kind(tools, wiki_ws):
    tools.load_case("case_1")
    tools.get_article("doc_cards_gold_001")
    out = make_output(
        "case_1",
        [("doc_cards_gold_001", "The Gold Rewards Card has an annual fee of $95, waived in the first year."),
         ("art_card_lost", "When a customer reports a lost card, freeze it first."),
         ("art_other", "Wire transfers above $5,000 need a second approver from the payments team.")],
        guidance=("1. Tell the customer the Gold Rewards Card annual fee is $95 and is waived in year one.\n"
                  "2. Order the replacement with `order_replacement_card_2231`; it costs $25.\n"
                  "3. Wire transfers above $5,000 need a second approver."),
    )
    saved = tools.save_output(out)
    kinds = {(g.kind, g.subject) for g in saved.warnings}
    assert ("unquoted_identifier", "order_replacement_card_2231") in kinds
    assert ("unquoted_identifier", "$25") in kinds
    assert ("unused_snippet", "snippets[1]") in kinds  # only "card" in common with a step: not used
    assert ("unused_snippet", "snippets[0]") not in kinds and ("unused_snippet", "snippets[2]") not in kinds
    assert ("unfetched_citation", "snippets[1]") in kinds and ("unfetched_citation", "snippets[2]") in kinds
    assert ("unfetched_citation", "snippets[0]") not in kinds  # doc_cards_gold_001 was read
    assert ("unquoted_identifier", "$95") not in kinds and ("unquoted_identifier", "$5,000") not in kinds
    assert all(g.message for g in saved.warnings)
    on_disk = json.loads(saved.path.read_text())
    assert on_disk["audit"]["warnings"] == [g.to_dict() for g in saved.warnings]
    assert [c["tool"] for c in on_disk["audit"]["tool_calls"]] == ["load_case", "get_article"]


def test_product_names_are_warned_only_when_the_articles_use_them():
    body = "The Gold Rewards Card has no foreign fee. Navy Blue Account holders get a referral bonus."
    out = {"guidance": "1. Open Navy Blue Account for the customer.\n2. Check With The Branch Manager.",
           "snippets": [{"source_article": "a", "text": "The Gold Rewards Card has no foreign fee."}]}
    gaps = evidence_gaps(out, {"a": body}, fetched=["a"])
    names = [g.subject for g in gaps if g.kind == "unquoted_identifier"]
    assert names == ["Navy Blue Account"]  # "Check With The Branch Manager" is in no article


def test_the_tool_log_keeps_bounded_arguments(tools, wiki_ws):
    tools.load_case("case_1")
    huge = "lost card " * 200_000  # a 2 MB query
    tools.retrieve(huge)
    out = make_output("case_1", [("art_fees", "Premium accounts pay no fee.")], guidance="x " * 500_000)
    with pytest.raises(ContractViolation):
        tools.save_output(out | {"snippets": out["snippets"] * 100, "n_snippets": 100})
    lines = (wiki_ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()
    assert max(len(x) for x in lines) < 2000
    logged = json.loads(lines[1])
    assert logged["case_id"] == "case_1" and logged["args"]["query"].endswith("… (2000000 chars)")
    assert json.loads(lines[2])["args"] == {"case_id": "case_1", "n_snippets": 100, "guidance_chars": 1_000_000}


# regression (issue 21, class 6): the log bounded the arguments only; a 1 MB error message and a 100 KB
# case id were written whole
def test_the_tool_log_bounds_every_field(tools, wiki_ws):
    tools.load_case("case_1")
    with pytest.raises(ArticleNotFound):
        tools.get_article("art_fees", section="x" * 1_000_000)  # the error names the section asked for
    with pytest.raises(UserError):
        tools.retrieve("card", case_id="c" * 100_000)
    with pytest.raises(Exception):  # noqa: B017 (an unknown case: which error does not matter here)
        tools.load_case("c" * 100_000)
    lines = (wiki_ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()
    assert len(lines) == 4 and max(len(x) for x in lines) < 2500
    section, retrieve, load = (json.loads(x) for x in lines[1:])
    assert section["error"].endswith("chars)") and section["error"].startswith("article 'art_fees' has no section")
    assert retrieve["case_id"].endswith("… (100000 chars)") and load["case_id"].endswith("… (100000 chars)")
    assert all(c.error is None or len(c.error) < 1100 for c in tools.calls)


def test_a_name_in_the_quoted_articles_title_is_covered():
    out = {"guidance": "1. Recommend the Gold Rewards Card.",
           "snippets": [{"source_article": "a", "source_title": "Gold Rewards Card: fees", "text": "No foreign fee."}]}
    assert [g for g in evidence_gaps(out, {"a": "The Gold Rewards Card. No foreign fee."}, fetched=["a"])
            if g.kind == "unquoted_identifier"] == []


def test_a_passage_that_occurs_twice_says_so_in_the_receipt_and_the_audit(ws, cases_path, tmp_path):
    from skillrag.corpus import ingest

    src = tmp_path / "twice"
    src.mkdir()
    rule = "Call the card team before closing the account."
    (src / "twice.json").write_text(json.dumps([{"id": "art_twice", "title": "Closing accounts", "content": (
        f"## Personal\n\n{rule}\n\n## Business\n\n{rule} Business owners sign the form.")}]), encoding="utf-8")
    ingest(ws, [src])
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"), CaseFile(cases_path))
    tools.load_case("case_1")
    tools.get_article("art_twice")
    out = make_output("case_1", [("art_twice", rule), ("art_twice", "Business owners sign the form.")],
                      titles={"art_twice": "Closing accounts"}, guidance="1. Call the card team, then close.")
    saved = tools.save_output(out)
    first, second = save_json(saved)["evidence"]
    body = ArticleStore(ws).get("art_twice").body
    assert (first["occurrences"], first["matched"]) == (2, 1) and first["start"] == body.index(rule)
    assert (second["occurrences"], second["matched"]) == (1, 1)
    assert json.loads(saved.path.read_text())["audit"]["snippets"][0]["occurrences"] == 2


def test_a_tool_search_lists_each_tool_once_with_the_article_that_gives_it(tools, wiki_ws):
    """``detail="tools"``: the tool names the best-matching articles give (the one tool-name rule), each
    once with its article and title; one query, like any search."""
    from skillrag.corpus import ArticleStore
    from skillrag.text import tool_names

    tools.load_case("case_1")
    res = tools.retrieve("replace a frozen card; dispute provisional credit", detail="tools")
    data = retrieve_json(res)
    assert set(data) == {"case_id", "query", "filters", "detail", "tools", "articles_read", "budget"}
    assert data["articles_read"] == len(res) >= 3  # every article of the little corpus, up to 40
    assert {(x["tool"], x["article_id"]) for x in data["tools"]} == {
        ("order_replacement_card_2231", "doc_cards_gold_002"), ("file_dispute_7731", "doc_cards_(general)_010")}
    store = ArticleStore(wiki_ws)
    for item in data["tools"]:
        art = store.get(item["article_id"])
        assert item["title"] == art.title and item["tool"] in tool_names(art.body)
    assert data["budget"]["queries_used"] == 1
    # the same tool in two articles is listed once, with the better-ranked article, the other in also_in
    assert len({x["tool"] for x in data["tools"]}) == len(data["tools"])
    from skillrag.skill.views import tool_list

    res.tools = {**res.tools, res[-1].article_id: ("file_dispute_7731",)}  # a later hit names it too
    listed = {x["tool"]: x for x in tool_list(res)}
    first = next(h.article_id for h in res if "file_dispute_7731" in res.tools.get(h.article_id, ()))
    assert listed["file_dispute_7731"]["article_id"] == first
    if res[-1].article_id != first:
        assert listed["file_dispute_7731"]["also_in"] == [res[-1].article_id]
    assert "also_in" not in listed["order_replacement_card_2231"]
