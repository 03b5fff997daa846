"""Span attributes of the llm builder's passes (kept here so ``wiki/llm.py`` only carries the decorators):
``skillrag.wiki.article`` for one article's pass, ``skillrag.wiki.aspects`` for the aspect pages."""

from __future__ import annotations

from typing import Any

__all__ = ["article_after", "article_before", "aspects_after"]


def article_before(builder: Any, article: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"skillrag.article_id": article.id, "skillrag.wiki.model": getattr(builder, "model_name", None)}


def article_after(_: Any, builder: Any, article: Any, sem: Any, lock: Any, result: Any) -> dict[str, Any]:
    failed = result.failed.get(article.id)
    return {"skillrag.wiki.ok": failed is None, "skillrag.wiki.reasons": failed}


def aspects_after(_: Any, builder: Any, sem: Any, lock: Any, result: Any) -> dict[str, Any]:
    return {"skillrag.wiki.failed": len(result.failed), "gen_ai.usage.input_tokens": result.input_tokens,
            "gen_ai.usage.output_tokens": result.output_tokens}
