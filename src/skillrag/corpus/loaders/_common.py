"""Helpers shared by the loaders."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillrag.corpus.model import SourceArticle
from skillrag.errors import MalformedSourceError
from skillrag.workspace.ids import ID_RULES, is_id

#: C0 control characters other than tab, newline, vertical tab, form feed and carriage return, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
#: A text with more control characters than this share is binary content, not text.
MAX_CONTROL_SHARE = 0.001


def binary_reason(text: str) -> str | None:
    """Why ``text`` is binary content rather than text (any NUL character, or control characters
    above ``MAX_CONTROL_SHARE`` of it), or None when it reads as text."""
    nul = text.count("\x00")
    if nul:
        return f"not text: binary content ({nul:,} NUL byte{'s' if nul != 1 else ''})"
    ctrl = len(_CONTROL.findall(text))
    if ctrl and ctrl > MAX_CONTROL_SHARE * len(text):
        return f"not text: binary content ({ctrl:,} control characters in {len(text):,})"
    return None


def read_text(path: Path) -> str:
    """The file's text, UTF-8, newlines untouched; ``MalformedSourceError`` if not UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedSourceError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


#: What an id may hold, for error messages (the ``source`` rule of ``skillrag.workspace.ids``: an article
#: id less the ``#`` of section ids).
ID_RULE = ID_RULES["source"].describe


def id_from_path(rel: Path) -> str:
    """The id a file's path gives when the file sets none: ``rel`` (relative to the ingest root)
    without its suffix, its folders joined by ``__``, each run of white space in a name replaced by
    ``-`` (``sub/pool hours.txt`` → ``sub__pool-hours``)."""
    return "__".join("-".join(part.split()) for part in rel.with_suffix("").parts)


def check_source_id(aid: Any, path: Path, *, where: str = "", from_name: str | None = None) -> str:
    """``aid`` if it is a valid source id (``workspace.ids``' ``source`` rule: no ``..``, no ``#``), else raise
    ``MalformedSourceError`` naming ``path`` and the characters an id may hold. ``from_name``: how
    the file could set an id instead, when ``aid`` was derived from its name (``id_from_path``)."""
    if is_id(aid, "source"):
        return aid
    loc = f"{where}: " if where else ""
    if from_name is not None:
        raise MalformedSourceError(
            path, f"{loc}the id taken from the file name, {aid!r}, is not a plain identifier ({ID_RULE}); "
                  f"rename the file or {from_name}")
    why = "; `#` is kept for section ids" if isinstance(aid, str) and "#" in aid else ""
    raise MalformedSourceError(path, f"{loc}id {aid!r} is not a plain identifier ({ID_RULE}{why})")


def article_from_record(rec: Any, path: Path, root: Path, tag: str, where: str = "") -> SourceArticle:
    """Build a ``SourceArticle`` from a ``{"id","title","content"}`` record; ``content`` kept verbatim."""
    loc = f"{where}: " if where else ""
    if not isinstance(rec, dict):
        raise MalformedSourceError(path, f"{loc}expected an object with id, title, content")
    missing = [k for k in ("id", "title", "content") if k not in rec]
    if missing:
        extra = sorted(set(rec) - {"id", "title", "content"})
        hint = f"; found {', '.join(map(repr, extra))}" if extra else ""
        raise MalformedSourceError(
            path, f"{loc}missing field(s) {', '.join(missing)} (an article is {{\"id\", \"title\", \"content\"}}{hint})"
        )
    aid, title, content = rec["id"], rec["title"], rec["content"]
    check_source_id(aid, path, where=where)
    if not isinstance(title, str) or not isinstance(content, str):
        raise MalformedSourceError(path, f"{loc}title and content must be strings")
    return SourceArticle(
        id=aid, title=title, body=content, source_path=str(path.relative_to(root)), source_tag=tag
    )


def parse_json(text: str, path: Path, where: str = "") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        loc = f"{where}: " if where else ""
        raise MalformedSourceError(path, f"{loc}invalid JSON ({exc.msg}, line {exc.lineno} col {exc.colno})") from None
