"""One JSON file: a ``{"id","title","content"}`` object, or a list of them."""

from __future__ import annotations

from pathlib import Path

from skillrag.corpus.loaders._common import article_from_record, parse_json, read_text
from skillrag.corpus.model import SourceArticle


def load(path: Path, root: Path, tag: str) -> list[SourceArticle]:
    data = parse_json(read_text(path), path)
    if isinstance(data, list):
        return [article_from_record(r, path, root, tag, f"item {i}") for i, r in enumerate(data)]
    return [article_from_record(data, path, root, tag)]
