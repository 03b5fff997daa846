"""Deterministic metrics: values on a worked example and the edge cases (no relevant docs, empty output)."""

import pytest

from skillrag.errors import UserError
from skillrag.evaluation.metrics import (
    METRICS,
    Reference,
    RunCost,
    ScoredCase,
    compute_metrics,
    get_metric,
    tool_mentioned,
)

REF = Reference(
    case_id="t1",
    reference_guidance="verify, then transfer",
    required_documents=("doc_a", "doc_b", "doc_c", "doc_d"),
    expected_tools=("log_verification", "transfer_funds_between_bank_accounts_1234", "log_verification",
                    "transfer_to_human_agents"),
)
OUTPUT = {
    "case_id": "t1",
    "guidance": "1. Transfer to human agents if stuck.\n2. Call log_verification first."
                "\n3. Run transfer_funds_between_bank_accounts_1234.",
    "snippets": [
        {"source_article": "doc_a", "text": "Always call log_verification before any change."},
        {"source_article": "doc_b", "text": "Use transfer_funds_between_bank_accounts_1234 to move money."},
    ],
    "articles_consulted": ["doc_a", "doc_b", "doc_c", "doc_x"],
}
RECORD = {
    "steps": [
        {"tool": "load_case", "ms": 3.0},
        {"tool": "retrieve", "ms": 100.0},
        {"tool": "retrieve", "ms": 50.0},
        {"tool": "get_article", "ms": 10.0},
        {"tool": "save_output", "ms": 7.0},
    ],
    "ms": 2000.0,
    "tokens": 1234,
}


def test_registry_is_data():
    assert {"accepted", "docs_consulted_recall", "tools_grounded_all", "tool_order_tau", "seconds"} <= set(METRICS)
    assert all(m.kind in {"rate", "fraction", "score", "cost"} for m in METRICS.values())
    assert all(m.description for m in METRICS.values())
    with pytest.raises(UserError, match="unknown metric"):
        get_metric("bleu")


def test_worked_example():
    v = compute_metrics(ScoredCase("t1", "accepted", OUTPUT, REF, RECORD))
    assert v["accepted"] is True
    assert v["docs_consulted_recall"] == pytest.approx(3 / 4)
    assert v["docs_consulted_all"] is False
    assert v["docs_consulted_any"] is True
    assert v["docs_cited_recall"] == pytest.approx(2 / 4)
    # 3 distinct tools, all named in guidance ("Transfer to human agents" matches transfer_to_human_agents)
    assert v["tools_in_guidance_recall"] == pytest.approx(1.0)
    assert v["tools_in_guidance_all"] is True
    # grounded: the snippets name 2 of 3 tools
    assert v["tools_grounded_recall"] == pytest.approx(2 / 3)
    assert v["tools_grounded_all"] is False
    # expected order verify, transfer_funds, human; mentioned order human, verify, transfer_funds
    # pairs: (v,t) concordant, (v,h) discordant, (t,h) discordant → tau = (1-2)/3
    assert v["tool_order_tau"] == pytest.approx(-1 / 3)
    assert v["queries"] == 2 and v["fetches"] == 1 and v["tokens"] == 1234
    assert v["seconds"] == pytest.approx(2.0)
    assert v["search_seconds"] == pytest.approx(0.15)
    assert v["generation_seconds"] == pytest.approx(1.85)


def test_no_relevant_documents_or_tools_is_undefined_not_zero():
    ref = Reference(case_id="t2")
    v = compute_metrics(ScoredCase("t2", "accepted", OUTPUT, ref, RECORD))
    for name in ("docs_consulted_recall", "docs_consulted_all", "docs_consulted_any", "docs_cited_recall", "tools_in_guidance_recall",
                 "tools_grounded_all", "tool_order_tau"):
        assert v[name] is None, name
    assert v["accepted"] is True


def test_empty_output_scores_zero():
    for output in (None, {}, {"guidance": "", "snippets": [], "articles_consulted": []}):
        v = compute_metrics(ScoredCase("t1", "failed", output, REF, None))
        assert v["accepted"] is False
        assert v["docs_consulted_recall"] == 0.0 and v["docs_cited_all"] is False
        assert v["docs_consulted_any"] is False
        assert v["tools_in_guidance_recall"] == 0.0 and v["tools_grounded_recall"] == 0.0
        assert v["tool_order_tau"] is None
        assert v["queries"] is None and v["seconds"] is None


