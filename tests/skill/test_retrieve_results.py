"""What one `retrieve` call shows (issue 22): compact pages by default, page lists that say when a filter cut
them, facets that tell business and personal siblings apart, and relevance that follows the order; on the
Python API, the command line (and so the exported scripts), MCP and the LLM harness alike.

The fixture corpus has personal and business checking accounts (two families each, ids sharing a category
stem), a general family, and an extractive navigation layer over them (hash embedder, no model)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import anyio
import pytest
from mcp import Client

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.search import SearchFilters, build_index, open_retriever
from skillrag.service.mcp_server import build_mcp_server
from skillrag.skill import CaseFile, CaseRecord, SkillRegistry, SkillTools, write_cases
from skillrag.skill.views import page_brief, retrieve_json, retrieve_text
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig

SIBLINGS = [
    ("doc_checking_accounts_blue_account_001", "Blue Account at a glance",
     "## Key details\n- Monthly maintenance fee: $20.00\n- Waiver: keep a daily balance of $625\n"),
    ("doc_checking_accounts_blue_account_002", "Blue Account Referral Program",
     "## Referral rewards\n- Your bonus: $35 for each qualifying referral\n"),
    ("doc_checking_accounts_blue_account_003", "Blue Account: overdraft fees",
     "## Overdraft\nThe Blue Account overdraft fee is $25 per item.\n"),
    ("doc_checking_accounts_purple_account_001", "Purple Account at a glance",
     "## Key details\n- Monthly maintenance fee: $15.00\n"),
    ("doc_checking_accounts_purple_account_002", "Purple Account Referral Program",
     "## Referral rewards\n- Your bonus: $45 for each qualifying referral\n"),
    ("doc_business_checking_accounts_navy_blue_001", "Navy Blue Account at a glance",
     "## Key details\n- Monthly maintenance fee: $30.00 for business checking\n"),
    ("doc_business_checking_accounts_navy_blue_002", "Navy Blue Account Referral Program",
     "## Referral rewards\n- Your business referral bonus: $100 for each qualifying referral\n"),
    ("doc_business_checking_accounts_beige_001", "Beige Account at a glance",
     "## Key details\n- Monthly maintenance fee: $50.00 for business checking\n"),
    ("doc_business_checking_accounts_beige_002", "Beige Account Referral Program",
     "## Referral rewards\n- Your business referral bonus: $500 for each qualifying referral\n"),
    ("doc_bank_general_001", "Opening a checking account",
     "## Procedure\nVerify the customer with verify_identity_1001, then open the checking account.\n"),
    ("doc_bank_general_002", "Monthly maintenance fee waivers",
     "## Waivers\nA monthly maintenance fee is waived for the first statement cycle.\n"),
]


@pytest.fixture(scope="module")
def bank(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("bank")
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "wiki", "embedder": "hash"}})
    ws = Workspace.init(root / "ws", config=cfg)
    src = root / "src"
    src.mkdir()
    (src / "bank.json").write_text(json.dumps([{"id": i, "title": t, "content": c} for i, t, c in SIBLINGS]),
                                   encoding="utf-8")
    ingest(ws, [src])
    from skillrag.wiki import build_wiki

    build_wiki(ws, builder="extractive")
    build_index(ws, backend="wiki")  # the direct index too (fused order)
    write_cases(ws.root / "cases.jsonl", [CaseRecord(case_id="c1", contact_reason="Monthly fee of my account"),
                                          CaseRecord(case_id="c2", contact_reason="Referral bonus")])
    return ws


def _tools(ws: Workspace, *, backend: str = "wiki", **config) -> SkillTools:
    skill = SkillRegistry(ws).get("cs-guidance")
    skill = dataclasses.replace(skill, config=skill.config.model_copy(update={"backend": backend, **config}))
    t = SkillTools(ws, skill, CaseFile(ws.root / "cases.jsonl"), retriever=open_retriever(ws, backend=backend))
    t.start_session(f"bank-{backend}", new=True)
    return t


# -- facets --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["wiki", "direct"])
def test_hits_carry_the_product_category_and_customer_type_and_filter_on_them(bank, backend):
    t = _tools(bank, backend=backend)
    hits = t.retrieve("monthly maintenance fee", k=20)
    seen = {h.article_id: (h.category, h.customer_type) for h in hits}
    assert seen["doc_business_checking_accounts_navy_blue_001"] == ("business checking accounts", "business")
    assert seen["doc_checking_accounts_blue_account_001"] == ("checking accounts", "personal")
    assert seen["doc_bank_general_002"] == ("", "")  # a general family: no category, no customer type
    shown = retrieve_json(hits)["hits"]
    assert {(h.get("category"), h.get("customer_type")) for h in shown} >= {("checking accounts", "personal"), (None, None)}
    # a general article's unknown facets are left out of the compact hit, null with --detail pages
    general = next(h for h in shown if h["article_id"] == "doc_bank_general_002")
    assert "category" not in general and "customer_type" not in general
    full = next(h for h in retrieve_json(t.retrieve("monthly maintenance fee", k=20, detail="pages"))["hits"]
                if h["article_id"] == "doc_bank_general_002")
    assert full["category"] is None and full["customer_type"] is None

    personal = t.retrieve("monthly maintenance fee", k=20, filters={"customer_types": ["personal"]})
    assert personal and {h.customer_type for h in personal} <= {"personal", ""}  # general articles pass
    assert "doc_bank_general_002" in {h.article_id for h in personal}
    business = t.retrieve("monthly maintenance fee", k=20, filters={"categories": ["Business Checking Accounts"]})
    assert {h.article_id for h in business} == {a for a, _, _ in SIBLINGS if a.startswith("doc_business_")}
    assert retrieve_json(business)["filters"] == {"categories": ["Business Checking Accounts"]}
    for p in t.retrieve("monthly maintenance fee", filters={"customer_types": ["business"]}).pages:
        assert all(not a.id.startswith("doc_checking_") for a in p.articles)


def test_pages_carry_the_facets_their_articles_share(bank):
    pages = {p.page_id: p for p in _tools(bank).retrieve("account referral bonus fee", pages=20).pages}
    assert (pages["navy-blue-account-business-checking"].category,
            pages["navy-blue-account-business-checking"].customer_type) == ("business checking accounts", "business")
    assert pages["referral-program-checking-accounts"].customer_type == "personal"  # an aspect page of siblings
    assert (pages["bank-general"].category, pages["bank-general"].customer_type) == ("", "")
    brief = page_brief(pages["referral-program-checking-accounts"], 8)
    assert (brief["category"], brief["customer_type"]) == ("checking accounts", "personal")
    assert page_brief(pages["bank-general"], 8)["customer_type"] is None


def test_search_filters_accept_facets_and_the_cli_takes_them(bank, capsys):
    f = SearchFilters(categories=["checking accounts"], customer_types=["personal"])
    assert f.accepts("", "", category="Checking  Accounts", customer_type="personal")
    assert not f.accepts("", "", category="business checking accounts", customer_type="personal")
    assert SearchFilters(customer_types=["business"]).accepts("", "", category="", customer_type="")
    assert not SearchFilters(customer_types=["business"]).accepts("", "", customer_type="personal")
    assert main(["search", "referral bonus", "-w", str(bank.root), "--customer-type", "business", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["hits"] and {h["customer_type"] for h in got["hits"]} <= {"business", None}


# -- compact results ---------------------------------------------------------------------------------
def test_pages_are_compact_by_default_and_whole_on_request(bank):
    t = _tools(bank, page_articles=2)
    res = t.retrieve("monthly maintenance fee referral bonus", pages=5)
    data = retrieve_json(res)
    assert data["detail"] is None and data["pages"]
    big = [p for p in res.pages if len(p.articles) > 2]
    assert big  # the fixture has pages citing more than page_articles articles
    for p, shown in zip(res.pages, data["pages"], strict=True):
        assert set(shown) == {"page_id", "kind", "title", "relevance", "category", "customer_type", "articles",
                              "shown", "of", "cut_by"}  # no intent, no summaries
        hits = {h.article_id for h in res}
        assert shown["articles"] == [{"id": a.id} if a.id in hits else {"id": a.id, "title": a.title}
                                     for a in p.articles[:2]]
        assert shown["shown"] == len(shown["articles"]) <= 2 and shown["of"] == p.listed
        if shown["of"] > shown["shown"]:
            assert shown["cut_by"] == "page_articles=2"
        else:
            assert shown["cut_by"] is None
    whole = retrieve_json(t.retrieve("monthly maintenance fee referral bonus", pages=5, detail="pages"))
    assert whole["detail"] == "pages"
    for p, w in zip(res.pages, whole["pages"], strict=True):
        assert w["intent"] == p.intent and [a["id"] for a in w["articles"]] == [a.id for a in p.articles]
        assert w["shown"] == w["of"] == p.listed and w["cut_by"] is None
    with pytest.raises(Exception, match="detail must be one of pages"):
        t.retrieve("fee", detail="everything")


def test_a_page_lists_its_best_matching_articles_first(bank):
    t = _tools(bank, page_articles=1)
    res = t.retrieve("Beige Account referral bonus", pages=10)
    page = next(p for p in res.pages if p.page_id == "beige-account-business-checking")
    assert t.read_page(page.page_id).page.articles[0].id == "doc_business_checking_accounts_beige_001"  # page order
    assert page.articles[0].id == "doc_business_checking_accounts_beige_002"  # the one about the referral bonus
    data = retrieve_json(res)
    brief = next(p for p in data["pages"] if p["page_id"] == page.page_id)
    hit = any(h["article_id"] == "doc_business_checking_accounts_beige_002" for h in data["hits"])
    # the title is left out only where a hit of the same result shows it
    assert brief["articles"] == [{"id": "doc_business_checking_accounts_beige_002"} if hit else
                                 {"id": "doc_business_checking_accounts_beige_002", "title": "Beige Account Referral Program"}]
    assert brief["cut_by"] == "page_articles=1"
    assert page_brief(page, 1)["articles"] == [{"id": "doc_business_checking_accounts_beige_002",
                                               "title": "Beige Account Referral Program"}]


def test_a_filter_that_cuts_a_page_list_says_so(bank):
    t = _tools(bank)
    res = t.retrieve("referral program bonus", pages=10, filters={"id_prefixes": ["doc_checking_accounts_purple_"]})
    cut = [p for p in res.pages if p.listed > len(p.articles)]
    assert cut, "no page was cut by the filter"
    for p in cut:
        assert p.cut_by == "id_prefixes=doc_checking_accounts_purple_"
        d = p.to_dict()  # --detail pages and `skillrag search --json`
        assert d["shown"] == len(p.articles) < d["of"] == p.listed
        assert d["cut_by"] == "filter id_prefixes=doc_checking_accounts_purple_"
        brief = page_brief(p, 8)
        assert brief["of"] == p.listed and brief["cut_by"] == (
            f"filter id_prefixes=doc_checking_accounts_purple_ ({len(p.articles)} of {p.listed} pass)")
    uncut = t.retrieve("referral program bonus", pages=10)
    assert all(p.cut_by == "" and p.listed == len(p.articles) for p in uncut.pages)


def test_every_surface_shows_the_cut_and_the_facets(bank, capsys, monkeypatch):
    monkeypatch.delenv("SKILLRAG_CASE", raising=False)
    ws = bank.root
    assert main(["tool", "load-case", "c2", "-w", str(ws), "--cases", str(ws / "cases.jsonl")]) == 0
    capsys.readouterr()
    assert main(["tool", "retrieve", "referral program bonus", "--case", "c2", "-w", str(ws),
                 "--id-prefix", "doc_checking_accounts_purple_"]) == 0
    out = capsys.readouterr().out
    cli = json.loads(out)
    lines = out.splitlines()
    assert all(any(line.strip().startswith(json.dumps(h, ensure_ascii=False, separators=(",", ":"))) for line in lines)
               for h in cli["hits"])
    assert any(p["cut_by"] and p["cut_by"].startswith("filter id_prefixes=") for p in cli["pages"])
    assert all("category" in h and "customer_type" in h for h in cli["hits"])
    assert main(["tool", "retrieve", "referral program bonus", "--case", "c2", "-w", str(ws),
                 "--customer-type", "business", "--detail", "pages"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["detail"] == "pages" and all("intent" in p for p in whole["pages"])
    assert {h["customer_type"] for h in whole["hits"]} <= {"business", None}

    server, _ = build_mcp_server(bank, cases=CaseFile(ws / "cases.jsonl"))

    async def session() -> dict:
        async with Client(server) as client:
            await client.call_tool("load_case", {"case_id": "c1"})
            got = await client.call_tool("retrieve", {"query": "referral program bonus",
                                                      "id_prefix": ["doc_checking_accounts_purple_"]})
            return got.structured_content

    mcp = anyio.run(session)
    assert any(p["cut_by"] and p["cut_by"].startswith("filter id_prefixes=") for p in mcp["pages"])
    assert all(set(p) >= {"shown", "of"} and "intent" not in p for p in mcp["pages"])


def test_the_command_line_prints_one_hit_per_line_as_valid_json(bank):
    data = retrieve_json(_tools(bank).retrieve("monthly maintenance fee"))
    text = retrieve_text(data)
    assert json.loads(text) == data
    assert data["hits"] and data["pages"]
    # "{", one line per field, one per hit and per page, and the closing "]" of both lists and "}"
    assert len(text.splitlines()) == 2 + len(data) + len(data["hits"]) + 1 + len(data["pages"]) + 1
    assert len(text.encode()) < len(json.dumps(data, indent=2, ensure_ascii=False).encode())


# -- relevance ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["wiki", "direct"])
@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_relevance_follows_the_ordering_scores(bank, backend, mode):
    r = open_retriever(bank, backend=backend, mode=mode)
    n = 0
    for q in ("monthly maintenance fee", "referral bonus", "Blue Account", "open a checking account", "fee"):
        hits = r.search(q, k=11)
        assert hits[0].relevance == 1.0
        for a, b in itertools.pairwise(hits):
            if a.score == b.score:
                assert a.relevance == b.relevance
            else:
                assert a.score > b.score and a.relevance > b.relevance, (q, a, b)
                n += 1
        pages = r.search_pages(q, k=6)
        for a, b in itertools.pairwise(pages):
            assert a.relevance >= b.relevance
    assert n > 10

