"""The article table in the workspace store (SQLite)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from skillrag.corpus.model import Article, Section, check_id
from skillrag.errors import ArticleNotFound
from skillrag.workspace import Workspace

__all__ = ["SCHEMA", "ArticleStore"]

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
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    parent       TEXT,
    heading_path TEXT NOT NULL DEFAULT '[]',
    parent_offset INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS articles_parent ON articles (parent);
"""

#: Columns added after the first release: ``name -> definition`` (added to older stores on open).
_ADDED_COLUMNS = {
    "parent": "TEXT",
    "heading_path": "TEXT NOT NULL DEFAULT '[]'",
    "parent_offset": "INTEGER NOT NULL DEFAULT 0",
}

#: Active articles that were split into section-articles (search and the wiki use the sections).
SPLIT_DOCUMENTS = "SELECT parent FROM articles WHERE parent IS NOT NULL AND status = 'active'"


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the article table, or add the columns an older store lacks."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(articles)")}
    if have:
        for name, decl in _ADDED_COLUMNS.items():
            if name not in have:
                conn.execute(f"ALTER TABLE articles ADD COLUMN {name} {decl}")
        conn.commit()
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
        parent=row["parent"],
        heading_path=json.loads(row["heading_path"]),
        parent_offset=row["parent_offset"],
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

    def list(self, *, include_removed: bool = False, split_documents: bool = True) -> list[Article]:
        """Every active article (and removed ones if asked), sorted by id.

        ``split_documents=False`` leaves out the documents that were split into section-articles
        (their sections stay): the units search and the navigation layer work on."""
        where = [] if include_removed else ["status='active'"]
        if not split_documents:
            where.append(f"id NOT IN ({SPLIT_DOCUMENTS})")
        q = "SELECT * FROM articles" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        with self.workspace.connect() as conn:
            return [_row_to_article(r) for r in conn.execute(q)]

    def sections_of(self, document_id: str) -> list[Article]:
        """The active section-articles split from ``document_id``, in document order (empty when the
        document was not split)."""
        check_id(document_id)
        with self.workspace.connect() as conn:
            rows = conn.execute("SELECT * FROM articles WHERE parent = ? AND status='active' ORDER BY parent_offset",
                                (document_id,)).fetchall()
        return [_row_to_article(r) for r in rows]

    def hashes(self) -> dict[str, str]:
        """``id -> content_hash`` of every active article that search and the navigation layer use:
        a split document is left out, since its sections cover every character of it."""
        with self.workspace.connect() as conn:
            return dict(conn.execute(
                f"SELECT id, content_hash FROM articles WHERE status='active' AND id NOT IN ({SPLIT_DOCUMENTS})"
            ).fetchall())

    def count(self) -> int:
        with self.workspace.connect() as conn:
            return conn.execute("SELECT COUNT(*) FROM articles WHERE status='active'").fetchone()[0]
