"""The extractive harness as a case briefing: on the small harness fixtures, on a long manual of our own
and on the packaged demo help center (no index, no model: a term-overlap retriever double)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.demo_data import CASES, HELP_CENTER
from skillrag.harness import run_case
from skillrag.harness._focus import STOP_WORDS, case_focus
from skillrag.harness.extractive import plan_queries, split_passages
from skillrag.skill import Case, CaseFile, locate, validate_output
from skillrag.skill.testing import FakeRetriever
from skillrag.workspace import Workspace

MANUAL_DIR = Path(__file__).parent / "fixtures" / "manual"
_MATCHED = re.compile(r"matches case terms: ([^;.]*)")


def _matched_terms(output: dict) -> list[str]:
    return [t.strip() for s in output["snippets"] for m in _MATCHED.finditer(s["why"]) for t in m.group(1).split(",")]


def _check_briefing(out: dict, bodies: dict[str, str]) -> None:
    """What every briefing must be: accepted by the contract, every snippet a whole passage of its article,
    grouped by procedure in the article's order, no stop word listed as a matched term, honest framing."""
    assert validate_output({k: v for k, v in out.items() if k != "audit"}, bodies) == []
    g = out["guidance"]
    assert g.startswith("Case briefing (retrieval only, no model).") and "Guidance for:" not in g
    assert "What this briefing does not decide:" in g and "whether the customer is eligible" in g
    # each snippet is one whole passage (a sentence, a list item, a small table), never a cut one
    for s in out["snippets"]:
        body = bodies[s["source_article"]]
        assert s["text"] in {p.text for p in split_passages(s["source_article"], body)}, s["text"]
        assert locate(s["text"], body) is not None
    # grouped by procedure: one article's snippets are consecutive and in the article's order
    arts = [s["source_article"] for s in out["snippets"]]
    groups = list(dict.fromkeys(arts))
    assert arts == sorted(arts, key=groups.index)
    for a in groups:
        texts = [s["text"] for s in out["snippets"] if s["source_article"] == a]
        assert texts == sorted(texts, key=bodies[a].index)
    headers = re.findall(r"^Procedure (\d+): .* \[(.+)\]$", g, re.MULTILINE)
    assert [h[1] for h in headers] == groups and [int(h[0]) for h in headers] == list(range(1, len(groups) + 1))
    numbered = re.findall(r"^  (\d+)\. ", g, re.MULTILINE)
    assert [int(n) for n in numbered] == list(range(1, out["n_snippets"] + 1))
    for term in _matched_terms(out):
        assert term.lower() not in STOP_WORDS, term
    assert out["meta"]["model"] is None and out["meta"]["deterministic"] is True


# -- the small fixtures of tests/harness/conftest.py ------------------------------------------------

def test_briefing_is_accepted_grounded_grouped_and_deterministic(ws, cases, retriever):
    res = run_case(ws, cases.load("case_lost"), cases=cases, retriever=retriever)
    assert res.status == "accepted", res.record.error
    out = res.output
    store = ArticleStore(ws)
    bodies = {a.id: a.body for a in store.list()}
    _check_briefing(out, bodies)
    for s in out["snippets"]:
        assert s["source_title"] == store.get(s["source_article"]).title
    assert any("freeze_card_4410" in s["text"] for s in out["snippets"])  # the tool step is a decisive line
    rec = res.record
    assert 2 <= len(rec.queries) <= 5 and len(rec.fetches) <= rec.budgets.max_fetches
    assert rec.model_calls == 0 and rec.total_tokens == 0 and rec.saves == 1 and rec.retries == 0
    on_disk = json.loads(res.record_path.read_text())
    assert on_disk["status"] == "accepted" and [s["name"] for s in on_disk["steps"]][:2] == ["load_case", "retrieve"]
    again = run_case(ws, cases.load("case_lost"), cases=cases, retriever=retriever, out_path=ws.root / "again.json")
    assert again.output["guidance"] == out["guidance"] and again.output["snippets"] == out["snippets"]
    # the case as the agent saw it lies beside the record (no ground truth), for review and export
    saved_case = json.loads((ws.runs_dir / "case_lost" / "case.json").read_text())
    assert saved_case == cases.load("case_lost").model_dump(mode="json") and "ground_truth" not in saved_case
    assert json.loads((ws.root / "again.case.json").read_text())["case_id"] == "case_lost"


