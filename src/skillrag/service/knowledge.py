"""The service's access to the articles: scoped search and reads, plus the operator's article lookup.

A chat turn never reads articles directly: it asks ``Knowledge.scoped(scope)`` for a
``ScopedKnowledge`` and searches, reads and checks quotes only through it. The scope
(``corpus.SourceScope``: the skill's ``allowed_sources`` and its own reference notes) is the same one
the skill tools use (``skill.SkillTools.articles``), and for a workspace the enforcement is the same
code: ``corpus.ScopedArticles``. So ``allowed_sources`` holds for search, ``read_article`` and quote
checks on every path.

``WorkspaceKnowledge`` is the real backend (``skillrag.search.open_retriever`` + ``ArticleStore``);
``skillrag.service.testing.MemoryKnowledge`` is the in-memory test double (it applies the same
``SourceScope.allows``).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from skillrag.corpus import ScopedArticles, SourceScope
from skillrag.skill.contract import locate

__all__ = ["Knowledge", "ScopedKnowledge", "WorkspaceKnowledge", "verify_snippet"]


@runtime_checkable
class ScopedKnowledge(Protocol):
    """Search and read the articles of one scope (``.scope``).

    ``search`` returns hits with ``article_id, score, title`` (``skillrag.search.Hit``), best first,
    all in scope; ``article`` returns an object with ``id, title, body`` (and ``url``), or raises
    ``ArticleNotFound`` (unknown, or outside the scope) / ``InvalidIdError``.
    """

    scope: SourceScope

    def search(self, query: str, *, k: int, backend: str | None, mode: str | None) -> list[Any]: ...

    def article(self, article_id: str) -> Any: ...


@runtime_checkable
class Knowledge(Protocol):
    """Where a chat's articles come from.

    ``scoped(scope)`` is the only way a chat turn reaches articles. ``article(id)`` is the unscoped
    lookup behind ``GET /articles/{id}`` (the operator's read, token-protected). A backend may also
    offer ``ready(backend, mode)``, called before a turn streams, to fail early (``IndexStateError`` ->
    HTTP 503).
    """

    def scoped(self, scope: SourceScope) -> ScopedKnowledge: ...

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

    def scoped(self, scope: SourceScope) -> _WorkspaceScoped:
        return _WorkspaceScoped(self, self.store.scoped(scope))

    def article(self, article_id: str) -> Any:
        return self.store.get(article_id)


class _WorkspaceScoped:
    """``ScopedKnowledge`` of a workspace: every call goes through ``corpus.ScopedArticles``."""

    def __init__(self, parent: WorkspaceKnowledge, articles: ScopedArticles) -> None:
        self._parent = parent
        self._articles = articles
        self.scope = articles.scope

    def search(self, query: str, *, k: int, backend: str | None, mode: str | None) -> list[Any]:
        return self._articles.search(self._parent._retriever(backend, mode), query, k)

    def article(self, article_id: str) -> Any:
        return self._articles.get(article_id)


def verify_snippet(snippet: str, body: str) -> tuple[int, int] | None:
    """Where ``snippet`` occurs in ``body`` under the evidence contract (``skillrag.skill.contract.locate``:
    offsets in the raw body), or None when it is not a verbatim quote of it."""
    return locate(snippet, body)