def test_malformed_output_fields_do_not_crash():
    output = {"guidance": 42, "snippets": "nope", "articles_consulted": [1, None, "doc_a"]}
    v = compute_metrics(ScoredCase("t1", "accepted", output, REF, {"steps": "bad"}))
    assert v["docs_consulted_recall"] == pytest.approx(1 / 4)
    assert v["tools_in_guidance_recall"] == 0.0


def test_tool_mentioned_word_boundaries():
    assert tool_mentioned("apply_for_credit_card", "then Apply for credit card now")
    assert tool_mentioned("apply_for_credit_card", "(apply_for_credit_card)")
    assert not tool_mentioned("apply_for_credit_card", "reapply for credit cards")
    assert not tool_mentioned("transfer_funds_1234", "transfer_funds_12345")
    assert not tool_mentioned("", "anything")


def test_run_cost_from_totals():
    cost = RunCost.from_record({"queries": 4, "fetches": 6, "seconds": 3.5, "search_ms": 500, "tokens": 10})
    assert (cost.queries, cost.fetches, cost.tokens) == (4, 6, 10)
    assert cost.search_seconds == pytest.approx(0.5) and cost.generation_seconds == pytest.approx(3.0)
    assert RunCost.from_record(None) == RunCost()


def test_subset_of_metrics():
    v = compute_metrics(ScoredCase("t1", "accepted", OUTPUT, REF, RECORD), ["accepted", "queries"])
    assert v == {"accepted": True, "queries": 2.0}


def test_tool_gaps_localise_each_expected_tool():
    from skillrag.evaluation.metrics import ToolLocator, tool_gaps

    ref = Reference(case_id="t", expected_tools=("log_verification", "freeze_card_1", "open_vault_9", "fly_away_3"))
    locator = ToolLocator({
        "doc_a": "Always call log_verification first.",
        "doc_b": "Freeze the card with freeze_card_1.",
        "doc_z": "Use open_vault_9 for vault access.",
    })
    output = {
        "guidance": "verify, freeze",
        "snippets": [{"source_article": "doc_a", "text": "Always call log_verification first."}],
        "articles_consulted": ["doc_a", "doc_b"],
    }
    gaps = tool_gaps(ScoredCase("t", "accepted", output, ref), locator)
    # grounded: log_verification; read but not quoted: freeze_card_1; corpus has it, run did not read it:
    # open_vault_9; nowhere: fly_away_3
    assert gaps == {"grounded": 1, "in_consulted_article": 1, "in_other_article": 1, "not_in_corpus": 1}
    assert locator.articles_naming("freeze_card_1") == frozenset({"doc_b"})
    assert tool_gaps(ScoredCase("t", "accepted", output, Reference(case_id="t")), locator) is None
    empty = tool_gaps(ScoredCase("t", "failed", None, ref), locator)
    assert empty == {"grounded": 0, "in_consulted_article": 0, "in_other_article": 3, "not_in_corpus": 1}


def test_ranking_metrics_recall_at_k_and_mrr():
    from skillrag.errors import UserError
    from skillrag.evaluation import ranking_metrics

    ranked = [["a", "x", "b"], ["y", "z", "c"], ["q"]]
    relevant = [{"a", "b"}, {"c"}, {"w"}]
    m = ranking_metrics(ranked, relevant, ks=(1, 3), mrr_depth=2)
    assert m["r@1"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert m["r@3"] == pytest.approx((1 + 1 + 0) / 3)
    assert m["mrr"] == pytest.approx((1 + 0 + 0) / 3)  # "c" is at rank 3, past mrr_depth=2
    assert ranking_metrics(ranked, relevant, ks=(1,))["mrr"] == pytest.approx((1 + 1 / 3) / 3)
    with pytest.raises(UserError, match="no relevant ids"):
        ranking_metrics([["a"]], [set()])
    with pytest.raises(UserError, match="2 rankings for 1"):
        ranking_metrics([["a"], ["b"]], [{"a"}])
