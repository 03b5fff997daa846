"""The one retrieval tool: BM25 + dense retrieval fused by reciprocal rank fusion, over navigation
pages (``wiki`` backend) or raw articles (``direct`` backend), returning source-article ids.

    >>> build_index(ws)                       # once, and after every ingest (incremental)
    >>> open_retriever(ws).search("close my account", k=10)
    [Hit(article_id=..., score=..., title=..., preview=..., page_ids=())]
"""

from skillrag.search._items import Item, PageSource
from skillrag.search._types import Backend, Hit, IndexReport, Mode, SearchFilters
from skillrag.search.embedders import EMBEDDERS, Embedder, get_embedder
from skillrag.search.fusion import reciprocal_rank_fusion
from skillrag.search.index import build_index, read_manifest
from skillrag.search.retriever import BACKENDS, MODES, Retriever, open_retriever
from skillrag.search.tokenize import Analyzer

__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "MODES",
    "Analyzer",
    "Backend",
    "Embedder",
    "Hit",
    "IndexReport",
    "Item",
    "Mode",
    "PageSource",
    "Retriever",
    "SearchFilters",
    "build_index",
    "get_embedder",
    "open_retriever",
    "read_manifest",
    "reciprocal_rank_fusion",
]
