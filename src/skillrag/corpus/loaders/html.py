"""HTML, one article per file, converted to Markdown with ``markdownify``.

id from ``<meta name="article-id">`` or the relative path (as for Markdown: ``id_from_path``); title from
``<title>``, else the first ``<h1>``, else the file stem.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdownify import markdownify

from skillrag.corpus.loaders._common import check_source_id, id_from_path, read_text
from skillrag.corpus.model import SourceArticle
from skillrag.corpus.sections import first_heading
from skillrag.errors import MalformedSourceError

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_META_ID = re.compile(r"<meta\s+name=[\"']article-id[\"']\s+content=[\"']([^\"']+)[\"']", re.IGNORECASE)
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.IGNORECASE | re.DOTALL)


def load(path: Path, root: Path, tag: str) -> list[SourceArticle]:
    raw = read_text(path)
    if "<" not in raw:
        raise MalformedSourceError(path, "no HTML markup found")
    body_html = (_BODY.search(raw) or re.match(r"(.*)", raw, re.DOTALL)).group(1)
    body = markdownify(body_html, heading_style="ATX", strip=["script", "style"]).strip() + "\n"
    body = re.sub(r"\n{3,}", "\n\n", body)
    rel = path.relative_to(root)
    m = _META_ID.search(raw)
    if m:
        aid = check_source_id(m.group(1), path)
    else:
        aid = check_source_id(id_from_path(rel), path,
                              from_name='set one with <meta name="article-id" content="...">')
    t = _TITLE.search(raw)
    title = (re.sub(r"\s+", " ", t.group(1)).strip() if t else "") or first_heading(body) or path.stem
    return [SourceArticle(id=aid, title=title, body=body, source_path=str(rel), source_tag=tag)]
