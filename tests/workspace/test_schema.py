"""Schema versions and migrations of the workspace's SQLite files (``skillrag.workspace.schema``), on
real SQLite files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from skillrag.errors import WorkspaceError
from skillrag.workspace import Schema, Workspace
from skillrag.workspace.schema import FORMAT, connect, statements, versions

DATA = Path(__file__).parent / "data"


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_new_file_runs_every_migration_once_and_records_the_versions(tmp_path):
    calls: list[int] = []

    def add_index(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("CREATE INDEX notes_body ON notes (body)")

    notes = Schema("notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);", add_index))
    db = tmp_path / "x.sqlite"
    with connect(db, notes) as conn, conn:
        conn.execute("INSERT INTO notes (body) VALUES ('kept')")
    with connect(db, notes) as conn:  # already current: nothing runs again
        assert versions(conn) == {"notes": 2}
        assert [r[0] for r in conn.execute("SELECT body FROM notes")] == ["kept"]
    assert calls == [1]
    assert _user_version(db) == FORMAT


def test_an_appended_migration_runs_alone_and_keeps_the_rows(tmp_path):
    db = tmp_path / "x.sqlite"
    v1 = Schema("notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",))
    with connect(db, v1) as conn, conn:
        conn.execute("INSERT INTO notes (body) VALUES ('first')")
    v2 = Schema("notes", (*v1.migrations, "ALTER TABLE notes ADD COLUMN tag TEXT NOT NULL DEFAULT 'none';"))
    with connect(db, v2) as conn:
        assert versions(conn) == {"notes": 2}
        assert [tuple(r) for r in conn.execute("SELECT body, tag FROM notes")] == [("first", "none")]


def test_a_failing_migration_rolls_every_step_back(tmp_path):
    db = tmp_path / "x.sqlite"
    with connect(db):
        pass
    bad = Schema("notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY);", "ALTER TABLE nowhere ADD COLUMN x TEXT;"))
    with pytest.raises(WorkspaceError, match="no such table: nowhere"), connect(db, bad):
        pass
    assert "notes" not in _tables(db)  # step 1 was rolled back with step 2
    with connect(db) as conn:
        assert versions(conn) == {}


def test_a_file_from_a_newer_skillrag_is_refused_in_one_line_and_left_as_found(tmp_path):
    db = tmp_path / "x.sqlite"
    notes = Schema("notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY);",))
    with connect(db, notes) as conn, conn:
        conn.execute("UPDATE schema_versions SET version = 3 WHERE name = 'notes'")
    with pytest.raises(WorkspaceError) as err, connect(db, notes):
        pass
    msg = str(err.value)
    assert "built by a newer skillrag" in msg and "'notes' at version 3" in msg and "knows up to 1" in msg
    assert "\n" not in msg
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM schema_versions").fetchone()[0] == 3

    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version = {FORMAT + 1}")
    newer = rf"built by a newer skillrag \(store format {FORMAT + 1};"
    with pytest.raises(WorkspaceError, match=newer), connect(db):  # checked on every open, whatever tables
        pass
    assert _user_version(db) == FORMAT + 1


def test_a_newer_store_is_one_error_line_from_the_cli(tmp_path, capsys):
    from skillrag.cli.main import main

    ws = Workspace.init(tmp_path / "w")
    with sqlite3.connect(ws.store_path) as conn:
        conn.execute(f"PRAGMA user_version = {FORMAT + 1}")
    assert main(["articles", "-w", str(ws.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "built by a newer skillrag" in err and err.count("\n") == 1


def test_two_openers_at_once_migrate_once(tmp_path):
    db = tmp_path / "x.sqlite"
    with connect(db):
        pass
    calls: list[str] = []
    gate = threading.Barrier(4)

    def make(conn: sqlite3.Connection) -> None:
        calls.append(threading.current_thread().name)
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")  # a second run would fail: no IF NOT EXISTS

    notes = Schema("notes", (make,))
    errors: list[BaseException] = []

    def opener() -> None:
        gate.wait()
        try:
            with connect(db, notes):
                pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(calls) == 1


def test_statements_keep_trigger_bodies_whole():
    script = """
        CREATE TABLE t (a TEXT);  -- one; with a semicolon in a comment
        CREATE TRIGGER t_ro BEFORE DELETE ON t BEGIN SELECT RAISE(ABORT, 'no; never'); END;
        INSERT INTO t VALUES ('x;y');
    """
    out = statements(script)
    assert len(out) == 3 and "CREATE TRIGGER" in out[1] and out[1].endswith("END;")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("BEGIN")
    for stmt in out:  # each one whole, inside one open transaction
        conn.execute(stmt)
    with pytest.raises(sqlite3.IntegrityError, match="no; never"):
        conn.execute("DELETE FROM t")
    conn.execute("COMMIT")
    assert conn.execute("SELECT a FROM t").fetchall() == [("x;y",)]
    with pytest.raises(ValueError, match="incomplete SQL statement"):
        statements("CREATE TABLE t (a TEXT); CREATE TRIGGER x BEFORE DELETE ON t BEGIN SELECT 1;")


# -- a workspace from before schema versions ------------------------------------------------------


def _old_store(ws: Workspace) -> None:
    """``ws``'s store as the code before schema versions left it: its tables (the schema SQLite
    recorded for them, ``data/store_before_versions.sql``), a row in each, ``user_version`` 0."""
    ws.store_path.unlink()
    with sqlite3.connect(ws.store_path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript((DATA / "store_before_versions.sql").read_text(encoding="utf-8"))
        conn.executescript("""
            INSERT INTO corpus_stamp (id, store_id, revision) VALUES (1, 'oldstore', 0);
            INSERT INTO articles (id, title, body, content_hash, source_path, source_root)
              VALUES ('fees', 'Fees', 'A wire transfer costs 30 dollars.', 'h1', 'fees.md', '/kb');
            INSERT INTO tool_sessions (id, case_id, skill, as_of, max_queries, max_fetches, max_saves,
              queries, started_at, updated_at) VALUES ('s1', 'c1', 'cs', '2026-01-01', 5, 5, 2, 3, 't', 't');
            INSERT INTO tool_session_calls VALUES ('s1', 1, 'retrieve', 'fees', 'query', 1, 't');
            INSERT INTO search_vectors VALUES ('dummy', 'th', x'0000803f');
            INSERT INTO wiki_journal (article_id, content_hash, status) VALUES ('fees', 'h1', 'done');
            INSERT INTO wiki_agent_builds (build_id, created_at, variant, lease_s, state)
              VALUES ('b1', 1.0, 'default', 60, 'open');
            INSERT INTO review_actions (case_id, output_sha256, action, version, reviewer, at)
              VALUES ('c1', 'ab', 'approve', 0, 'ana', 't');
            INSERT INTO wiki_link_audit VALUES ('ph', 'ah', 'p1', 'fees', 'm', 1, 'ok');
        """)
    assert _user_version(ws.store_path) == 0


def _dump(path: Path) -> tuple[list[tuple[str, str, str]], dict[str, int]]:
    with sqlite3.connect(path) as conn:
        schema = [tuple(r) for r in conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name != 'schema_versions' ORDER BY name")]
        counts = {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
                  for (kind, name, _sql) in schema if kind == "table"}
    return schema, counts


def test_a_store_from_before_versions_opens_with_its_data_and_is_stamped(tmp_path):
    from skillrag.corpus import ArticleStore
    from skillrag.review.store import ReviewStore
    from skillrag.search.vectors import VectorStore
    from skillrag.skill.budget import BudgetLedger
    from skillrag.wiki.agent import open_build
    from skillrag.wiki.audit import SCHEMA as AUDIT
    from skillrag.wiki.llm import Journal

    ws = Workspace.init(tmp_path / "w")
    _old_store(ws)
    before = _dump(ws.store_path)
    with sqlite3.connect(ws.store_path) as conn:
        revision = conn.execute("SELECT revision FROM corpus_stamp").fetchone()[0]

    store = ArticleStore(ws)
    assert store.get("fees").body == "A wire transfer costs 30 dollars."
    assert store.stamp() == f"oldstore:{revision}"  # the stamp's row was kept, not made anew
    ledger = BudgetLedger(ws)
    assert ledger.get("s1").queries == 3
    assert VectorStore(ws).get("dummy", ["th"])["th"].tolist() == [1.0]
    assert Journal(ws).rows()["fees"]["status"] == "done"
    Journal(ws, "wiki_journal_rebuild")
    assert open_build(ws)["build_id"] == "b1"
    assert [a.reviewer for a in ReviewStore(ws).actions()] == ["ana"]
    with ws.connect(AUDIT) as conn:
        assert conn.execute("SELECT reason FROM wiki_link_audit").fetchone()[0] == "ok"
        assert versions(conn) == {"corpus": 1, "skill.budget": 1, "search.vectors": 1, "wiki.journal": 1,
                                  "wiki.agent": 1, "review": 1, "wiki.audit": 1}

    assert _user_version(ws.store_path) == FORMAT
    assert _dump(ws.store_path) == before  # no table, index or trigger changed; every row kept


def test_a_thread_store_from_before_versions_keeps_its_turns(tmp_path):
    from skillrag.service.threads import ThreadStore

    db = tmp_path / "service.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript((DATA / "service_before_versions.sql").read_text(encoding="utf-8"))
        conn.execute("INSERT INTO turns (thread_key, seq, question, condensed, answer) "
                     "VALUES ('t1', 1, 'q', 'q', 'a')")
    before = _dump(db)
    store = ThreadStore(db)
    assert [t.answer for t in store.history("t1")] == ["a"]
    assert _user_version(db) == FORMAT and _dump(db) == before
    with connect(db) as conn:
        assert versions(conn) == {"service.threads": 1}


def test_a_store_older_still_gains_the_columns_added_before_versions(tmp_path):
    """The agent builds' table from before ``structure_key``, ``structure`` and ``summary``: the
    baseline adds them once, keeping the row."""
    from skillrag.wiki.agent import last_finished, open_build

    ws = Workspace.init(tmp_path / "w")
    with sqlite3.connect(ws.store_path) as conn:
        conn.execute("CREATE TABLE wiki_agent_builds (build_id TEXT PRIMARY KEY, created_at REAL NOT NULL, "
                     "variant TEXT NOT NULL, scope TEXT, lease_s REAL NOT NULL, state TEXT NOT NULL, "
                     "finished_at REAL)")
        conn.execute("INSERT INTO wiki_agent_builds VALUES ('b0', 1.0, 'default', NULL, 60, 'finished', 2.0)")
    assert last_finished(ws) is None and open_build(ws) is None
    with sqlite3.connect(ws.store_path) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(wiki_agent_builds)")]
        assert cols[-3:] == ["structure_key", "structure", "summary"]
        assert conn.execute("SELECT build_id FROM wiki_agent_builds").fetchone()[0] == "b0"