def test_briefing_respects_query_and_fetch_budgets(ws, cases, retriever):
    res = run_case(ws, cases.load("case_lost"), cases=cases, retriever=retriever,
                   budgets={"max_queries": 2, "max_fetches": 1})
    assert res.status == "accepted"
    assert len(res.record.queries) <= 2 and len(res.record.fetches) == 1
    assert {s["source_article"] for s in res.output["snippets"]} == set(res.record.fetches)


def test_briefing_with_nothing_to_quote_fails_cleanly(ws, cases, retriever):
    res = run_case(ws, Case(case_id="zz", contact_reason="qqqq xxxx"), retriever=retriever)
    assert res.status == "failed" and res.output is None
    assert res.record_path.is_file() and not (ws.runs_dir / "zz" / "output.json").exists()
    assert json.loads((ws.runs_dir / "zz" / "case.json").read_text())["contact_reason"] == "qqqq xxxx"


def test_briefing_with_zero_fetch_budget_fails_not_crashes(ws, cases, retriever):
    res = run_case(ws, cases.load("case_wire"), cases=cases, retriever=retriever, budgets={"max_fetches": 0})
    assert res.status == "failed"


@pytest.mark.parametrize("bad", [{"max_queries": 0}, {"max_seconds": -1}])
def test_bad_budgets_are_rejected(ws, cases, retriever, bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        run_case(ws, cases.load("case_wire"), cases=cases, retriever=retriever, budgets=bad)


# -- case focus -----------------------------------------------------------------------------------

def test_queries_come_from_the_want_and_the_names_not_the_role_play():
    case = Case(
        case_id="t",
        contact_reason="You want to close your Gold Rewards Card because of the annual fee.",
        case_notes=[
            "You are playing the role of a customer contacting a customer service representative agent.",
            "You have a Gold Rewards Card and an EcoCard with Rho-Bank. Your annual income is $85,000.",
            "If the agent asks why, say the fee is too high. Never respond as the agent.",
            "Verification info: Name: Ana Ruiz | Phone: 415-555-0101 | Email: ana.ruiz@example.com",
        ],
        case_messages=[{"role": "customer", "content": "Hi, I'd like to close my Gold Rewards Card."},
                       {"role": "agent", "content": "Sure, I can help with that today."}],
    )
    focus = case_focus(case)
    assert focus.want.startswith("You want to close your Gold Rewards Card")
    assert "playing the role" not in focus.detail and "If the agent asks" not in focus.detail
    assert focus.product_names() == ["Gold Rewards Card", "EcoCard", "Rho-Bank"]  # not "Ana Ruiz"
    assert "Your annual income is $85,000." in focus.facts
    assert not any("@" in f for f in focus.facts)  # contact details are not facts to check
    assert {"rho", "gold"} <= focus.name_words and "fee" not in focus.name_words
    roles = [r for r, _ in plan_queries(focus)]
    assert roles == ["want", "detail", "names"]
    assert not (set(focus.terms) & {"you", "your", "do", "rho", "bank"})


# -- a long manual of our own ---------------------------------------------------------------------

@pytest.fixture
def manual_ws(tmp_path: Path) -> Workspace:
    w = Workspace.init(tmp_path / "manual")
    ingest(w, [MANUAL_DIR])
    return w


@pytest.fixture
def return_case() -> Case:
    return Case(
        case_id="acme-1",
        contact_reason="Customer wants to return hiking boots that do not fit",
        case_notes=["Gold member at purchase; order AC-5521 delivered 2026-02-10.",
                    "You are playing the role of an Acme customer; never respond as the agent."],
        case_messages=[{"role": "customer", "content": "Hi, I want to return my Acme hiking boots, they don't fit. "
                                                      "Can I get a refund?"}],
    )


def test_long_manual_briefing_keeps_the_deciding_rules_and_drops_agent_text(manual_ws, return_case):
    res = run_case(manual_ws, return_case, retriever=FakeRetriever(manual_ws))
    assert res.status == "accepted", res.record.error
    out = res.output
    bodies = {a.id: a.body for a in ArticleStore(manual_ws).list()}
    _check_briefing(out, bodies)
    texts = [s["text"] for s in out["snippets"]]
    joined = "\n".join(texts)
    # the rules that decide a return: the tier table and the steps naming the tools
    assert any(t.startswith("| Tier | Return window") for t in texts)
    assert "Create the return with `create_return_label`." in texts
    assert "Look up the order with `get_order_details`" in joined
    # never: text addressed to an AI agent, parameter lines, marketing, another flow's "do not update"
    for bad in ("tool call", "respond to the user", "make up any information", "(string, required)",
                "Share the love", "Do you love", "Do not update order"):
        assert bad not in joined, bad
    # a glossary entry for a tool a quoted step already names is a duplicate
    assert "`create_return_label`: Creates a prepaid return label." not in texts
    # the company's name (written only capitalised in the case) is never a matched term
    assert "acme" not in {t.lower() for t in _matched_terms(out)}
    assert "Facts stated in the case" in out["guidance"] and "delivered 2026-02-10" in out["guidance"]


def test_every_why_names_content_terms_and_the_rule(manual_ws, return_case):
    out = run_case(manual_ws, return_case, retriever=FakeRetriever(manual_ws)).output
    for n, s in enumerate(out["snippets"], 1):
        assert s["why"].startswith(f"Supports step {n} ({s['source_title']}): ")
    table = next(s for s in out["snippets"] if s["text"].startswith("| Tier"))
    assert "states a limit" in table["why"] or "states an amount" in table["why"]
    tool = next(s for s in out["snippets"] if "create_return_label" in s["text"])
    assert "names tool create_return_label" in tool["why"] and "item 3 of the article's 'Returns' list" in tool["why"]
    from skillrag.review.view import stated_steps  # the review page links each snippet to its own line

    assert [stated_steps(s["why"]) for s in out["snippets"]] == [[n] for n in range(1, out["n_snippets"] + 1)]


# -- the demo help center -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory) -> Workspace:
    w = Workspace.init(tmp_path_factory.mktemp("demo") / "ws")
    ingest(w, [HELP_CENTER])
    return w


@pytest.mark.parametrize("case_id", ["hp-001", "hp-006", "hp-010"])
def test_demo_cases_give_a_grouped_whole_sentence_briefing(demo_ws, case_id):
    cases = CaseFile(CASES)
    res = run_case(demo_ws, cases.load(case_id), cases=cases, retriever=FakeRetriever(demo_ws),
                   out_path=demo_ws.root / f"{case_id}.json")
    assert res.status == "accepted", res.record.error
    bodies = {a.id: a.body for a in ArticleStore(demo_ws).list()}
    _check_briefing(res.output, bodies)
    cited = {s["source_article"] for s in res.output["snippets"]}
    required = set(cases.ground_truth(case_id).required_documents)
    assert cited & required, (cited, required)


def test_demo_damage_case_quotes_the_claim_tool_and_the_tier_rule(demo_ws):
    cases = CaseFile(CASES)
    out = run_case(demo_ws, cases.load("hp-001"), cases=cases, retriever=FakeRetriever(demo_ws),
                   out_path=demo_ws.root / "hp-001b.json").output
    joined = "\n".join(s["text"] for s in out["snippets"])
    assert "open_damage_claim" in joined
    assert "Plus" in joined  # the tier the case names decides the window and the compensation
    assert "price paid $420" in out["guidance"]  # a case fact the specialist checks
