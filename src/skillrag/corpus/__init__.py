"""The content layer: source articles with stable ids, the only text that may be quoted.

Long documents are also stored as section-articles (``DOC#slug``, byte-exact slices; ``split``).
"""

from skillrag.corpus.filters import SearchFilters
from skillrag.corpus.ingest import IngestReport, count_files, ingest
from skillrag.corpus.model import Article, ArticleHead, Section, SourceArticle, check_id, content_hash
from skillrag.corpus.split import split_document
from skillrag.corpus.store import ArticleStore, ScopedArticles, SourceScope, reference_tag
from skillrag.corpus.summary import summarize

__all__ = [
    "Article",
    "ArticleHead",
    "ArticleStore",
    "IngestReport",
    "ScopedArticles",
    "SearchFilters",
    "Section",
    "SourceArticle",
    "SourceScope",
    "check_id",
    "content_hash",
    "count_files",
    "ingest",
    "reference_tag",
    "split_document",
    "summarize",
]
