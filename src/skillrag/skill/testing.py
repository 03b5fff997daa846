"""Test doubles for the skill package: a retriever that needs no index, and small fixtures.

``FakeRetriever`` ranks articles by how many query words their title+body contain (a plain
term-overlap count, not BM25); use it to test ``SkillTools.retrieve`` and the MCP/CLI paths
without ``skillrag.search``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillrag.corpus import ArticleStore
from skillrag.workspace import Workspace

__all__ = ["FakeHit", "FakeRetriever", "make_output"]

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class FakeHit:
    """Same fields as ``skillrag.search.Hit``."""

    article_id: str
    score: float
    title: str = ""
    preview: str = ""
    page_ids: tuple[str, ...] = ()


class FakeRetriever:
    """Scores each stored article by the count of distinct query words it contains.

    Records every ``(query, k, filters)`` in ``.queries``. Honours ``filters.source_tags``.
    """

    def __init__(self, ws: Workspace) -> None:
        self.workspace = ws
        self.queries: list[tuple[str, int, Any]] = []

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[FakeHit]:
        self.queries.append((query, k, filters))
        words = set(_WORD.findall(query.lower()))
        tags = getattr(filters, "source_tags", None) if filters is not None else None
        scored = []
        for art in ArticleStore(self.workspace).list():
            if tags is not None and art.source_tag not in tags:
                continue
            have = set(_WORD.findall((art.title + " " + art.body).lower()))
            score = len(words & have)
            if score:
                scored.append(FakeHit(art.id, float(score), art.title, art.body[:120]))
        scored.sort(key=lambda h: (-h.score, h.article_id))
        return scored[:k]


def make_output(case_id: str, snippets: list[tuple[str, str]], *, titles: dict[str, str] | None = None,
                guidance: str = "1. Do the thing.\n2. Confirm with the customer.") -> dict[str, Any]:
    """A well-formed output citing ``(article_id, text)`` pairs (for tests)."""
    titles = titles or {}
    snips = [
        {"source_article": a, "source_title": titles.get(a, a), "text": t, "why": "supports a step"}
        for a, t in snippets
    ]
    consulted = list(dict.fromkeys(a for a, _ in snippets))
    return {"case_id": case_id, "guidance": guidance, "snippets": snips, "n_snippets": len(snips),
            "articles_consulted": consulted}
