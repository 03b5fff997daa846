"""Test doubles for the evidence package: in-memory articles, a keyword search tool, a reasoner
spy, and scripted structured outputs for the llm reasoner. No network, no index, no model."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from skillrag.corpus.model import Article, content_hash
from skillrag.corpus.sections import parse_sections
from skillrag.evidence.steps import Reasoner
from skillrag.search import Hit

__all__ = ["KeywordSearch", "SpyReasoner", "make_articles", "scripted_llm_steps"]


def make_articles(items: Iterable[tuple[str, str, str]] | Mapping[str, tuple[str, str]]) -> list[Article]:
    """Articles from ``(id, title, markdown body)`` triples (or ``{id: (title, body)}``), with
    sections parsed exactly as ingest does."""
    triples = [(k, *v) for k, v in items.items()] if isinstance(items, Mapping) else list(items)
    return [
        Article(
            id=i,
            title=t,
            body=b,
            content_hash=content_hash(b),
            source_path=f"{i}.md",
            sections=parse_sections(b),
        )
        for i, t, b in triples
    ]


class KeywordSearch:
    """A deterministic search tool: ranks articles by how many distinct query words they hold.
    ``.queries`` records every query asked."""

    def __init__(self, articles: Sequence[Article]) -> None:
        self.articles = list(articles)
        self.queries: list[str] = []

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[Hit]:
        self.queries.append(query)
        words = set(re.findall(r"[a-z0-9]+", query.lower()))
        scored = []
        for a in self.articles:
            have = set(re.findall(r"[a-z0-9]+", (a.title + " " + a.body).lower()))
            s = len(words & have)
            if s:
                scored.append((-s, a.id, a))
        scored.sort()
        return [
            Hit(article_id=a.id, score=float(-s), title=a.title, preview=a.body[:80])
            for s, _, a in scored[:k]
        ]


class SpyReasoner:
    """Wraps a reasoner and records the name of every step it is asked to run (``.calls``): each of the
    ``Reasoner`` steps is the inner reasoner's own, called through; ``name``, ``model_id`` and ``tokens``
    are the inner reasoner's too."""

    #: The ``Reasoner`` steps that are recorded.
    STEPS = frozenset({"identify_subject", "propose_candidates", "propose_evidence", "conclude"})

    def __init__(self, inner: Reasoner) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if name not in self.STEPS:
            return value

        def step(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return value(*args, **kwargs)

        return step


def scripted_llm_steps(
    subject: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]] | None = None,
    evidence: Sequence[Mapping[str, Any]] | None = None,
    conclusion: Mapping[str, Any] | None = None,
) -> list[Any]:
    """Model responses, in request order, for one run of ``LLMReasoner``: each is a call of the
    structured-output tool. Pass the result to ``skillrag.models.testing.ScriptedModel``. Steps
    left as ``None`` are not scripted (a not-found run stops after ``candidates``)."""
    from skillrag.models.testing import call

    steps: list[Any] = [call("final_result", **dict(subject))]
    if candidates is not None:
        steps.append(call("final_result", candidates=[dict(c) for c in candidates]))
    if evidence is not None:
        steps.append(call("final_result", evidence=[dict(e) for e in evidence]))
    if conclusion is not None:
        steps.append(call("final_result", **dict(conclusion)))
    return steps
