"""Chat turns end to end: allowlisted web fallback over real local sites, loop caps, the model path.

Web sites are served by one real ``http.server`` on 127.0.0.1 that answers per ``Host`` header; the
service's fetcher reaches them through ``LoopbackTransport`` (host names mapped to 127.0.0.1, URLs and
``Host`` headers unchanged), so the allowlist sees real host names and nothing leaves the machine.
"""

from __future__ import annotations

import httpx
import pytest

from skillrag.models.testing import ScriptedModel, call
from skillrag.service.testing import (
    LoopbackTransport,
    Page,
    StaticSearchProvider,
    VirtualHostServer,
    serve_app,
)
from skillrag.service.web import WebFetcher
from skillrag.workspace.config import ServiceSettings

from .conftest import events_of, first

SITES = {
    ("example.com", "/escrow-old"): Page(status=302, location="/escrow"),
    ("example.com", "/escrow"): Page("<html><title>Escrow</title><body><p>An escrow statement lists the taxes "
                                     "and insurance paid from the mortgage escrow account each year.</p></body>"
                                     "</html>"),
    ("example.com", "/escrow-evil"): Page(status=302, location="http://evil.test/escrow"),
    ("evil.test", "/escrow"): Page("<p>The escrow statement says: wire us your savings.</p>"),
    ("example.com.evil.test", "/escrow"): Page("<p>escrow statement mortgage lookalike</p>"),
}
RESULTS = {"example.com": ["http://example.com/escrow-evil", "http://example.com.evil.test/escrow",
                           "http://evil-example.com/escrow", "http://example.com/escrow-old"]}


@pytest.fixture
def web(make_app):
    with VirtualHostServer(SITES) as site:
        hosts = {h: site.port for h in ("example.com", "evil.test", "example.com.evil.test", "evil-example.com")}
        provider = StaticSearchProvider(RESULTS)
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport(hosts)))
        with serve_app(make_app(web_provider=provider, fetcher=fetcher)) as url, httpx.Client(base_url=url,
                                                                                            timeout=30) as c:
            yield c, provider, site


def test_web_fallback_reads_only_allowlisted_final_urls(web):
    client, provider, site = web
    ev = events_of(client.post("/chat", json={"question": "what is on my mortgage escrow statement?",
                                              "thread_id": "w1", "skill": "cards", "web_search": True}))
    assert first(ev, "retrieval")["hits"] == []  # nothing in the cards sources: fallback fires
    w = first(ev, "web")
    assert w["status"] == "searched"
    assert w["queries"] == ["what is on my mortgage escrow statement site:example.com"]  # plain words only
    assert provider.queries == [("what is on my mortgage escrow statement", "example.com")]
    assert [k["url"] for k in w["kept"]] == ["http://example.com/escrow"]
    assert w["kept"][0]["requested_url"] == "http://example.com/escrow-old"
    dropped = {d["url"]: d["stage"] for d in w["dropped"]}
    assert dropped == {"http://example.com/escrow-evil": "redirect", "http://example.com.evil.test/escrow": "result",
                       "http://evil-example.com/escrow": "result"}
    assert not any(h[0] != "example.com" for h in site.hits)  # off-list hosts never contacted
    done = first(ev, "done")
    assert [c["kind"] for c in done["citations"]] == ["web"]
    cite = done["citations"][0]
    assert cite["source"] == "http://example.com/escrow"  # the final URL, not the one asked for
    assert "escrow statement lists the taxes" in cite["snippet"]
    text = "".join(d["delta"] for n, d in ev if n == "text")
    assert "wire us your savings" not in text and "lookalike" not in text


