"""The service's access to the articles: one search call and one article lookup.

``WorkspaceKnowledge`` is the real backend (``skillrag.search.open_retriever`` + ``ArticleStore``);
``skillrag.service.testing.MemoryKnowledge`` is the in-memory test double.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from skillrag.skill.contract import locate

__all__ = ["Knowledge", "WorkspaceKnowledge", "verify_snippet"]


@runtime_checkable
class Knowledge(Protocol):
    """Search and read articles.

    ``search`` returns hits with ``article_id, score, title`` (``skillrag.search.Hit``), best first,
    restricted to ``source_tags`` when given; ``article`` returns an object with ``id, title, body``
    or raises ``ArticleNotFound`` / ``InvalidIdError``. A backend may also offer ``ready(backend, mode)``,
    called before a turn streams, to fail early (``IndexStateError`` -> HTTP 503).
    """

    def search(
        self, query: str, *, k: int, backend: str | None, mode: str | None, source_tags: list[str] | None
    ) -> list[Any]: ...

    def article(self, article_id: str) -> Any: ...


class WorkspaceKnowledge:
    """``Knowledge`` over a workspace's search index and article store (retrievers cached per backend/mode).

    Raises ``IndexStateError`` when the index is missing or stale (HTTP 503).
    """

    def __init__(self, workspace: Any) -> None:
        from skillrag.corpus import ArticleStore

        self.workspace = workspace
        self.store = ArticleStore(workspace)
        self._retrievers: dict[tuple[str | None, str | None], Any] = {}
        self._lock = threading.Lock()

    def _retriever(self, backend: str | None, mode: str | None) -> Any:
        from skillrag.search import open_retriever

        key = (backend, mode)
        with self._lock:
            if key not in self._retrievers:
                self._retrievers[key] = open_retriever(self.workspace, backend=backend, mode=mode)
            return self._retrievers[key]

    def ready(self, backend: str | None, mode: str | None) -> None:
        """Open (and cache) the retriever now; raises ``IndexStateError`` if the index is missing or stale."""
        self._retriever(backend, mode)

    def search(
        self, query: str, *, k: int, backend: str | None, mode: str | None, source_tags: list[str] | None
    ) -> list[Any]:
        from skillrag.search import SearchFilters

        filters = SearchFilters(source_tags=list(source_tags), path_prefixes=None) if source_tags else None
        return list(self._retriever(backend, mode).search(query, k=k, filters=filters))

    def article(self, article_id: str) -> Any:
        return self.store.get(article_id)


def verify_snippet(snippet: str, body: str) -> tuple[int, int] | None:
    """Where ``snippet`` occurs in ``body`` under the evidence contract (``skillrag.skill.contract.locate``:
    offsets in the raw body), or None when it is not a verbatim quote of it."""
    return locate(snippet, body)
