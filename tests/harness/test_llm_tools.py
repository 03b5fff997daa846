"""The LLM harness's tools give the model what every other surface gives: the budget in every result,
the same refusal line, filters, navigation pages and page reads, titled articles with sections, and
save_output checks and warnings. Scripted models, a real index over a real extractive layer."""

from __future__ import annotations

import dataclasses

import pytest

from skillrag.harness import run_case
from skillrag.harness.llm import LLMHarness
from skillrag.models.testing import ScriptedModel, call, last_tool_return, retry_prompts
from skillrag.search import build_index, open_retriever
from skillrag.search.testing import HashEmbedder
from skillrag.skill import BudgetLedger
from skillrag.skill.budget import refusal

GOOD = "Freeze the card with `freeze_card_4410` and confirm the freeze to the customer."


@pytest.fixture
def wiki_retriever(ws):
    from skillrag.wiki import build_wiki

    emb = HashEmbedder()
    build_wiki(ws, builder="extractive")
    build_index(ws, backend="wiki", embedder=emb)
    return open_retriever(ws, backend="wiki", embedder=emb)


def _save(*snips, guidance, check=False):
    args = {"output": {"guidance": guidance, "articles_consulted": sorted({a for a, _ in snips}),
                       "snippets": [{"source_article": a, "text": t, "why": "backs a step"} for a, t in snips]}}
    if check:
        args["check"] = True
    return call("save_output", **args)


