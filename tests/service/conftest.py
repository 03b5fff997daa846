"""Fixtures for the service tests: hand-written articles, two skills, an app on a real local server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from skillrag.service import SkillView, SourcePolicy, ThreadStore, create_app
from skillrag.service.testing import MemoryKnowledge, StaticCatalog, memory_article, serve_app
from skillrag.workspace.config import ServiceSettings

ARTICLES = [
    memory_article("card_lost", "Lost or stolen cards",
                   "## Freezing\n\nWhen a customer reports a lost card, freeze the card in the app first.\n"
                   "Then order a replacement card; it arrives within five business days.", "cards"),
    memory_article("card_fees", "Card fees",
                   "Standard accounts pay a ten dollar card replacement fee. Premium accounts pay no fee.", "cards"),
    memory_article("loan_early", "Early loan repayment",
                   "A personal loan can be repaid early without penalty. The customer asks for a payoff quote "
                   "first, which is valid for ten days.", "loans"),
    memory_article("loan_rates", "Loan interest rates",
                   "Personal loan interest rates are fixed for the whole term of the loan agreement.", "loans"),
]

CARDS = SkillView(name="cards", description="Use when the question is about bank cards.",
                  manual="You are the cards specialist.", k=4, max_snippets=3, min_snippet_chars=20,
                  policy=SourcePolicy(allowed_sources=["cards"], web_mode="fallback", web_allowlist=["example.com"]))
LOANS = SkillView(name="loans", description="Use when the question is about loans.",
                  manual="You are the loans specialist.", k=4, max_snippets=3, min_snippet_chars=20,
                  policy=SourcePolicy(allowed_sources=["loans"]))


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(event, data)]`` from a text/event-stream body (pings and comments skipped)."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data and name != "ping":
            out.append((name, json.loads("\n".join(data))))
    return out


def events_of(resp: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/event-stream")
    return parse_sse(resp.text)


def first(events: list[tuple[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    return next(d for n, d in events if n == name)


@pytest.fixture
def knowledge() -> MemoryKnowledge:
    return MemoryKnowledge(ARTICLES)


@pytest.fixture
def threads(tmp_path) -> ThreadStore:
    return ThreadStore(tmp_path / "service.sqlite")


@pytest.fixture
def make_app(knowledge, threads):
    def make(**kw: Any):
        kw.setdefault("catalog", StaticCatalog([CARDS, LOANS]))
        kw.setdefault("knowledge", knowledge)
        kw.setdefault("threads", threads)
        kw.setdefault("settings", ServiceSettings())
        return create_app(**kw)

    return make


@pytest.fixture
def server(make_app) -> Iterator[str]:
    with serve_app(make_app()) as url:
        yield url


@pytest.fixture
def client(server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as c:
        yield c
