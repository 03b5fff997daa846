"""The one retrieval tool: BM25 + dense retrieval fused by reciprocal rank fusion, over navigation
pages (``wiki`` backend) or raw articles (``direct`` backend), returning source-article ids.

    >>> build_index(ws)                       # once, and after every ingest (incremental)
    >>> r = open_retriever(ws)
    >>> r.search("close my account", k=10)
    [Hit(article_id=..., score=..., title=..., preview=..., page_ids=(), relevance=1.0, bm25_rank=1, ...)]
    >>> r.search_pages("close my account", k=3)   # wiki backend: ranked navigation pages
    >>> r.read_page(page_id)                      # one page whole
"""

from skillrag.search._items import Item, PageSource
from skillrag.search._types import (
    Backend,
    Hit,
    IndexReport,
    Mode,
    PageArticle,
    PageHit,
    PageView,
    SearchFilters,
)
from skillrag.search.embedders import EMBEDDERS, Embedder, get_embedder
from skillrag.search.fusion import reciprocal_rank_fusion
from skillrag.search.index import build_index, read_manifest
from skillrag.search.retriever import BACKENDS, MODES, Retriever, open_retriever, read_page

__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "MODES",
    "Backend",
    "Embedder",
    "Hit",
    "IndexReport",
    "Item",
    "Mode",
    "PageArticle",
    "PageHit",
    "PageSource",
    "PageView",
    "Retriever",
    "SearchFilters",
    "build_index",
    "get_embedder",
    "open_retriever",
    "read_manifest",
    "read_page",
    "reciprocal_rank_fusion",
]
