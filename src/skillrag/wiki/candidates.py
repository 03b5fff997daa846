"""Candidate pages for an article, selected by code: BM25 (Robertson & Zaragoza, 2009) over the pages.

The LLM builder shows the model only these few pages, never the whole wiki, so the prompt stays
bounded at any corpus size. The index is rebuilt lazily after pages change (bm25s, in process).
"""

from __future__ import annotations

from collections.abc import Iterable

import bm25s

from skillrag.wiki.page import Page

__all__ = ["PageSearch"]


class PageSearch:
    """BM25 search over a changing set of pages: ``set(page)``, ``remove(id)``, ``search(text, k)``."""

    def __init__(self, pages: Iterable[Page] = ()) -> None:
        self._pages: dict[str, Page] = {p.id: p for p in pages}
        self._ids: list[str] = []
        self._bm25: bm25s.BM25 | None = None
        self._dirty = True

    def set(self, page: Page) -> None:
        self._pages[page.id] = page
        self._dirty = True

    def remove(self, page_id: str) -> None:
        if self._pages.pop(page_id, None) is not None:
            self._dirty = True

    def _refresh(self) -> None:
        self._ids = sorted(self._pages)
        self._bm25 = None
        if self._ids:
            corpus = [f"{self._pages[i].title}\n{self._pages[i].search_text()}" for i in self._ids]
            tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
            if tokens.vocab:
                self._bm25 = bm25s.BM25()
                self._bm25.index(tokens, show_progress=False)
        self._dirty = False

    def search(self, text: str, k: int) -> list[str]:
        """Up to ``k`` page ids, best BM25 score first (ties by id); pages scoring 0 are left out."""
        if self._dirty:
            self._refresh()
        if self._bm25 is None or k <= 0:
            return []
        q = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not q.vocab or len(q.ids[0]) == 0:
            return []
        n = min(k, len(self._ids))
        docs, scores = self._bm25.retrieve(q, k=n, show_progress=False)
        ranked = sorted(
            ((float(s), self._ids[int(d)]) for d, s in zip(docs[0], scores[0], strict=True) if s > 0),
            key=lambda t: (-t[0], t[1]),
        )
        return [pid for _, pid in ranked]