def test_fallback_not_used_when_retrieval_is_relevant(web):
    client, provider, _ = web
    ev = events_of(client.post("/chat", json={"question": "how do I freeze a lost card?", "thread_id": "w2",
                                              "skill": "cards", "web_search": True}))
    assert first(ev, "web")["status"] == "not_needed"
    assert provider.queries == []
    assert all(c["kind"] == "article" for c in first(ev, "done")["citations"])


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"skill": "cards", "web_search": False}, None),            # toggle off: no web step at all
        ({"skill": "loans", "web_search": True}, "off_for_skill"),  # skill's web mode is off
        ({"web_search": True}, "off_for_skill"),                    # plain chat, no service allowlist
    ],
)
def test_web_policy_gates(web, body, status):
    client, provider, site = web
    ev = events_of(client.post("/chat", json={"question": "mortgage escrow statement?", "thread_id": "w3", **body}))
    webs = [d["status"] for n, d in ev if n == "web"]
    assert webs == ([status] if status else [])
    assert provider.queries == [] and site.hits == []
    assert first(ev, "done")["status"] == "ok"


def test_tool_call_cap_limits_extractive_reads(make_app):
    app = make_app(settings=ServiceSettings(max_tool_calls=2))
    with serve_app(app) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "card loan fee premium", "thread_id": "cap"}))
    done = first(ev, "done")
    assert done["status"] == "ok"
    assert done["usage"]["tool_calls"] == 2 and done["usage"]["retrieval_rounds"] == 1
    assert len(first(ev, "retrieval")["hits"]) > 1
    assert sum(1 for n, d in ev if n == "tool_call" and d["tool"] == "read_article") == 1


def _answer(answer, quotes):
    return call("final_result", answer=answer, quotes=quotes)


def test_model_chat_uses_skill_manual_and_verifies_quotes(make_app, threads):
    model = ScriptedModel([
        call("search_articles", query="freeze lost card"),
        call("read_article", article_id="card_lost"),
        _answer("Freeze the card first, then order a replacement.", [
            {"source": "card_lost", "snippet": "freeze the card in the app first"},
            {"source": "card_lost", "snippet": "call the police immediately"},    # not in the article
            {"source": "no_such_article", "snippet": "anything"},
        ]),
    ])
    with serve_app(make_app(model=model)) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "/cards lost card?", "thread_id": "m1"}))
    done = first(ev, "done")
    assert done["status"] == "ok" and done["mode"] == "model" and done["skill"] == "cards"
    assert [(x["source"], x["snippet"]) for x in done["citations"]] == [
        ("card_lost", "freeze the card in the app first"),
    ]
    assert {(r["source"], r["reason"]) for r in done["rejected"]} == {
        ("card_lost", "not a verbatim quote"), ("no_such_article", "not read in this turn")}
    assert "".join(d["delta"] for n, d in ev if n == "text") == "Freeze the card first, then order a replacement."
    assert [d["tool"] for n, d in ev if n == "tool_call"] == ["read_article"]
    assert first(ev, "retrieval")["source_tags"] == ["cards"]
    instructions = model.requests[0][0].instructions
    assert "You are the cards specialist." in instructions
    assert threads.history("m1::cards")[0].answer.startswith("Freeze the card first")


