"""``SearchFilters``: restrict search results by article metadata.

A type of the content layer, not of the search package: a scope (``corpus.ScopedArticles``) narrows a
search's filters to the source tags it allows, and the search package (above) applies them. It is
re-exported by ``skillrag.search``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["SearchFilters"]


class SearchFilters(BaseModel):
    """Restrict results by article metadata. ``None`` (or empty) means no restriction on that field.

    An article passes when every given field accepts it: its ``source_tag`` is one of ``source_tags``,
    its ``source_path`` starts with one of ``path_prefixes``, its title starts with one of
    ``title_prefixes`` and contains one of ``title_contains`` (both case-insensitive, whitespace
    collapsed: ``title_contains=["internal"]`` finds "Internal: wire limits" and "Wire limits
    (Internal)"), its id starts with one of ``id_prefixes`` (case-sensitive, as ids are), its
    ``category`` is one of ``categories`` (case-insensitive, whole: ``"checking accounts"`` is not
    ``"business checking accounts"``) and its ``customer_type`` one of ``customer_types``; an article
    whose customer type is not known (a general family: it applies to every customer) passes every
    ``customer_types`` filter. Category and customer type are the article's facets
    (``skillrag.wiki.families.article_facets``), recorded on the index's items.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    source_tags: list[str] | None = None
    path_prefixes: list[str] | None = None
    title_prefixes: list[str] | None = None
    title_contains: list[str] | None = None
    id_prefixes: list[str] | None = None
    categories: list[str] | None = None
    customer_types: list[str] | None = None

    def is_empty(self) -> bool:
        return not (self.source_tags or self.path_prefixes or self.title_prefixes or self.title_contains
                    or self.id_prefixes or self.categories or self.customer_types)

    def accepts(self, source_tag: str, source_path: str, title: str = "", article_id: str = "", *,
                category: str = "", customer_type: str = "") -> bool:
        """True when an article with this tag, path, title, id and facets passes the filter."""
        if self.source_tags and source_tag not in self.source_tags:
            return False
        if self.path_prefixes and not any(source_path.startswith(p) for p in self.path_prefixes):
            return False
        flat = _flat(title)
        if self.title_prefixes and not any(flat.startswith(_flat(p)) for p in self.title_prefixes):
            return False
        if self.title_contains and not any(_flat(p) in flat for p in self.title_contains):
            return False
        if self.categories and _flat(category) not in {_flat(c) for c in self.categories}:
            return False
        if self.customer_types and customer_type and _flat(customer_type) not in {
                _flat(c) for c in self.customer_types}:
            return False
        return not self.id_prefixes or any(article_id.startswith(p) for p in self.id_prefixes)

    def accepts_item(self, item: dict[str, object]) -> bool:
        """``accepts`` for an index item record (``id, title, source_tag, source_path, category,
        customer_type``)."""
        return self.accepts(str(item.get("source_tag", "")), str(item.get("source_path", "")),
                            str(item.get("title", "")), str(item.get("id", "")),
                            category=str(item.get("category", "") or ""),
                            customer_type=str(item.get("customer_type", "") or ""))

    def describe(self) -> dict[str, list[str]]:
        """The fields that restrict something, for tool results."""
        return {k: list(v) for k, v in self.model_dump().items() if v}

    def line(self) -> str:
        """The restriction in a few words, as a page list that it cut says (``id_prefixes=doc_a_, doc_b_;
        categories=credit cards``)."""
        return "; ".join(f"{k}={', '.join(v)}" for k, v in self.describe().items())


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()
