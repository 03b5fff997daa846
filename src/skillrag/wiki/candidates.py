"""Candidate pages for an article, selected by code: Okapi BM25 (Robertson & Zaragoza, 2009) over the pages.

The LLM builder shows the model only these few pages, never the whole wiki, so the prompt stays
bounded at any corpus size. Queries keep their 48 rarest known terms. The index is incremental (postings and document frequencies updated on
every page write), because the builder changes one page per article and a full re-index per article
would cost O(pages) each time. Terms come from the text layer's analyzer (``skillrag.text.Analyzer``:
lower-case word tokens, the English stop words of ``bm25s``, no stemming); scores are the one BM25
(``skillrag.text.BM25``) with the workspace's ``search.bm25_k1`` and ``search.bm25_b``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from skillrag.text import BM25, Analyzer
from skillrag.wiki.families import group_key
from skillrag.wiki.page import Page

__all__ = ["PageSearch"]

MAX_QUERY_TERMS = 48  # distinct query terms scored, rarest first


_ANALYZER = Analyzer("en", None)


def _tokens(text: str) -> list[str]:
    return _ANALYZER.terms(text)


class PageSearch:
    """Incremental BM25 search over pages: ``set(page)``, ``remove(id)``, ``search(text, k)``, plus
    ``citing(article_id)`` and ``siblings(article_id)`` from reverse maps kept up to date on every change."""

    def __init__(self, pages: Iterable[Page] = (), *, bm25: BM25 | None = None) -> None:
        #: the workspace's BM25 parameters (``BM25.of(ws.config.search)``; default ``BM25()``)
        self.bm25 = bm25 or BM25()
        self._pages: dict[str, Page] = {}
        self._tf: dict[str, Counter[str]] = {}
        self._len: dict[str, int] = {}
        self._postings: dict[str, set[str]] = {}
        self._total_len = 0
        self._cites: dict[str, set[str]] = {}
        self._groups: dict[str, set[str]] = {}
        for p in pages:
            self.set(p)

    def set(self, page: Page) -> None:
        self.remove(page.id)
        self._pages[page.id] = page
        tf = Counter(_tokens(f"{page.title}\n{page.search_text()}"))
        self._tf[page.id] = tf
        self._len[page.id] = n = sum(tf.values())
        self._total_len += n
        for t in tf:
            self._postings.setdefault(t, set()).add(page.id)
        for aid in page.article_ids():
            self._cites.setdefault(aid, set()).add(page.id)
            self._groups.setdefault(group_key(aid), set()).add(page.id)

    def remove(self, page_id: str) -> None:
        old = self._pages.pop(page_id, None)
        if old is None:
            return
        for t in self._tf.pop(page_id):
            self._postings[t].discard(page_id)
        self._total_len -= self._len.pop(page_id)
        for aid in old.article_ids():
            self._cites.get(aid, set()).discard(page_id)
            self._groups.get(group_key(aid), set()).discard(page_id)

    def siblings(self, article_id: str) -> list[str]:
        """Ids of the pages citing an article of the same id stem (``group_key``), sorted."""
        return sorted(self._groups.get(group_key(article_id), ()))

    def citing(self, article_id: str) -> list[str]:
        """Ids of the pages that cite ``article_id``, sorted."""
        return sorted(self._cites.get(article_id, ()))

    def search(self, text: str, k: int) -> list[str]:
        """Up to ``k`` page ids, best BM25 score first (ties by id); pages scoring 0 are left out."""
        n = len(self._pages)
        if not n or k <= 0:
            return []
        avg = self._total_len / n or 1.0
        scores: dict[str, float] = {}
        terms = [(len(self._postings[t]), t) for t in set(_tokens(text)) if self._postings.get(t)]
        for df, t in sorted(terms)[:MAX_QUERY_TERMS]:  # the rarest terms carry the match
            docs = self._postings[t]
            idf = float(self.bm25.idf(df, n))
            for d in docs:
                scores[d] = scores.get(d, 0.0) + idf * self.bm25.weight(self._tf[d][t], self._len[d], avg)
        ranked = sorted(((s, d) for d, s in scores.items() if s > 0), key=lambda t: (-t[0], t[1]))
        return [d for _, d in ranked[:k]]
