"""Value objects of the search package: hits, page hits and index reports (``SearchFilters`` lives below,
in ``skillrag.corpus.filters``, since the corpus's scopes narrow them; it is re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from skillrag.corpus.filters import SearchFilters

__all__ = ["Backend", "Hit", "IndexReport", "Mode", "PageArticle", "PageHit", "PageView", "SearchFilters"]

Backend = Literal["wiki", "direct"]
Mode = Literal["hybrid", "bm25", "dense"]


@dataclass(frozen=True)
class Hit:
    """One search result: a source article.

    ``score`` is the ranking score and depends on the mode: the reciprocal rank fusion score for
    ``hybrid``, the BM25 score for ``bm25``, the cosine similarity (−1..1) for ``dense``; with the
    ``wiki`` backend it is the reciprocal rank fusion of the best citing page's rank and the article's
    own rank (``search.wiki_order: fused``, the default) or the score of the best-ranked page citing it
    (``page``). Hits are ordered by it.

    ``relevance`` (0–1, the first hit is 1.0) says the same on a readable scale: the hit's score above
    the least a candidate can score (0 for a fused or BM25 score, −1 for a cosine) as a fraction of the
    first hit's (``skillrag.search._ranked.relative_scores``). It follows the order exactly: a hit ranked
    below another on a lower score has a lower relevance, and two hits share a value only when their
    scores tie (3 decimals, more where 3 would show two different scores as one). In ``hybrid`` mode
    (fused ranks, ``rrf_k`` 60) 0.5 is about "ranked first by one retriever, not at all by the other".
    ``bm25_rank`` and ``dense_rank`` are the article's 1-based ranks under BM25 and dense retrieval among
    the candidates (``None`` when that retriever did not rank it: no query term in common, or not part
    of the mode).

    ``preview`` is the passage of the body that best matches the query (BM25 over the article's
    passages), whitespace collapsed, at most ~280 characters and never cut inside a word (``…`` marks
    a cut); ``section`` is the heading of the section holding it ("" before the first heading).
    ``page_ids`` names the navigation pages that led to the article, best-ranked first, at most
    ``retriever.MAX_HIT_PAGES`` (3) of them (empty for the ``direct`` backend); each page lists every
    article it cites (``PageHit.articles``, ``PageView.articles``).

    ``category`` and ``customer_type`` are the article's facets (``skillrag.wiki.families.article_facets``:
    its product family's category, ``"business checking accounts"``, and ``"business"`` / ``"personal"``),
    "" where the corpus does not say; ``SearchFilters.categories`` / ``customer_types`` filter on them.
    """

    article_id: str
    score: float
    title: str
    preview: str
    page_ids: tuple[str, ...] = ()
    relevance: float = 1.0
    bm25_rank: int | None = None
    dense_rank: int | None = None
    section: str = ""
    category: str = ""
    customer_type: str = ""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict (``page_ids`` as a list; an unknown facet as None)."""
        return {"article_id": self.article_id, "score": self.score, "relevance": self.relevance,
                "bm25_rank": self.bm25_rank, "dense_rank": self.dense_rank, "title": self.title,
                "section": self.section, "preview": self.preview, "page_ids": list(self.page_ids),
                "category": self.category or None, "customer_type": self.customer_type or None}


@dataclass(frozen=True)
class PageArticle:
    """An article a navigation page cites: ``id``, ``title`` and the page's one-line ``summary`` of
    it (empty when the page gives none)."""

    id: str
    title: str
    summary: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"id": self.id, "title": self.title}
        if self.summary:
            out["summary"] = self.summary
        return out


@dataclass(frozen=True)
class PageHit:
    """A navigation page ranked for a query (``wiki`` backend): ``page_id``, ``kind`` (``entity``,
    ``aspect`` or ``topic``), ``title``, ``intent``, ``relevance`` (0–1, from the page ranking's scores as
    for ``Hit``) and the ``articles`` it cites that pass the filters, best-matching the query first (the
    direct index's ``norm`` of each; with ``wiki_order: page`` in page order), with their titles.

    ``listed``: how many articles the page lists (as the reader's scope sees it, before filters);
    ``cut_by``: the filters that left out some of them (``SearchFilters.line``), "" when none did, so a
    list shorter than the page is never silent. ``category`` / ``customer_type``: the facets every
    article the page lists shares ("" where they differ or are not known)."""

    page_id: str
    kind: str
    title: str
    intent: str
    relevance: float
    articles: tuple[PageArticle, ...] = ()
    listed: int = 0
    cut_by: str = ""
    category: str = ""
    customer_type: str = ""

    def to_dict(self) -> dict[str, object]:
        """Every field: the page's whole (filtered) article list with summaries, ``shown`` / ``of`` (its
        length and ``listed``) and ``cut_by`` (None when nothing cut it)."""
        return {"page_id": self.page_id, "kind": self.kind, "title": self.title, "intent": self.intent,
                "relevance": self.relevance, "category": self.category or None,
                "customer_type": self.customer_type or None, "articles": [a.to_dict() for a in self.articles],
                "shown": len(self.articles), "of": max(self.listed, len(self.articles)),
                "cut_by": f"filter {self.cut_by}" if self.cut_by else None}


@dataclass(frozen=True)
class PageView:
    """One navigation page read whole: what it solves and does not, its procedure steps (each with
    its typed links as ``(type, article id)``) and every article it cites with its title."""

    page_id: str
    kind: str
    title: str
    intent: str
    solves: tuple[str, ...] = ()
    does_not_solve: tuple[str, ...] = ()
    steps: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    articles: tuple[PageArticle, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"page_id": self.page_id, "kind": self.kind, "title": self.title, "intent": self.intent,
                "solves": list(self.solves), "does_not_solve": list(self.does_not_solve),
                "procedure": [{"text": text, "links": [{"type": t, "article_id": a} for t, a in links]}
                              for text, links in self.steps],
                "articles": [a.to_dict() for a in self.articles]}


@dataclass
class IndexReport:
    """What one ``build_index`` call did, per backend.

    ``embedded``: passages sent to the embedder (not yet in the vector store); ``reused``: passages
    whose vectors came from the vector store (``skillrag.search.vectors``); ``seconds``: wall time. ``up_to_date`` is True when nothing had changed and
    the index was left as it was.
    """

    backend: str
    items: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    passages: int = 0
    embedded: int = 0
    reused: int = 0
    seconds: float = 0.0
    up_to_date: bool = False
    embedder_id: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"backend": self.backend, "items": self.items, "added": len(self.added),
                "changed": len(self.changed), "removed": len(self.removed), "passages": self.passages,
                "embedded": self.embedded, "reused": self.reused, "seconds": round(self.seconds, 3),
                "up_to_date": self.up_to_date, "embedder_id": self.embedder_id}
