from __future__ import annotations

import json

import pytest

from skillrag.corpus import ArticleStore
from skillrag.harness import run_case
from skillrag.harness.extractive import case_queries, split_passages
from skillrag.search.tokenize import Analyzer
from skillrag.skill import Case, locate, validate_output


def test_passages_are_exact_slices_with_kinds():
    body = (
        "## Procedure\n\n1. Verify the customer\u2019s identity first.\n"
        "2. Freeze the card with `freeze_card_4410` now.\n- Premium accounts never pay a fee.\n"
        "| a | b |\n|---|---|\nshort\n" + "A long line of policy text here. " * 20
    )
    ps = split_passages("a1", body)
    assert ps and all(body[p.start : p.end] == p.text for p in ps)
    first, second, third = ps[0], ps[1], ps[2]
    assert first.text == "Verify the customer\u2019s identity first." and first.is_step
    assert first.heading == "Procedure"
    assert second.tools == ("freeze_card_4410",) and second.is_step
    assert third.is_rule and not third.is_step
    assert "short" not in [p.text for p in ps]  # under min_chars
    long_parts = [p for p in ps if p.text.startswith("A long line")]
    assert len(long_parts) > 1 and all(len(p.text) < 320 for p in long_parts)


def test_queries_cover_reason_path_entities_and_notes():
    case = Case(
        case_id="c",
        contact_reason="Customer lost their debit card",
        contact_reason_path=["cards", "lost"],
        case_notes=["The customer has a Platinum Rewards Card and asked about replacement fees abroad."],
        case_messages=[{"role": "customer", "content": "Please freeze it with freeze_card_4410 now."}],
    )
    qs = case_queries(case, Analyzer())
    assert 3 <= len(qs) <= 5
    assert qs[0].startswith("Customer lost their debit card cards lost The customer has")  # the whole case
    assert qs[1] == "Customer lost their debit card"
    assert qs[2] == "cards lost"
    assert any("Platinum Rewards Card" in q and "freeze_card_4410" in q for q in qs)
    assert any("replacement fees" in q for q in qs)
    assert len(case_queries(case, Analyzer(), max_queries=2)) == 2
    shouting = Case(case_id="s", contact_reason="Lost card", case_notes=["DO NOT SAY THIS Gold Card now"])
    assert "Gold Card" in case_queries(shouting, Analyzer())  # the entity query, shouted words dropped


def test_extractive_run_is_accepted_grounded_and_deterministic(ws, cases, retriever):
    case = cases.load("case_lost")
    res = run_case(ws, case, cases=cases, retriever=retriever)
    assert res.status == "accepted", res.record.error
    out = res.output
    store = ArticleStore(ws)
    bodies = {a.id: a.body for a in store.list()}
    assert validate_output({k: v for k, v in out.items() if k != "audit"}, bodies) == []
    for s in out["snippets"]:
        assert locate(s["text"], bodies[s["source_article"]]) is not None
        assert s["source_title"] == store.get(s["source_article"]).title
    # the freeze step (a numbered step naming the tool) is chosen, and the guidance numbers every snippet
    assert any("freeze_card_4410" in s["text"] for s in out["snippets"])
    lines = [ln for ln in out["guidance"].splitlines() if ln[:1].isdigit()]
    assert len(lines) == out["n_snippets"] == len(out["snippets"])
    # steps of one article keep their order in the article
    lost = [s["text"] for s in out["snippets"] if s["source_article"] == "kb_card_lost"]
    body = bodies["kb_card_lost"]
    assert lost == sorted(lost, key=body.index)
    # record: 3-5 queries, fetches within budget, no model, written beside the output
    rec = res.record
    assert 3 <= len(rec.queries) <= 5 and len(rec.fetches) <= rec.budgets.max_fetches
    assert rec.model_calls == 0 and rec.total_tokens == 0 and rec.saves == 1 and rec.retries == 0
    assert res.output_path == ws.runs_dir / "case_lost" / "output.json"
    on_disk = json.loads(res.record_path.read_text())
    assert on_disk["status"] == "accepted" and res.record_path.parent == res.output_path.parent
    assert [s["name"] for s in on_disk["steps"]][:2] == ["load_case", "retrieve"]
    assert all(s["ms"] >= 0 for s in on_disk["steps"])
    # deterministic: a second run gives the same guidance and snippets
    again = run_case(ws, case, cases=cases, retriever=retriever, out_path=ws.root / "again.json")
    assert again.output["guidance"] == out["guidance"] and again.output["snippets"] == out["snippets"]
    assert (ws.root / "again.record.json").is_file()
    # the case as the agent saw it lies beside the record (no ground truth), for review and export
    saved_case = json.loads((ws.runs_dir / "case_lost" / "case.json").read_text())
    assert saved_case == case.model_dump(mode="json") and "ground_truth" not in saved_case
    assert json.loads((ws.root / "again.case.json").read_text())["case_id"] == "case_lost"


def test_extractive_respects_query_and_fetch_budgets(ws, cases, retriever):
    res = run_case(
        ws,
        cases.load("case_lost"),
        cases=cases,
        retriever=retriever,
        budgets={"max_queries": 2, "max_fetches": 1},
    )
    assert res.status == "accepted"
    assert len(res.record.queries) == 2 and len(res.record.fetches) == 1
    assert {s["source_article"] for s in res.output["snippets"]} == set(res.record.fetches)


def test_extractive_with_nothing_to_quote_fails_cleanly(ws, cases, retriever):
    res = run_case(ws, Case(case_id="zz", contact_reason="qqqq xxxx"), retriever=retriever)
    assert res.status == "failed" and res.output is None
    assert "nothing" in res.record.error or "no quotable" in res.record.error
    assert res.record_path.is_file() and not (ws.runs_dir / "zz" / "output.json").exists()
    assert json.loads((ws.runs_dir / "zz" / "case.json").read_text())["contact_reason"] == "qqqq xxxx"


def test_extractive_with_zero_fetch_budget_fails_not_crashes(ws, cases, retriever):
    res = run_case(ws, cases.load("case_wire"), cases=cases, retriever=retriever, budgets={"max_fetches": 0})
    assert res.status == "failed"


@pytest.mark.parametrize("bad", [{"max_queries": 0}, {"max_seconds": -1}])
def test_bad_budgets_are_rejected(ws, cases, retriever, bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        run_case(ws, cases.load("case_wire"), cases=cases, retriever=retriever, budgets=bad)