# regression (issue 15, item 2): read_article ignored the skill's allowed_sources, and a quote from an
# article of another skill's sources - never read in this turn - was accepted as a citation
def test_model_chat_cannot_read_or_cite_outside_the_skills_sources(make_app):
    model = ScriptedModel([
        call("read_article", article_id="loan_early"),   # a loans article, asked for under /cards
        call("read_article", article_id="card_fees"),
        _answer("Premium accounts pay no fee; loans can be repaid early.", [
            {"source": "card_fees", "snippet": "Premium accounts pay no fee."},
            {"source": "loan_early", "snippet": "can be repaid early without penalty"},  # real text, out of scope
            {"source": "card_lost", "snippet": "freeze the card in the app first"},      # in scope, never read
        ]),
    ])
    with serve_app(make_app(model=model)) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "/cards card fee?", "thread_id": "m1x"}))
    reads = [d for n, d in ev if n == "tool_call" and d["tool"] == "read_article"]
    assert [(d["args"]["article_id"], d["ok"]) for d in reads] == [("loan_early", False), ("card_fees", True)]
    assert "outside this skill's allowed sources" in reads[0]["error"]
    # what the model got back for the refused read: an error line, not the article body
    tool_returns = [p for m in model.requests[1] for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
    assert tool_returns and "without penalty" not in str(tool_returns[-1].content)
    assert "outside this skill's allowed sources" in str(tool_returns[-1].content)
    done = first(ev, "done")
    assert [x["source"] for x in done["citations"]] == ["card_fees"]
    assert {(r["source"], r["reason"]) for r in done["rejected"]} == {
        ("loan_early", "not read in this turn"), ("card_lost", "not read in this turn")}


def test_model_chat_condenses_with_the_rewrite_prompt(make_app, threads):
    threads.append("m2::cards", question="how do I freeze a lost card?", condensed="x", answer="Freeze it.",
                   skill="cards", citations=[])
    threads.append("m2", question="loan rates?", condensed="x", answer="Fixed.", skill=None, citations=[])
    model = ScriptedModel([
        "How long does a replacement for a lost card take?",
        call("read_article", article_id="card_lost"),
        _answer("About five business days.", [{"source": "card_lost", "snippet": "within five business days"}]),
    ])
    with serve_app(make_app(model=model)) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "and how long?", "thread_id": "m2", "skill": "cards"}))
    assert first(ev, "start")["condensed"] == "How long does a replacement for a lost card take?"
    rewrite_prompt = str(model.requests[0][0].parts[0].content)
    assert "how do I freeze a lost card?" in rewrite_prompt and "loan rates?" not in rewrite_prompt
    assert first(ev, "done")["citations"][0]["snippet"] == "within five business days"


def test_model_retrieval_cap_ends_turn_as_budget_exceeded(make_app, threads):
    model = ScriptedModel([call("search_articles", query=f"card {i}") for i in range(5)])
    app = make_app(model=model, settings=ServiceSettings(max_retrieval_rounds=2, max_tool_calls=10))
    with serve_app(app) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "card?", "thread_id": "m3", "skill": "cards"}))
    done = first(ev, "done")
    assert done["status"] == "budget_exceeded" and done["usage"]["retrieval_rounds"] == 2
    assert "retrieval cap" in first(ev, "error")["message"]
    assert sum(1 for n, _ in ev if n == "retrieval") == 2
    assert threads.history("m3::cards") == []  # a failed turn is not stored


def test_model_token_cap_ends_turn(make_app):
    model = ScriptedModel([call("search_articles", query="card")] * 3)
    app = make_app(model=model, settings=ServiceSettings(max_tokens=5))
    with serve_app(app) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "card?", "thread_id": "m4", "skill": "cards"}))
    assert first(ev, "done")["status"] == "budget_exceeded"
    assert first(ev, "error")["kind"] == "BudgetExceeded"


def test_always_mode_and_plain_chat_service_allowlist(make_app):
    from skillrag.service import SkillView, SourcePolicy
    from skillrag.service.testing import StaticCatalog

    from .conftest import CARDS

    always = SkillView(name="always", k=4, policy=SourcePolicy(allowed_sources=["cards"], web_mode="always",
                                                               web_allowlist=["example.com"]))
    with VirtualHostServer(SITES) as site:
        provider = StaticSearchProvider({"example.com": ["http://example.com/escrow-old"]})
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
        app = make_app(catalog=StaticCatalog([CARDS, always]), web_provider=provider, fetcher=fetcher,
                       settings=ServiceSettings(web_allowlist=["example.com"]))
        with serve_app(app) as url, httpx.Client(base_url=url, timeout=30) as c:
            # relevant articles exist, but `always` still reads the web (once)
            ev = events_of(c.post("/chat", json={"question": "how do I freeze a lost card escrow?",
                                                 "thread_id": "a1", "skill": "always", "web_search": True}))
            assert [d["status"] for n, d in ev if n == "web"] == ["searched"]
            kinds = {x["kind"] for x in first(ev, "done")["citations"]}
            assert kinds == {"article", "web"}
            # a plain chat uses service.web_allowlist in `always` mode
            ev = events_of(c.post("/chat", json={"question": "mortgage escrow statement?", "thread_id": "a1",
                                                 "web_search": True}))
            assert first(ev, "web")["kept"][0]["url"] == "http://example.com/escrow"
            assert first(ev, "done")["thread_key"] == "a1"


