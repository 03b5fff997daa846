"""A short deterministic summary of an article (no model): title, outline and opening text."""

from __future__ import annotations

import re

from skillrag.corpus.model import Article

__all__ = ["summarize"]


def summarize(article: Article, max_chars: int = 400) -> str:
    """``title``, the section outline, then the first prose of the body cut at a word boundary
    to at most ``max_chars`` characters. Same article, same summary."""
    outline = [s.heading for s in article.sections if s.level <= 3][:12]
    prose_lines = [
        ln.strip()
        for ln in article.body.splitlines()
        if ln.strip() and not ln.lstrip().startswith(("#", "|", "---", "```"))
    ]
    prose = re.sub(r"\s+", " ", " ".join(prose_lines))
    if len(prose) > max_chars:
        cut = prose[:max_chars].rsplit(" ", 1)[0]
        prose = cut + " …"
    parts = [f"{article.title} [{article.id}]"]
    if outline:
        parts.append("Sections: " + "; ".join(outline))
    if prose:
        parts.append(prose)
    return "\n".join(parts)
