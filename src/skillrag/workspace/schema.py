"""Schema versions of the workspace's SQLite files: the one way a table gets into one.

A package that keeps tables declares them where it uses them, as a ``Schema``: a name (``corpus``,
``review``) and its ordered migrations, each an SQL script or a function of a connection. Migration
``n`` (1-based) takes that schema's tables from version ``n - 1`` to ``n``; a schema's version is the
length of its list. Only ever append to a list: a released migration is never edited, since the files
that ran it will not run it again.

Migration 1 of every schema is its *baseline*: the tables as skillrag made them before schema
versions existed, written so that it also completes a file of any earlier form (``CREATE ... IF NOT
EXISTS``, plus the columns added since). A workspace made before versions (``user_version`` 0, tables
present) therefore opens with its data intact and is stamped.

A file records two things:

- ``PRAGMA user_version``: the layout of this bookkeeping, ``FORMAT`` (0 = a file from before schema
  versions; stamped to ``FORMAT`` on its first open);
- table ``schema_versions (name, version)``: the version of each schema applied to the file.

``connect(path, *schemas)`` is the one place a connection to such a file is opened (WAL journal,
foreign keys on, rows by column name). It brings the named schemas up to date: the missing migrations
run once, in one ``BEGIN IMMEDIATE`` transaction (another process migrating the same file at the
same time waits, then finds nothing left to do), and a failing migration rolls every one of them back.
A file whose format or whose schema version is newer than this code knows is refused with one line,
``WorkspaceError`` ("built by a newer skillrag"), and nothing in it is changed.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skillrag._version import __version__
from skillrag.errors import WorkspaceError

__all__ = ["FORMAT", "Migration", "Schema", "connect", "open_connection", "statements", "versions"]

#: The layout of the bookkeeping (``PRAGMA user_version``): 1 = table ``schema_versions`` holds the
#: version of each schema.
FORMAT = 1

#: An SQL script (run statement by statement, never with an implicit commit) or a function of the
#: connection (which must not commit: it runs inside the migration transaction).
Migration = str | Callable[[sqlite3.Connection], None]

_VERSIONS_TABLE = """CREATE TABLE IF NOT EXISTS schema_versions (
    name    TEXT PRIMARY KEY,
    version INTEGER NOT NULL CHECK (version >= 0)
)"""


@dataclass(frozen=True)
class Schema:
    """The tables of one package (or module) in one SQLite file: ``name`` (unique within the file)
    and ``migrations`` in order; ``version`` = ``len(migrations)``."""

    name: str
    migrations: tuple[Migration, ...]

    @property
    def version(self) -> int:
        return len(self.migrations)


def statements(script: str) -> list[str]:
    """The SQL statements of ``script`` in order (trigger bodies kept whole; SQLite's own
    ``complete_statement`` decides where one ends), so a script runs inside a transaction without
    ``executescript``'s implicit ``COMMIT``."""
    out: list[str] = []
    buf = ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                out.append(buf.strip())
            buf = ""
    if buf.strip(" \t\r\n;"):
        raise ValueError(f"incomplete SQL statement at the end of a migration: {buf.strip()[:80]!r}")
    return out


