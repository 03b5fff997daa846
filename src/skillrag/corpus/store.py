"""The article table in the workspace store (SQLite)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from skillrag.corpus.model import Article, Section, check_id
from skillrag.errors import ArticleNotFound
from skillrag.workspace import Workspace

__all__ = ["ArticleStore", "SCHEMA"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS articles (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_path  TEXT NOT NULL,
    source_tag   TEXT NOT NULL DEFAULT '',
    source_root  TEXT NOT NULL,
    sections     TEXT NOT NULL DEFAULT '[]',
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    changed      INTEGER NOT NULL DEFAULT 0,
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def _row_to_article(row: sqlite3.Row) -> Article:
    return Article(
        id=row["id"],
        title=row["title"],
        body=row["body"],
        content_hash=row["content_hash"],
        source_path=row["source_path"],
        source_tag=row["source_tag"],
        sections=[Section(**s) for s in json.loads(row["sections"])],
        status=row["status"],
        changed=bool(row["changed"]),
    )


class ArticleStore:
    """Read access to the stored articles of a workspace.

    Loads on demand from SQLite; ``get`` is a primary-key lookup (microseconds).
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        with workspace.connect() as conn:
            ensure_schema(conn)

    def get(self, article_id: str, *, include_removed: bool = False) -> Article:
        """The article with this id. Raises ``InvalidIdError`` for a non-identifier and
        ``ArticleNotFound`` for an unknown (or removed) id."""
        check_id(article_id)
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT * FROM articles WHERE id = ?", (article_id,)).fetchone()
        if row is None or (row["status"] == "removed" and not include_removed):
            raise ArticleNotFound(f"no article with id {article_id!r}")
        return _row_to_article(row)

    def get_many(self, ids: Iterable[str]) -> dict[str, Article]:
        """``id -> Article`` for the active ids among ``ids`` (unknown ids are left out)."""
        ids = list(ids)
        out: dict[str, Article] = {}
        with self.workspace.connect() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                q = f"SELECT * FROM articles WHERE status='active' AND id IN ({','.join('?' * len(chunk))})"
                for row in conn.execute(q, chunk):
                    out[row["id"]] = _row_to_article(row)
        return out

    def list(self, *, include_removed: bool = False) -> list[Article]:
        """Every active article (and removed ones if asked), sorted by id."""
        q = "SELECT * FROM articles" + ("" if include_removed else " WHERE status='active'") + " ORDER BY id"
        with self.workspace.connect() as conn:
            return [_row_to_article(r) for r in conn.execute(q)]

    def hashes(self) -> dict[str, str]:
        """``id -> content_hash`` of every active article."""
        with self.workspace.connect() as conn:
            return dict(conn.execute("SELECT id, content_hash FROM articles WHERE status='active'").fetchall())

    def count(self) -> int:
        with self.workspace.connect() as conn:
            return conn.execute("SELECT COUNT(*) FROM articles WHERE status='active'").fetchone()[0]
