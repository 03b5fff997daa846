"""Conversation threads of the HTTP service, kept in SQLite under the workspace state folder.

A client names a thread with ``thread_id``; the service stores a turn under a **thread key**:
``thread_id`` for a plain chat and ``thread_id::SKILL`` for a chat under a skill. Client ids may not
contain ``::`` (``check_thread_id``), so a client can never address another skill's history, and a
plain thread and a skill thread with the same client id never see each other.

File: ``<workspace>/.skillrag/service.sqlite`` (WAL mode), tables ``turns``, ``turn_scores`` (the judges' scores
of a served answer, written after it went out) and ``service_runs``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from skillrag.workspace import Schema, schema
from skillrag.workspace.ids import ID_RULES, check_id

__all__ = ["THREAD_ID_PATTERN", "ThreadStore", "Turn", "check_thread_id", "thread_key"]

#: Client thread ids: letters, digits, ``_ . -``; 1–128 characters; never ``::`` (the ``thread`` rule of
#: ``skillrag.workspace.ids``; this form is for pydantic's ``Field(pattern=)``).
THREAD_ID_PATTERN = ID_RULES["thread"].schema_pattern

_THREADS_SQL = """
CREATE TABLE IF NOT EXISTS turns (
    thread_key  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    question    TEXT NOT NULL,
    condensed   TEXT NOT NULL,
    answer      TEXT NOT NULL,
    skill       TEXT,
    citations   TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (thread_key, seq)
);
CREATE TABLE IF NOT EXISTS turn_scores (
    thread_key  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    scores      TEXT NOT NULL,
    scored_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (thread_key, seq)
);
CREATE TABLE IF NOT EXISTS service_runs (
    id          TEXT PRIMARY KEY,
    status      TEXT NOT NULL,
    case_id     TEXT NOT NULL,
    result      TEXT,
    error       TEXT,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at TEXT
);
"""
#: The service's tables in ``service.sqlite``, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("service.threads", (_THREADS_SQL,))


def check_thread_id(value: str) -> str:
    """``value`` if it is a valid client thread id, else ``InvalidIdError``."""
    return check_id(value, "thread")


def thread_key(thread_id: str, skill: str | None) -> str:
    """The stored key: ``thread_id`` for a plain chat, ``thread_id::skill`` under a skill."""
    check_thread_id(thread_id)
    return f"{thread_id}::{skill}" if skill else thread_id


class Turn(BaseModel):
    """One stored question/answer exchange."""

    thread_key: str
    seq: int = Field(ge=1, description="1-based position in its thread.")
    question: str
    condensed: str = Field(description="The standalone question actually searched.")
    answer: str
    skill: str | None = None
    citations: list[dict[str, Any]] = Field(default_factory=list)
    created_at: str = ""


class ThreadStore:
    """Append-only turn history per thread key. Safe for many threads and processes at once
    (each call opens its own connection; appends run in one ``BEGIN IMMEDIATE`` transaction)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with schema.connect(self.path, SCHEMA, autocommit=True):
            pass

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """An autocommit connection (``skillrag.workspace.schema.connect``); raises ``WorkspaceError``
        for a damaged file or one built by a newer skillrag."""
        with schema.connect(self.path, autocommit=True) as conn:
            yield conn

    def history(self, key: str, limit: int | None = None) -> list[Turn]:
        """The last ``limit`` turns of ``key`` (all when None), oldest first."""
        q = "SELECT * FROM turns WHERE thread_key = ? ORDER BY seq DESC"
        args: tuple[Any, ...] = (key,)
        if limit is not None:
            q += " LIMIT ?"
            args = (key, int(limit))
        with self._connect() as conn:
            rows = conn.execute(q, args).fetchall()
        return [_row_turn(r) for r in reversed(rows)]

    def append(
        self,
        key: str,
        *,
        question: str,
        condensed: str,
        answer: str,
        skill: str | None,
        citations: list[dict[str, Any]],
    ) -> Turn:
        """Store one turn at the end of ``key`` and return it (with its ``seq``)."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE thread_key = ?", (key,)).fetchone()[0]
                conn.execute(
                    "INSERT INTO turns (thread_key, seq, question, condensed, answer, skill, citations)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, seq, question, condensed, answer, skill, json.dumps(citations, ensure_ascii=False)),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return Turn(thread_key=key, seq=seq, question=question, condensed=condensed, answer=answer,
                    skill=skill, citations=citations)

    def keys(self) -> list[str]:
        """Every thread key that has at least one turn, sorted."""
        with self._connect() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT thread_key FROM turns ORDER BY thread_key")]

    # --- scores of served answers (after the answer; skillrag.service.scoring) ----------------
    def put_scores(self, key: str, seq: int, scores: dict[str, Any]) -> None:
        """Store (or replace) the judges' scores of turn ``seq`` of ``key`` (a JSON object)."""
        with self._connect() as conn:
            conn.execute("INSERT OR REPLACE INTO turn_scores (thread_key, seq, scores) VALUES (?, ?, ?)",
                         (key, seq, json.dumps(scores, ensure_ascii=False, default=str)))

    def scores(self, key: str, seq: int) -> dict[str, Any] | None:
        """The scores stored for turn ``seq`` of ``key``, or None (not scored, or not yet)."""
        with self._connect() as conn:
            row = conn.execute("SELECT scores FROM turn_scores WHERE thread_key = ? AND seq = ?", (key, seq)).fetchone()
        return json.loads(row["scores"]) if row is not None else None

    # --- run jobs (POST /runs) -------------------------------------------------------------
    def run_create(self, run_id: str, case_id: str) -> None:
        with self._connect() as conn:
            conn.execute("INSERT INTO service_runs (id, status, case_id) VALUES (?, 'running', ?)", (run_id, case_id))

    def run_finish(self, run_id: str, status: str, *, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        with self._connect() as conn:
            conn.execute(
                "UPDATE service_runs SET status = ?, result = ?, error = ?,"
                " finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                (status, json.dumps(result, ensure_ascii=False, default=str) if result is not None else None, error, run_id),
            )

    def run_get(self, run_id: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM service_runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        return {
            "id": row["id"],
            "status": row["status"],
            "case_id": row["case_id"],
            "result": json.loads(row["result"]) if row["result"] else None,
            "error": row["error"],
            "created_at": row["created_at"],
            "finished_at": row["finished_at"],
        }


def _row_turn(row: sqlite3.Row) -> Turn:
    return Turn(
        thread_key=row["thread_key"],
        seq=row["seq"],
        question=row["question"],
        condensed=row["condensed"],
        answer=row["answer"],
        skill=row["skill"],
        citations=json.loads(row["citations"]),
        created_at=row["created_at"],
    )
