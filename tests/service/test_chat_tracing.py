"""The trace of one chat turn (scripted model, real local web sites), recorded with the SDK's in-memory
exporter: the turn span, its retrieval round, article read, web steps and pydantic-ai's model spans."""

from __future__ import annotations

import httpx
from opentelemetry import trace

from skillrag.models.testing import ScriptedModel, call
from skillrag.service.testing import LoopbackTransport, StaticSearchProvider, VirtualHostServer, serve_app
from skillrag.service.web import WebFetcher
from skillrag.tracing.testing import attributes_of, children, one, record_spans, span_tree

from .conftest import events_of, first
from .test_chat import SITES, _answer


def _chat(make_app, model, question: str):
    with VirtualHostServer(SITES) as site:
        provider = StaticSearchProvider({"example.com": ["http://example.com/escrow-old"]})
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
        with serve_app(make_app(model=model, web_provider=provider, fetcher=fetcher)) as url, \
                httpx.Client(base_url=url, timeout=30) as c:
            return events_of(c.post("/chat", json={"question": question, "thread_id": "t1", "skill": "cards",
                                                   "web_search": True}))


def test_scripted_chat_turn_span_tree(make_app):
    model = ScriptedModel([
        call("search_articles", query="mortgage escrow statement"),
        call("read_article", article_id="card_lost"),
        call("web_search", query="escrow statement"),
        call("web_search", query="escrow statement again"),  # one-shot guard: refused, still a web step
        _answer("It lists taxes and insurance.",
                [{"source": "http://example.com/escrow", "snippet": "lists the taxes and insurance paid"}]),
    ])
    with record_spans() as exporter:
        ev = _chat(make_app, model, "escrow statement?")
    spans = exporter.get_finished_spans()
    done = first(ev, "done")
    assert done["status"] == "ok"
    turn = one(spans, "skillrag.chat.turn")
    # the skillrag spans of the turn, with pydantic-ai's agent run between them (its own GenAI spans)
    assert span_tree(spans, prefix="skillrag.") == [
        "skillrag.chat.turn",
        "  skillrag.chat.retrieve",
        "  skillrag.chat.read_article",
        "  skillrag.chat.web",
        "  skillrag.chat.web",
    ]
    agent = next(s for s in children(spans, turn) if s.name.startswith("invoke_agent"))
    model_calls = [s for s in children(spans, agent) if s.name.startswith("chat ")]
    assert len(model_calls) == 5 and sum(s.attributes["gen_ai.usage.input_tokens"] + s.attributes[
        "gen_ai.usage.output_tokens"] for s in model_calls) == done["usage"]["tokens"]
    for name, tool in [("skillrag.chat.retrieve", "search_articles"), ("skillrag.chat.read_article", "read_article"),
                       ("skillrag.chat.web", "web_search")]:
        for s in (x for x in spans if x.name == name):
            parent = next(p for p in spans if p.context.span_id == s.parent.span_id)
            assert parent.name == f"execute_tool {tool}" and parent.parent.span_id == agent.context.span_id
    a = dict(turn.attributes)
    assert (a["skillrag.skill"], a["skillrag.thread_key"], a["skillrag.chat.mode"], a["skillrag.chat.status"]) == (
        "cards", "t1::cards", "model", "ok")
    assert a["skillrag.chat.turn"] == done["turn"] == 1 and a["skillrag.chat.citations"] == 1
    assert a["gen_ai.usage.total_tokens"] == done["usage"]["tokens"] > 0
    assert attributes_of(spans, "skillrag.chat.retrieve")[0]["skillrag.retrieve.k"] == 4
    webs = attributes_of(spans, "skillrag.chat.web")
    assert [w["skillrag.web.status"] for w in webs] == ["searched", "already_searched"]
    assert webs[0]["skillrag.web.kept"] == 1 and webs[0]["skillrag.web.mode"] == "fallback"
    # the client gets the turn's trace id with its answer
    assert done["trace_id"] == trace.format_trace_id(turn.context.trace_id)
    assert {s.context.trace_id for s in spans if s.name.startswith("skillrag.")} == {turn.context.trace_id}


def test_a_chat_turn_that_hits_its_cap_is_an_error_span(make_app):
    model = ScriptedModel([call("search_articles", query=f"card {i}") for i in range(5)])
    with record_spans() as exporter:
        ev = _chat(make_app, model, "lost card?")
    turn = one(exporter.get_finished_spans(), "skillrag.chat.turn")
    assert first(ev, "done")["status"] == "budget_exceeded"
    assert turn.status.status_code is trace.StatusCode.ERROR
    assert turn.attributes["skillrag.chat.status"] == "budget_exceeded"
    assert turn.attributes["gen_ai.usage.total_tokens"] == first(ev, "done")["usage"]["tokens"] > 0


def test_without_tracing_the_done_event_has_no_trace_id(make_app):
    ev = _chat(make_app, None, "lost card?")
    assert first(ev, "done")["trace_id"] is None