def open_connection(path: Path, *, autocommit: bool = False, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path`` with the workspace's settings: WAL journal, foreign
    keys on, rows by column name (``sqlite3.Row``), a 30 s busy timeout. ``autocommit``: no implicit
    transactions (``isolation_level=None``). The file is created, with SQLite's header, when missing;
    an empty file is refused (``WorkspaceError``: a truncated or clobbered file, never an empty store).
    The caller closes it; ``connect`` is the usual way in (it also checks the schema versions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _create(path)
    elif path.is_file() and path.stat().st_size == 0:
        # every file this module creates starts with SQLite's header (see _create): an empty file is
        # a truncated or clobbered store, never an empty workspace
        raise WorkspaceError(
            f"{path}: store is damaged (an empty file, 0 bytes); restore it from a backup, "
            "or delete it and run `skillrag ingest` again"
        )
    conn = sqlite3.connect(path, timeout=30.0, check_same_thread=check_same_thread,
                           isolation_level=None if autocommit else "DEFERRED")
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise WorkspaceError(f"{path}: store is damaged ({exc})") from None
    return conn


@contextmanager
def connect(path: Path, *schemas: Schema, autocommit: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` (``open_connection``) whose bookkeeping and ``schemas`` are up to date
    (module doc); closed on exit. Raises ``WorkspaceError`` for a damaged file or one built by a newer
    skillrag. Inside, ``with conn:`` is one transaction (unless ``autocommit``)."""
    conn = open_connection(path, autocommit=autocommit)
    try:
        migrate(conn, path, schemas)
        yield conn
    except sqlite3.DatabaseError as exc:
        raise WorkspaceError(f"{path}: store is damaged ({exc})") from None
    finally:
        conn.close()


def versions(conn: sqlite3.Connection) -> dict[str, int]:
    """``{schema name: version}`` recorded in the file of ``conn`` (empty for a file from before
    schema versions)."""
    if not _has_versions_table(conn):
        return {}
    return {str(r[0]): int(r[1]) for r in conn.execute("SELECT name, version FROM schema_versions")}


def migrate(conn: sqlite3.Connection, path: Path, schemas: Sequence[Schema]) -> None:
    """Bring the file of ``conn`` to ``FORMAT`` and each of ``schemas`` to its version (module doc).
    When everything is current this only reads: ``user_version``, plus ``schema_versions`` when
    ``schemas`` are named."""
    fmt = int(conn.execute("PRAGMA user_version").fetchone()[0])
    _check_format(path, fmt)
    have = versions(conn) if fmt == FORMAT and schemas else {}
    for s in schemas:
        _check_schema(path, s, have.get(s.name, 0))
    if fmt == FORMAT and all(have.get(s.name, 0) == s.version for s in schemas):
        return
    level = conn.isolation_level
    conn.isolation_level = None  # explicit transaction control
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # read again under the write lock: another process may have migrated meanwhile
            fmt = int(conn.execute("PRAGMA user_version").fetchone()[0])
            _check_format(path, fmt)
            if fmt < FORMAT:
                conn.execute(_VERSIONS_TABLE)
                conn.execute(f"PRAGMA user_version = {FORMAT}")
            have = versions(conn)
            for s in schemas:
                done = have.get(s.name, 0)
                _check_schema(path, s, done)
                for step in s.migrations[done:]:
                    if isinstance(step, str):
                        for stmt in statements(step):
                            conn.execute(stmt)
                    else:
                        step(conn)
                if done < s.version:
                    conn.execute("INSERT INTO schema_versions (name, version) VALUES (?, ?) "
                                 "ON CONFLICT (name) DO UPDATE SET version = excluded.version", (s.name, s.version))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.isolation_level = level


def _has_versions_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'").fetchone() \
        is not None


def _check_format(path: Path, fmt: int) -> None:
    if fmt > FORMAT:
        raise WorkspaceError(
            f"{path}: built by a newer skillrag (store format {fmt}; skillrag {__version__} knows up to {FORMAT}); "
            "upgrade skillrag to open it"
        )


def _check_schema(path: Path, schema: Schema, version: int) -> None:
    if version > schema.version:
        raise WorkspaceError(
            f"{path}: built by a newer skillrag (tables {schema.name!r} at version {version}; skillrag "
            f"{__version__} knows up to {schema.version}); upgrade skillrag to open it"
        )


def _create(path: Path) -> None:
    """Create an empty SQLite file at ``path`` via a temp file and a link, so the file at ``path``
    always carries SQLite's header (WAL mode is recorded in it)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        for side in ("-wal", "-shm"):
            Path(tmp + side).unlink(missing_ok=True)
        try:
            os.link(tmp, path)  # never replaces a file another process created meanwhile
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
