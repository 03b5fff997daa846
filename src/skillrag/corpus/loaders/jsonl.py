"""JSON Lines: one ``{"id","title","content"}`` object per non-blank line."""

from __future__ import annotations

from pathlib import Path

from skillrag.corpus.loaders._common import article_from_record, parse_json, read_text
from skillrag.corpus.model import SourceArticle


def load(path: Path, root: Path, tag: str) -> list[SourceArticle]:
    out = []
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            rec = parse_json(line, path, f"line {n}")
            out.append(article_from_record(rec, path, root, tag, f"line {n}"))
    return out