def test_every_tool_result_has_the_budget_pages_and_the_article_header(ws, cases, wiki_retriever):
    seen: dict = {}

    def after(name, tool):
        def step(messages, info):
            seen[name] = last_tool_return(messages, tool)
            return nxt[name]
        return step

    nxt = {
        "load": call("retrieve", query="lost card freeze", id_prefix=["kb_card"], title_contains=["DEBIT card"]),
        "search": call("retrieve", page="kb-card-lost"),
        "page": call("get_article", article_id="kb_card_lost", section="Procedure"),
        "article": _save(("kb_card_lost", GOOD), check=True,
                         guidance="1. Freeze the card with `freeze_card_4410`.\n2. Order with `order_replacement_card_2231`."),
    }
    model = ScriptedModel([
        call("load_case", case_id="case_lost"),
        after("load", "load_case"),
        after("search", "retrieve"),
        after("page", "retrieve"),
        after("article", "get_article"),
        lambda messages, info: (seen.setdefault("check", retry_prompts(messages, "save_output")[-1].content),
                                _save(("kb_card_lost", GOOD), guidance="1. Freeze the card with `freeze_card_4410`."))[1],
    ])
    res = run_case(ws, cases.load("case_lost"), harness=LLMHarness(model), cases=cases, retriever=wiki_retriever)
    assert res.status == "accepted", res.record.error
    assert seen["load"]["budget"] == {"counted": "after this call", "queries_left": 5, "queries_used": 0,
                                      "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}
    assert seen["load"]["as_of"]
    search = seen["search"]
    assert search["filters"] == {"id_prefixes": ["kb_card"], "title_contains": ["DEBIT card"]}
    assert search["budget"]["queries_left"] == 4
    assert [h["article_id"] for h in search["hits"]] == ["kb_card_lost"]  # "Lost or stolen debit cards" only
    assert search["hits"][0]["relevance"] == 1.0 and search["hits"][0]["section"]
    assert search["pages"] and all(set(p) >= {"page_id", "kind", "title", "articles", "shown", "of", "cut_by"}
                                   for p in search["pages"])
    assert seen["page"]["page"]["page_id"] == "kb-card-lost" and seen["page"]["budget"]["queries_left"] == 3
    art = seen["article"]
    assert art["title"] == "Lost or stolen debit cards" and art["part"] == "section:2"
    assert art["body"].startswith("## Procedure") and art["budget"]["fetches_left"] == 11
    assert "would be accepted" in seen["check"] and "order_replacement_card_2231" in seen["check"]
    assert res.record.saves == 1 and res.record.queries == ["lost card freeze", "page:kb-card-lost"]
    assert res.output["audit"]["warnings"] == []
    # the run's account is in the workspace store, private to this run
    calls = BudgetLedger(ws).calls(res.output["audit"]["session"]["id"])
    assert [c["tool"] for c in calls] == ["load_case", "retrieve", "retrieve", "get_article", "save_output",
                                          "save_output"]


def test_refusal_is_the_line_every_surface_gives(ws, cases, retriever):
    model = ScriptedModel([call("retrieve", query="lost card"), call("retrieve", query="again"),
                           _save(("kb_card_lost", GOOD), guidance="1. Freeze the card with `freeze_card_4410`.")])
    res = run_case(ws, cases.load("case_lost"), harness=LLMHarness(model), cases=cases, retriever=retriever,
                   budgets={"max_queries": 1})
    assert res.status == "accepted"
    refused = last_tool_return(model.requests[2], "retrieve")
    state = BudgetLedger(ws).get(res.output["audit"]["session"]["id"])
    assert refused == {"error": refusal("query", state), "budget": {"counted": "after this call", "queries_left": 0, "queries_used": 1, "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}}


def test_two_runs_of_one_case_have_their_own_accounts(ws, cases, retriever):
    def one():
        model = ScriptedModel([call("retrieve", query="lost card"),
                               _save(("kb_card_lost", GOOD), guidance="1. Freeze it with `freeze_card_4410`.")])
        return run_case(ws, cases.load("case_lost"), harness=LLMHarness(model), cases=cases, retriever=retriever,
                        budgets={"max_queries": 1})

    first, second = one(), one()
    assert first.status == second.status == "accepted"
    assert first.output["audit"]["session"]["id"] != second.output["audit"]["session"]["id"]


def test_accepted_save_reports_warnings(ws, cases, retriever):
    model = ScriptedModel([
        call("get_article", article_id="kb_card_lost"),
        _save(("kb_card_lost", GOOD), ("kb_wire", ("Wire transfers above $5,000 need a second approver from the "
                                                  "payments team.")),
              guidance="1. Freeze the card with `freeze_card_4410`; the fee is $10.\n2. Check wire limits of $5,000."),
    ])
    res = run_case(ws, cases.load("case_lost"), harness=LLMHarness(model), cases=cases, retriever=retriever)
    kinds = {(w["kind"], w["subject"]) for w in res.output["audit"]["warnings"]}
    assert ("unquoted_identifier", "$10") in kinds and ("unfetched_citation", "snippets[1]") in kinds


def test_a_derived_figure_reaches_the_saved_output_and_settles_its_warning(ws, cases, retriever):
    """The model's save_output takes the contract's optional `derived` list (its `from` is a Python keyword)."""
    text = "Wire transfers above $5,000 need a second approver from the payments team."
    guidance = "1. Two wires of $5,000 make $10,000: both need the second approver."

    def run(derived):
        save = _save(("kb_wire", text), guidance=guidance)
        if derived is not None:
            save.args["output"]["derived"] = derived
        model = ScriptedModel([call("get_article", article_id="kb_wire"), save])
        return run_case(ws, cases.load("case_lost"), harness=LLMHarness(model), cases=cases, retriever=retriever)

    plain = run(None)
    assert [w["subject"] for w in plain.output["audit"]["warnings"]] == ["$10,000"]
    derived = [{"value": "$10,000", "from": ["$5,000"], "how": "two wires of $5,000"}]
    res = run(derived)
    assert res.status == "accepted" and res.output["derived"] == derived
    assert res.output["audit"]["warnings"] == []


def test_the_run_record_names_the_search_backend_and_mode(ws, cases, wiki_retriever, retriever):
    """record.json says which backend `retrieve` searched, so arms run on different backends can be told
    apart after the fact; a test double has none; without a retriever given, the skill's or workspace's."""
    from skillrag.skill import SkillRegistry

    res = run_case(ws, cases.load("case_lost"), cases=cases, retriever=wiki_retriever)
    assert (res.record.search_backend, res.record.search_mode) == ("wiki", "hybrid")
    assert run_case(ws, cases.load("case_lost"), cases=cases, retriever=retriever).record.search_backend is None
    skill = SkillRegistry(ws).get("cs-guidance")
    direct = dataclasses.replace(skill, config=skill.config.model_copy(update={"backend": "direct", "mode": "bm25"}))
    build_index(ws, backend="direct")  # the workspace's own embedder, which `retrieve` opens
    rec = run_case(ws, cases.load("case_lost"), cases=cases, skill=direct).record
    assert (rec.search_backend, rec.search_mode) == ("direct", "bm25")
