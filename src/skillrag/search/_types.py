"""Value objects of the search package: hits, filters and index reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Backend", "Hit", "IndexReport", "Mode", "SearchFilters"]

Backend = Literal["wiki", "direct"]
Mode = Literal["hybrid", "bm25", "dense"]


@dataclass(frozen=True)
class Hit:
    """One search result: a source article.

    ``score`` depends on the mode: the reciprocal rank fusion score for ``hybrid``, the BM25 score for
    ``bm25``, the cosine similarity (−1..1) for ``dense``; with the ``wiki`` backend it is the reciprocal
    rank fusion of the best citing page's rank and the article's own rank (``search.wiki_order:
    fused``, the default) or the score of the best-ranked page citing it (``page``). ``page_ids`` names the navigation pages that led to the
    article (empty for the ``direct`` backend). ``preview`` is the start of the body, whitespace
    collapsed.
    """

    article_id: str
    score: float
    title: str
    preview: str
    page_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict (``page_ids`` as a list)."""
        return {"article_id": self.article_id, "score": self.score, "title": self.title,
                "preview": self.preview, "page_ids": list(self.page_ids)}


class SearchFilters(BaseModel):
    """Restrict results by article metadata. ``None`` (or empty) means no restriction on that field.

    An article passes when its ``source_tag`` is one of ``source_tags`` **and** its ``source_path``
    starts with one of ``path_prefixes``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    source_tags: list[str] | None = None
    path_prefixes: list[str] | None = None

    def is_empty(self) -> bool:
        return not self.source_tags and not self.path_prefixes

    def accepts(self, source_tag: str, source_path: str) -> bool:
        """True when an article with this tag and path passes the filter."""
        if self.source_tags and source_tag not in self.source_tags:
            return False
        return not self.path_prefixes or any(source_path.startswith(p) for p in self.path_prefixes)


@dataclass
class IndexReport:
    """What one ``build_index`` call did, per backend.

    ``embedded``: passages sent to the embedder (cache misses); ``reused``: passages whose vectors
    came from the cache; ``seconds``: wall time. ``up_to_date`` is True when nothing had changed and
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
