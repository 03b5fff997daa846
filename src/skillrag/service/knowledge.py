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

``best_passages`` picks the passages of a body (or a web page's text) that a question's key stems
match, for the answer without a model: whole sentences and table rows of the text layer
(``skillrag.text.units``), never a fragment cut at "$5.00" or "e.g."; ``key_terms`` and ``stems``
are the text layer's analyzer with the long English stop list.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from skillrag.corpus import Article, ScopedArticles, SourceScope
from skillrag.errors import IndexStateError
from skillrag.skill.contract import locate
from skillrag.text import Analyzer, units, with_antecedents

__all__ = ["Knowledge", "Passage", "ScopedKnowledge", "WorkspaceKnowledge", "best_passages", "key_terms", "stems",
           "verify_snippet"]

_WORDS = Analyzer("en_plus", None)
_STEMS = Analyzer("en_plus", "english")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def key_terms(text: str) -> list[str]:
    """Distinct words of ``text`` that are not stop words (``skillrag.text.STOPWORDS_EN_PLUS``), lower
    case, in first-seen order."""
    return list(dict.fromkeys(_WORDS.terms(text or "")))


def stems(text: str) -> set[str]:
    """Snowball stems of the key terms of ``text``."""
    return set(_STEMS.terms(text or ""))


@dataclass(frozen=True)
class Passage:
    """``body[start:end]`` (``text``) with the number of query stems it contains (``overlap``)."""

    start: int
    end: int
    text: str
    overlap: int


def _cut(body: str, start: int, end: int, max_chars: int) -> int:
    """``end``, or the last word boundary within ``max_chars`` of ``start`` when the span is longer."""
    if end - start <= max_chars:
        return end
    stop = body.rfind(" ", start + 1, start + max_chars + 1)
    return (stop if stop > start else start + max_chars)


def best_passages(body: str, query: str, *, min_chars: int = 40, max_chars: int = 400, n: int = 1) -> list[Passage]:
    """The ``n`` passages of ``body`` sharing the most query stems, best first (ties: earlier first).

    A passage is a sentence or a table row (``skillrag.text.units``: no heading; a sentence that
    points back, "It is waived for students.", joined to the one before it:
    ``skillrag.text.with_antecedents``), widened with the sentences that follow it in the same
    paragraph or list (no blank line between) until it has ``min_chars`` characters, and never past
    ``max_chars`` (a single sentence longer than that is cut
    at a word boundary); its text is always exactly ``body[start:end]``. Passages with no overlap are
    not returned.
    """
    want = stems(query)
    if not want or not body:
        return []
    groups: list[list[tuple[int, int]]] = []  # units of one paragraph or list (no blank line between)
    for u in units(body):
        if groups and not _BLANK_LINE.search(body, groups[-1][-1][1], u.start):
            groups[-1].append((u.start, u.end))
        else:
            groups.append([(u.start, u.end)])
    spans = [(a, b, g) for g, group in enumerate(groups) for a, b in with_antecedents(body, group, max_chars)]
    found: list[Passage] = []
    floor = min(min_chars, len(body.strip()))
    for i, (s, e, g) in enumerate(spans):
        j = i
        while e - s < min_chars and j + 1 < len(spans) and spans[j + 1][2] == g and spans[j + 1][1] - s <= max_chars:
            j += 1
            e = spans[j][1]
        e = _cut(body, s, e, max_chars)
        text = body[s:e].rstrip()
        if len(text) < floor:
            continue
        overlap = len(want & stems(text))
        if overlap:
            found.append(Passage(s, s + len(text), text, overlap))
    found.sort(key=lambda p: (-p.overlap, p.start))
    out: list[Passage] = []
    for p in found:
        if all(p.end <= q.start or p.start >= q.end for q in out):
            out.append(p)
        if len(out) == n:
            break
    return out


@runtime_checkable
class ScopedKnowledge(Protocol):
    """Search and read the articles of one scope (``.scope``).

    ``search`` returns hits with ``article_id, score, title`` (``skillrag.search.Hit``), best first,
    all in scope; ``article`` returns an object with ``id, title, body`` (and ``url``), or raises
    ``ArticleNotFound`` (unknown, or outside the scope) / ``InvalidIdError``.
    """

    scope: SourceScope

    def search(self, query: str, *, k: int, backend: str | None, mode: str | None) -> list[Any]: ...

    def article(self, article_id: str) -> Article: ...


@runtime_checkable
class Knowledge(Protocol):
    """Where a chat's articles come from.

    ``scoped(scope)`` is the only way a chat turn reaches articles. ``article(id)`` is the unscoped
    lookup behind ``GET /articles/{id}`` (the operator's read, token-protected). A backend may also
    offer ``ready(backend, mode)``, called before a turn streams, to fail early (``IndexStateError`` ->
    HTTP 503).
    """

    def scoped(self, scope: SourceScope) -> ScopedKnowledge: ...

    def article(self, article_id: str) -> Article: ...


class _Open:
    """One cached retriever and the index stamp (``_index_stamp``) it was opened at."""

    __slots__ = ("retriever", "stamp")

    def __init__(self, retriever: Any, stamp: Any) -> None:
        self.retriever = retriever
        self.stamp = stamp


def _index_stamp(workspace: Any, backend: str | None) -> tuple[Any, ...] | None:
    """What changes when ``skillrag index`` rewrites the stored index of ``backend`` (default: the
    configured one): for the ``embedded`` engine the ``(inode, mtime ns, size)`` of each
    ``manifest.json`` it reads (a build swaps in a new folder, so a new file; the ``wiki`` backend also
    reads the ``direct`` index). Two ``stat`` calls, no reads. None for an engine whose index is not a
    file here (``milvus``): its retriever notices a rebuild itself (``EngineIndex.check_current``)."""
    from skillrag.search.engines.embedded import index_dir

    s = workspace.config.search
    if s.engine != "embedded":
        return None
    backend = backend or s.backend
    out: list[Any] = []
    for b in dict.fromkeys((backend, "direct") if backend == "wiki" else (backend,)):
        try:
            st = (index_dir(workspace, b) / "manifest.json").stat()
        except OSError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(out)


class WorkspaceKnowledge:
    """``Knowledge`` over a workspace's search index and article store (retrievers cached per backend/mode).

    Raises ``IndexStateError`` when the index is missing or stale (HTTP 503). A cached retriever is
    reopened (with the same embedder, so the model is not loaded again) when ``skillrag index``
    rewrote the index since it was opened: the ``embedded`` engine's manifest files are compared by
    ``stat`` on each use (``_index_stamp``); on another engine a search that finds the index changed
    (``IndexStateError``) reopens it once and retries. So "run ``skillrag index``" is enough while the
    service runs; no restart. Thread-safe: one lock guards the cache and the reopening.
    """

    def __init__(self, workspace: Any) -> None:
        from skillrag.corpus import ArticleStore

        self.workspace = workspace
        self.store = ArticleStore(workspace)
        self._retrievers: dict[tuple[str | None, str | None], _Open] = {}
        self._lock = threading.Lock()

    def _retriever(self, backend: str | None, mode: str | None, *, replace: Any = None) -> Any:
        """The retriever for ``(backend, mode)``: the cached one while the index on disk is the one it
        opened, else a newly opened one. ``replace``: a retriever found out of date (reopened unless
        another thread did so already)."""
        from skillrag.search import open_retriever

        key = (backend, mode)
        stamp = _index_stamp(self.workspace, backend)
        with self._lock:
            cached = self._retrievers.get(key)
            if cached is not None and cached.stamp == stamp and (replace is None or cached.retriever is not replace):
                return cached.retriever
            old = cached.retriever if cached is not None else None
            fresh = open_retriever(self.workspace, backend=backend, mode=mode,
                                   embedder=old.embedder if old is not None else None)
            self._retrievers[key] = _Open(fresh, stamp)
        if old is not None:
            old.close()  # its store connection; a search still running on it reopens that on demand
        return fresh

    def search(self, backend: str | None, mode: str | None, run: Any) -> Any:
        """``run(retriever)`` with the current retriever; on an engine without a file stamp, an
        ``IndexStateError`` (the index was rebuilt since it was opened) reopens it and runs once more."""
        r = self._retriever(backend, mode)
        try:
            return run(r)
        except IndexStateError:
            if _index_stamp(self.workspace, backend) is not None:
                raise  # embedded: the stamp was current, so the index itself is stale or damaged
            return run(self._retriever(backend, mode, replace=r))

    def ready(self, backend: str | None, mode: str | None) -> None:
        """Open (and cache) the retriever now; raises ``IndexStateError`` if the index is missing or stale
        (``Retriever.check_fresh``: one ``PRAGMA data_version`` when the store did not change)."""
        self.search(backend, mode, lambda r: r.check_fresh())

    def scoped(self, scope: SourceScope) -> _WorkspaceScoped:
        return _WorkspaceScoped(self, self.store.scoped(scope))

    def article(self, article_id: str) -> Article:
        return self.store.get(article_id)


class _WorkspaceScoped:
    """``ScopedKnowledge`` of a workspace: every call goes through ``corpus.ScopedArticles``."""

    def __init__(self, parent: WorkspaceKnowledge, articles: ScopedArticles) -> None:
        self._parent = parent
        self._articles = articles
        self.scope = articles.scope

    def search(self, query: str, *, k: int, backend: str | None, mode: str | None) -> list[Any]:
        return self._parent.search(backend, mode, lambda r: self._articles.search(r, query, k))

    def article(self, article_id: str) -> Article:
        return self._articles.get(article_id)


def verify_snippet(snippet: str, body: str) -> tuple[int, int] | None:
    """Where ``snippet`` occurs in ``body`` under the evidence contract (``skillrag.skill.contract.locate``:
    offsets in the raw body), or None when it is not a verbatim quote of it."""
    return locate(snippet, body)
