"""Markdown or plain text, one article per file.

id: front matter ``id``, else the path relative to the ingest root without its suffix, with
``/`` replaced by ``__`` and each run of white space by ``-`` (``id_from_path``). title: front matter ``title``, else the first heading, else the file stem.
url: front matter ``url`` (an absolute http(s) URL: the canonical page citations deep-link to), if any.
The body is the file's text after the front-matter block, byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import frontmatter
import yaml

from skillrag.corpus.loaders._common import check_source_id, id_from_path, read_text
from skillrag.corpus.model import SourceArticle
from skillrag.corpus.sections import first_heading
from skillrag.errors import MalformedSourceError

_FRONT = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(\r?\n|\Z)", re.DOTALL)


def split_front_matter(text: str, path: Path) -> tuple[dict, str]:
    """``(metadata, body)``: body is ``text`` after the front matter, unchanged."""
    m = _FRONT.match(text)
    if not m:
        return {}, text
    try:
        meta = frontmatter.loads(text).metadata
    except yaml.YAMLError as exc:
        raise MalformedSourceError(path, f"front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    return dict(meta), text[m.end() :]


def load(path: Path, root: Path, tag: str) -> list[SourceArticle]:
    meta, body = split_front_matter(read_text(path), path)
    rel = path.relative_to(root)
    if meta.get("id"):
        aid = check_source_id(str(meta["id"]), path)
    else:
        aid = check_source_id(id_from_path(rel), path, from_name="set one in front matter (`id: ...`)")
    title = str(meta.get("title") or first_heading(body) or path.stem)
    url = meta.get("url")
    if url is not None:
        url = _check_url(url, path)
    return [SourceArticle(id=aid, title=title, body=body, source_path=str(rel), source_tag=str(meta.get("tag") or tag),
                          url=url)]


def _check_url(value: object, path: Path) -> str:
    """``value`` if it is an absolute http(s) URL with a host and no white space, else ``MalformedSourceError``."""
    text = str(value).strip() if isinstance(value, str) else ""
    parts = urlsplit(text) if text and not any(c.isspace() for c in text) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise MalformedSourceError(path, f"front matter url {value!r} is not an absolute http(s) URL")
    return text