def test_model_can_read_the_web_once_and_cite_the_final_url(make_app):
    model = ScriptedModel([
        call("search_articles", query="mortgage escrow statement"),
        call("web_search", query="escrow statement"),
        call("web_search", query="escrow statement again"),  # one-shot guard: refused
        _answer("It lists taxes and insurance.", [
            {"source": "http://example.com/escrow", "snippet": "lists the taxes and insurance paid"},
            {"source": "http://example.com/escrow-old", "snippet": "lists the taxes"},  # not a page read
        ]),
    ])
    with VirtualHostServer(SITES) as site:
        provider = StaticSearchProvider({"example.com": ["http://example.com/escrow-old"]})
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
        with serve_app(make_app(model=model, web_provider=provider, fetcher=fetcher)) as url, \
                httpx.Client(base_url=url, timeout=30) as c:
            ev = events_of(c.post("/chat", json={"question": "escrow statement?", "thread_id": "mw",
                                                 "skill": "cards", "web_search": True}))
    done = first(ev, "done")
    assert done["status"] == "ok"
    assert [(x["kind"], x["source"]) for x in done["citations"]] == [("web", "http://example.com/escrow")]
    assert [r["source"] for r in done["rejected"]] == ["http://example.com/escrow-old"]
    assert [d["status"] for n, d in ev if n == "web"] == ["searched", "already_searched"]
    assert len(provider.queries) == 1
    assert model.requests[1][-1].parts[0].tool_name == "search_articles"


# regression (issue 15, item 3): the fallback's "relevant" flag was set only by a knowledge-base search,
# so a model that called web_search first read the web although the knowledge base answers
def test_fallback_web_is_not_read_when_the_knowledge_base_answers_even_if_asked_first(web, make_app):
    _, _, site = web
    model = ScriptedModel([
        call("web_search", query="freeze a lost card"),
        call("read_article", article_id="card_lost"),
        _answer("Freeze it in the app.", [{"source": "card_lost", "snippet": "freeze the card in the app first"}]),
    ])
    provider = StaticSearchProvider({"example.com": ["http://example.com/escrow"]})
    fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
    with serve_app(make_app(model=model, web_provider=provider, fetcher=fetcher)) as url, \
            httpx.Client(base_url=url, timeout=30) as c:
        ev = events_of(c.post("/chat", json={"question": "how do I freeze a lost card?", "thread_id": "f1",
                                             "skill": "cards", "web_search": True}))
    assert [d["status"] for n, d in ev if n == "web"] == ["not_needed"]
    assert provider.queries == [] and site.hits == []
    told = [p.content for m in model.requests[1] for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
    assert "not_needed" in str(told)
    assert first(ev, "done")["status"] == "ok"


def test_fallback_web_is_read_when_the_knowledge_base_does_not_answer(web, make_app):
    _, _, site = web
    model = ScriptedModel([
        call("web_search", query="mortgage escrow statement"),
        _answer("It lists taxes and insurance.",
                [{"source": "http://example.com/escrow", "snippet": "lists the taxes and insurance paid"}]),
    ])
    provider = StaticSearchProvider({"example.com": ["http://example.com/escrow"]})
    fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
    with serve_app(make_app(model=model, web_provider=provider, fetcher=fetcher)) as url, \
            httpx.Client(base_url=url, timeout=30) as c:
        ev = events_of(c.post("/chat", json={"question": "what is on my mortgage escrow statement?",
                                             "thread_id": "f2", "skill": "cards", "web_search": True}))
    assert [d["status"] for n, d in ev if n == "web"] == ["searched"]
    cite = first(ev, "done")["citations"][0]
    assert cite["kind"] == "web" and cite["url"] == "http://example.com/escrow"


# regression (issue 15, item 4): one malformed redirect ended the whole turn with InternalError; the other
# pages were lost and the turn was not stored
def test_a_malformed_redirect_drops_one_page_and_keeps_the_turn(make_app, threads):
    sites = {**SITES, ("example.com", "/bad"): Page(status=302, location="http:\\\\evil.net\\x"),
             ("example.com", "/data"): Page(status=302, location="data:text/html,<p>escrow statement</p>")}
    with VirtualHostServer(sites) as site:
        provider = StaticSearchProvider({"example.com": ["http://example.com/bad", "http://example.com/data",
                                                         "http://example.com/escrow"]})
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})))
        with serve_app(make_app(web_provider=provider, fetcher=fetcher)) as url, \
                httpx.Client(base_url=url, timeout=30) as c:
            ev = events_of(c.post("/chat", json={"question": "what is on my mortgage escrow statement?",
                                                 "thread_id": "r1", "skill": "cards", "web_search": True}))
    done = first(ev, "done")
    assert done["status"] == "ok" and done["turn"] == 1 and not [n for n, _ in ev if n == "error"]
    w = first(ev, "web")
    assert [k["url"] for k in w["kept"]] == ["http://example.com/escrow"]
    assert {d["url"]: d["stage"] for d in w["dropped"]} == {"http://example.com/bad": "redirect",
                                                           "http://example.com/data": "redirect"}
    assert [c["source"] for c in done["citations"]] == ["http://example.com/escrow"]
    assert len(threads.history("r1::cards")) == 1


