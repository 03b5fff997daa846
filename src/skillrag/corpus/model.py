"""The content layer's data model: source articles, the only text that may ever be quoted."""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from skillrag.workspace.ids import ID_RULES, check_id

__all__ = ["ID_PATTERN", "Article", "Section", "SourceArticle", "check_id", "content_hash"]

#: A plain article identifier: letters, digits and ``_ . - + ( ) : #``; no path separators (``..`` is
#: refused by ``check_id``). ``#`` joins a split document's id and a section slug (``manual#roaming``).
#: Anchored with ``\A``/``\Z``, so ``.match`` and ``.fullmatch`` agree: ``"ok\n"`` is not an id. The
#: rule, and ``check_id`` for every other kind of id (case, page, skill ...), live in
#: ``skillrag.workspace.ids``.
ID_PATTERN: re.Pattern[str] = ID_RULES["article"].regex


def content_hash(body: str) -> str:
    """sha256 hex digest of the UTF-8 body."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class Section(BaseModel):
    """A heading-delimited part of an article: ``body[start:end]``, offsets in characters."""

    model_config = ConfigDict(frozen=True)

    heading: str
    level: int = Field(ge=1, le=6)
    start: int = Field(ge=0, description="Offset of the heading line, in characters.")
    end: int = Field(ge=0, description="Offset one past the section's last character.")


class ArticleHead(NamedTuple):
    """A stored article without its text (``ArticleStore.heads``): what places it (id, title, source,
    the document it was split from) and the hash of its body. Enough for a search index's item hash and
    for the facets (``wiki.families.article_facets`` reads ids, titles, parents, heading paths and
    offsets), read at a fraction of the cost of whole articles."""

    id: str
    title: str
    content_hash: str
    source_path: str
    source_tag: str
    parent: str | None
    heading_path: list[str]
    parent_offset: int


class SourceArticle(BaseModel):
    """What a loader yields: one article as found in a source file."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    body: str
    source_path: str = Field(description="File the article came from (relative to the ingest root).")
    source_tag: str = Field("", description="Tag of the source (ingest root name or --tag), for filters.")
    parent: str | None = Field(None, description="Id of the document this section was split from.")
    heading_path: tuple[str, ...] = Field((), description="Headings from the document's top down to this section.")
    parent_offset: int = Field(0, ge=0, description="Where the body starts in the parent's body, in characters.")
    url: str | None = Field(None, description="Canonical http(s) URL of the source (front matter `url`).")


class Article(BaseModel):
    """A stored article. ``body`` is byte-identical to the source content (HTML: its Markdown).

    A long document is stored whole *and* as section-articles (``skillrag.corpus.split``): each section
    has ``parent`` (the document's id), ``heading_path`` and a body that is the byte-exact slice
    ``parent.body[parent_offset : parent_offset + len(body)]``, so a quote checked against the section
    is a quote of the document. Search and the navigation layer use the sections, not the document.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    body: str
    content_hash: str
    source_path: str
    source_tag: str = ""
    sections: list[Section] = Field(default_factory=list)
    status: str = Field("active", description="`active` or `removed` (gone from its source).")
    changed: bool = Field(False, description="Body changed at the last ingest; dependants must rebuild.")
    parent: str | None = Field(
        None, description="Id of the whole document this section-article was split from (None: not a section)."
    )
    heading_path: list[str] = Field(
        default_factory=list, description="Headings from the document's top down to this section (sections only)."
    )
    parent_offset: int = Field(
        0, ge=0, description="Where this section's body starts in the parent's body, in characters (sections only)."
    )
    url: str | None = Field(None, description="Canonical http(s) URL of the source; citations deep-link to it.")
    skill: str | None = Field(
        None, description="The skill whose `references/` bundle this note came from; only that skill may read it. "
        "None = the shared corpus."
    )

    @property
    def source_type(self) -> str:
        """``"reference"`` for a skill's curated note, ``"corpus"`` otherwise."""
        return "reference" if self.skill else "corpus"

    def section(self, heading: str) -> str:
        """Text of the first section whose heading matches (case-insensitive); raises ``KeyError``."""
        want = heading.strip().lower()
        for sec in self.sections:
            if sec.heading.strip().lower() == want:
                return self.body[sec.start : sec.end]
        raise KeyError(heading)
