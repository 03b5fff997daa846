"""Traces of harness runs, recorded with the SDK's in-memory exporter (``skillrag.tracing.testing``), and
the run record's token totals on every exit path."""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.trace import StatusCode
from tests.harness.test_llm import GOOD, fetch_hit, run, save_call

from skillrag.harness import run_case
from skillrag.models.testing import ScriptedModel, call
from skillrag.tracing.testing import attributes_of, children, one, record_spans, span_tree


def test_extractive_run_is_one_trace_of_tool_spans(ws, cases, retriever):
    with record_spans() as exporter:
        res = run_case(ws, cases.load("case_lost"), harness="extractive", cases=cases, retriever=retriever)
    spans = exporter.get_finished_spans()
    assert res.status == "accepted"
    root = one(spans, "skillrag.run")
    assert root.parent is None and root.status.status_code is StatusCode.UNSET
    # every tool call is a direct child of the run, in call order, and nothing else is in the trace
    kids = children(spans, root)
    assert [s.name for s in kids] == ["skillrag.tool." + s.name for s in res.record.steps]
    assert kids[0].name == "skillrag.tool.load_case" and kids[-1].name == "skillrag.tool.save_output"
    assert {s.context.trace_id for s in spans} == {root.context.trace_id} and len(spans) == len(kids) + 1
    a = dict(root.attributes)
    assert (a["skillrag.case_id"], a["skillrag.harness"], a["skillrag.skill"], a["skillrag.run.status"]) == (
        "case_lost", "extractive", "cs-guidance", "accepted")
    assert a["skillrag.run.queries"] == len(res.record.queries) and a["skillrag.run.fetches"] == len(res.record.fetches)
    retrieves = attributes_of(spans, "skillrag.tool.retrieve")
    assert retrieves and all(r["gen_ai.operation.name"] == "execute_tool" and r["gen_ai.tool.name"] == "retrieve"
                             for r in retrieves)
    first = retrieves[0]
    assert first["skillrag.retrieve.k"] == 20 and first["skillrag.retrieve.hits"] == 3
    assert first["skillrag.tool.result_bytes"] > 0 and first["skillrag.case_id"] == "case_lost"
    assert first["skillrag.budget.queries_left"] == res.record.budgets.max_queries - 1
    # the query is case text: only its length is on the span unless message content is captured
    assert "skillrag.retrieve.query" not in first and first["skillrag.retrieve.query_chars"] > 10
    reads = attributes_of(spans, "skillrag.tool.get_article")
    assert [r["skillrag.get_article.article_id"] for r in reads] == res.record.fetches
    save = attributes_of(spans, "skillrag.tool.save_output")[-1]
    assert save["skillrag.save.accepted"] is True and save["skillrag.save.snippets"] == len(res.output["snippets"])
    # the run record names its trace, so a reviewer can open it in the collector
    trace_id = trace.format_trace_id(root.context.trace_id)
    assert res.record.trace_id == trace_id
    assert json.loads(res.record_path.read_text())["trace_id"] == trace_id


def test_query_text_is_on_the_span_when_content_is_captured(ws, cases, retriever, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with record_spans() as exporter:
        run_case(ws, cases.load("case_lost"), harness="extractive", cases=cases, retriever=retriever)
    first = attributes_of(exporter.get_finished_spans(), "skillrag.tool.retrieve")[0]
    assert "lost their debit card" in first["skillrag.retrieve.query"]


def test_llm_run_nests_model_and_tool_spans_and_records_rejections(ws, cases, retriever):
    bad = save_call(("kb_card_lost", "Freeze the card at once, no questions asked."))
    model = ScriptedModel([call("load_case", case_id="case_lost"), call("retrieve", query="lost debit card"),
                           fetch_hit("kb_card_lost"), bad, save_call(("kb_card_lost", GOOD))])
    with record_spans() as exporter:
        res = run(ws, cases, retriever, model)
    assert res.status == "accepted"
    spans = exporter.get_finished_spans()
    tree = span_tree(spans)
    root = one(spans, "skillrag.run")
    # pydantic-ai's own GenAI spans (agent run, one `chat` span per model request), not a wrapper of ours;
    # each skillrag tool span sits inside the agent's execute_tool span for that call
    assert tree[0] == "skillrag.run" and tree[1] == "  invoke_agent agent"
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == res.record.model_calls == 5
    assert all(s.context.trace_id == root.context.trace_id for s in spans)
    for s in spans:
        if s.name.startswith("skillrag.tool."):
            parent = next(p for p in spans if p.context.span_id == s.parent.span_id)
            assert parent.name == "execute_tool " + s.name.removeprefix("skillrag.tool.")
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) == res.record.input_tokens
    saves = attributes_of(spans, "skillrag.tool.save_output")
    assert [s["skillrag.save.accepted"] for s in saves] == [False, True]
    assert saves[0]["skillrag.save.n_reasons"] >= 1 and any("verbatim" in r for r in saves[0]["skillrag.save.reasons"])
    rejected = next(s for s in spans if s.name == "skillrag.tool.save_output" and s.status.status_code is StatusCode.ERROR)
    assert rejected.attributes["skillrag.error.kind"] == "ContractViolation"
    assert dict(root.attributes)["skillrag.model"] == "function:scripted"


def test_a_run_that_ends_over_budget_marks_its_span(ws, cases, retriever):
    model = ScriptedModel([call("retrieve", query="lost card")] * 3)
    with record_spans() as exporter:
        res = run(ws, cases, retriever, model, budgets={"max_tokens": 50})
    root = one(exporter.get_finished_spans(), "skillrag.run")
    assert res.status == "budget_exceeded"
    assert root.status.status_code is StatusCode.ERROR and "model budget spent" in root.status.description
    assert root.attributes["gen_ai.usage.input_tokens"] == res.record.input_tokens > 0


def test_tracing_off_records_nothing_and_stores_no_trace_id(ws, cases, retriever):
    seen = []

    class Spy(type(retriever)):
        def search(self, query, k=10, filters=None):
            seen.append(trace.get_current_span())
            return super().search(query, k, filters)

    res = run_case(ws, cases.load("case_lost"), harness="extractive", cases=cases, retriever=Spy(ws))
    assert res.status == "accepted" and seen
    assert all(not s.is_recording() and not s.get_span_context().is_valid for s in seen)
    assert res.record.trace_id is None and json.loads(res.record_path.read_text())["trace_id"] is None


def test_record_tokens_are_true_when_the_token_budget_ends_the_run(ws, cases, retriever):
    model = ScriptedModel([call("retrieve", query="lost card")] * 3)
    res = run(ws, cases, retriever, model, budgets={"max_tokens": 50})
    assert res.status == "budget_exceeded"
    steps = [s for s in res.record.steps if s.kind == "model"]
    spent = sum(s.input_tokens + s.output_tokens for s in steps)
    assert spent > 50 and res.record.total_tokens == spent
    saved = json.loads(res.record_path.read_text())
    assert saved["total_tokens"] == saved["input_tokens"] + saved["output_tokens"] == spent


def test_record_tokens_are_true_when_the_save_budget_ends_the_run(ws, cases, retriever):
    bad = save_call(("kb_card_lost", "Freeze the card at once, no questions asked."))
    model = ScriptedModel([call("load_case", case_id="case_lost"), bad, bad])
    res = run(ws, cases, retriever, model, budgets={"max_save_retries": 1})
    assert res.status == "failed"
    spent = sum(s.input_tokens + s.output_tokens for s in res.record.steps if s.kind == "model")
    assert spent > 0 and json.loads(res.record_path.read_text())["total_tokens"] == spent