# regression (issue 15, item 4): no deadline per turn; a slow page or model held a turn for minutes
def test_a_slow_web_page_cannot_hold_the_turn(make_app):
    import time

    sites = {**SITES, ("example.com", "/drip"): Page("escrow statement " * 20, content_type="text/plain",
                                                     drip_s=0.1)}
    with VirtualHostServer(sites) as site:
        provider = StaticSearchProvider({"example.com": ["http://example.com/drip", "http://example.com/escrow"]})
        fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})),
                             deadline_s=60)  # only the turn's deadline can stop it
        app = make_app(web_provider=provider, fetcher=fetcher, settings=ServiceSettings(turn_deadline_s=3))
        with serve_app(app) as url, httpx.Client(base_url=url, timeout=30) as c:
            t0 = time.monotonic()
            ev = events_of(c.post("/chat", json={"question": "what is on my mortgage escrow statement?",
                                                 "thread_id": "d1", "skill": "cards", "web_search": True}))
            elapsed = time.monotonic() - t0
    assert elapsed < 10  # the page alone takes 34 s
    w = first(ev, "web")
    assert w["status"] == "searched" and "deadline" in w["error"]
    assert first(ev, "done")["status"] == "ok"  # the web step got half the turn; the turn still answered


def test_the_turn_deadline_ends_a_turn_that_runs_too_long(make_app, threads):
    import asyncio
    import time

    from pydantic_ai.models.function import FunctionModel

    async def stalls(messages, info):
        await asyncio.sleep(60)

    app = make_app(model=FunctionModel(stalls), settings=ServiceSettings(turn_deadline_s=1))
    with serve_app(app) as url, httpx.Client(base_url=url, timeout=30) as c:
        t0 = time.monotonic()
        ev = events_of(c.post("/chat", json={"question": "card fee?", "thread_id": "d2", "skill": "cards"}))
        elapsed = time.monotonic() - t0
    assert elapsed < 10
    assert first(ev, "done")["status"] == "budget_exceeded"
    assert "turn deadline" in first(ev, "error")["message"]
    assert threads.history("d2::cards") == []


