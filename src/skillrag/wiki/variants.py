"""Layer variants for the ablations of paper table 3, applied by the same code to any builder's pages.

``full``          intent fields, links per step, merged pages (the default)
``no-merge``      one page per article: no merged entities (a grouping choice, made by the builder)
``no-intent``     raw procedural text of the sources in place of the intent / solves / does-not-solve fields
``pooled-links``  links pooled at page level (``## Links``) instead of placed on each step
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from skillrag.corpus import Article
from skillrag.wiki.page import Link, Page, Step

__all__ = ["VARIANTS", "Variant", "apply_variant", "raw_procedure_text"]

Variant = Literal["full", "no-merge", "no-intent", "pooled-links"]
VARIANTS: tuple[str, ...] = ("full", "no-merge", "no-intent", "pooled-links")

_MD = re.compile(r"^#{1,6}\s+.*$|[*_`>|]", re.MULTILINE)


def raw_procedure_text(articles: list[Article], max_chars: int = 600) -> str:
    """The sources' own text, markup and headings stripped, cut to ``max_chars`` characters."""
    per = max(80, max_chars // max(1, len(articles)))
    parts = []
    for art in articles:
        text = re.sub(r"\s+", " ", _MD.sub(" ", art.body)).strip()
        parts.append(text[:per].rsplit(" ", 1)[0] if len(text) > per else text)
    out = " ".join(p for p in parts if p)
    return out[:max_chars]


def apply_variant(page: Page, variant: str, articles: Mapping[str, Article]) -> Page:
    """``page`` transformed for ``variant`` (``articles`` maps the page's source ids to articles).

    ``full`` and ``no-merge`` return the page unchanged (apart from the recorded variant).
    Raises ``ValueError`` for an unknown variant.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
    if variant == "no-intent":
        srcs = [articles[i] for i in page.source_ids() if i in articles]
        return page.model_copy(
            update={"intent": raw_procedure_text(srcs), "solves": (), "does_not_solve": (), "variant": variant}
        )
    if variant == "pooled-links":
        pooled: dict[tuple[str, str], Link] = {}
        for ln in page.links():
            pooled.setdefault((ln.type.value, ln.article_id), ln)
        steps = tuple(Step(text=s.text) for s in page.steps)
        return page.model_copy(update={"steps": steps, "pooled_links": tuple(pooled.values()), "variant": variant})
    return page.model_copy(update={"variant": variant})