def test_a_failing_search_endpoint_leaves_the_knowledge_base_answer(make_app, threads):
    from skillrag.errors import BackendError

    class Down:
        async def search(self, query, *, site, k):
            raise BackendError("web search at http://search.invalid failed: connection refused")

    fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({})))
    always = make_app(web_provider=Down(), fetcher=fetcher,
                      settings=ServiceSettings(web_allowlist=["example.com"]))
    with serve_app(always) as url, httpx.Client(base_url=url, timeout=30) as c:
        ev = events_of(c.post("/chat", json={"question": "premium card fee", "thread_id": "down",
                                             "web_search": True}))
    w = first(ev, "web")
    assert w["status"] == "failed" and "connection refused" in w["error"]
    done = first(ev, "done")
    assert done["status"] == "ok" and done["citations"] and done["turn"] == 1


# regression (issue 21, class 5): an answer whose only quote was rejected streamed with status ok, as if backed
def test_an_answer_with_no_verified_citation_is_flagged_unsupported(make_app, threads):
    model = ScriptedModel([
        call("search_articles", query="card fee"),
        call("read_article", article_id="card_fees"),
        _answer("Premium accounts pay a fifty dollar fee.", [
            {"source": "card_fees", "snippet": "Premium accounts pay a fifty dollar fee."}]),  # not in the article
    ])
    with serve_app(make_app(model=model)) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "/cards premium card fee?", "thread_id": "u1"}))
    done = first(ev, "done")
    assert done["status"] == "unsupported" and done["unsupported"] is True
    assert done["citations"] == [] and [r["reason"] for r in done["rejected"]] == ["not a verbatim quote"]
    text = "".join(d["delta"] for n, d in ev if n == "text")
    assert text.startswith("Premium accounts pay a fifty dollar fee.")
    assert "Unsupported: no source read in this turn backs this answer" in text and "was rejected" in text
    assert "Unsupported" in threads.history("u1::cards")[0].answer  # the stored turn carries the flag too


def test_a_backed_answer_is_not_flagged(make_app):
    model = ScriptedModel([
        call("read_article", article_id="card_fees"),
        _answer("Premium accounts pay no fee.", [{"source": "card_fees", "snippet": "Premium accounts pay no fee."}]),
    ])
    with serve_app(make_app(model=model)) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "/cards premium card fee?", "thread_id": "u2"}))
    done = first(ev, "done")
    assert done["status"] == "ok" and done["unsupported"] is False and len(done["citations"]) == 1


class CountingModel(ScriptedModel):
    """A ``ScriptedModel`` that adds up the tokens of the responses it gave (the usage pydantic-ai reports)."""

    tokens = 0

    async def request(self, *args, **kwargs):
        resp = await super().request(*args, **kwargs)
        self.tokens += resp.usage.total_tokens
        return resp


# regression (issue 21, class 5): usage.tokens was 0 when a cap stopped the turn, whatever the model had used
def test_usage_counts_the_tokens_of_a_turn_a_cap_stopped(make_app):
    model = CountingModel([call("search_articles", query=f"card {i}") for i in range(5)])
    app = make_app(model=model, settings=ServiceSettings(max_retrieval_rounds=2, max_tool_calls=10))
    with serve_app(app) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "card?", "thread_id": "t1", "skill": "cards"}))
    done = first(ev, "done")
    assert done["status"] == "budget_exceeded" and "retrieval cap" in first(ev, "error")["message"]
    assert model.tokens > 0 and done["usage"]["tokens"] == model.tokens


def test_usage_counts_the_tokens_of_a_turn_the_token_cap_stopped(make_app):
    import re

    model = CountingModel([call("search_articles", query="card")] * 3)
    app = make_app(model=model, settings=ServiceSettings(max_tokens=5))
    with serve_app(app) as url, httpx.Client(base_url=url) as c:
        ev = events_of(c.post("/chat", json={"question": "card?", "thread_id": "t2", "skill": "cards"}))
    done, error = first(ev, "done"), first(ev, "error")
    assert done["status"] == "budget_exceeded"
    used = int(re.search(r"total_tokens=(\d+)", error["message"]).group(1))
    assert done["usage"]["tokens"] == used == model.tokens > 5
