"""Per-case budgets of the four tools: one account in the workspace store, shared by every surface.

Each case is its own *session* with three budgets: ``retrieve`` calls (queries; reading one
navigation page with ``retrieve --page`` is a query too), articles read with ``get_article``
(fetches) and ``save_output`` attempts (saves: the first save plus ``max_save_retries``; a
``--check`` is not a save). A call that fails (unknown id, empty query) is not charged.

A fetch is charged **once per article per case** (``ONCE_PER_TARGET``): the first read of an article
spends one, whether it reads the whole body, one section or the summary; any later read of the same
article in the same session (again, another section, the whole after a section, ``--json``) is free,
also once the fetch budget is spent. Re-reading shows nothing new, so the budget still bounds how many
articles a case sees; the measurements behind the choice are in ``benchmarks/results/read_costs.md``. A call past a budget is refused with ``BudgetExceeded`` whose message is one line,
the same on the command line, the exported scripts, MCP and the LLM harness (``refusal``).

Each save attempt's result is kept too (``tool_session_saves``: the receipt an accepted save printed,
or a rejection's reasons), so ``save_output --status`` shows it again for free.

The account lives in SQLite (``tool_sessions``, ``tool_session_calls``, ``tool_session_saves`` in
``.skillrag/store.sqlite``)
because every command-line or script call is a new process. A charge is one ``BEGIN IMMEDIATE``
transaction that checks and increments the counter, so parallel agents (one per case, or even two
calls of one case) can never overrun a budget; a call that then fails is refunded.

How a call finds its case: ``load_case`` starts the case's session, or continues the one it already
has (re-reading a case never resets its budgets; ``new_session=True`` starts the case's next session
only once the current one is finished, with an accepted save, or has spent nothing: see
``SkillTools.load_case``); it is the only call that starts one, so a call naming a case that
was never loaded is refused rather than given a fresh budget. A later call names its case (``--case``, ``$SKILLRAG_CASE``, MCP's
``case_id``, the output's ``case_id`` for ``save_output``) or, when it names none, goes to the one
open session of the skill (loaded, no accepted save yet); with none or several open it is refused
with a line saying how to name the case. A harness run (``run_case``) opens a *private* session
that no other call can be attributed to, so two runs of one case never share an account.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

from skillrag.errors import BudgetExceeded, UserError
from skillrag.workspace import Schema, Workspace
from skillrag.workspace.config import BudgetOverrides, Budgets

__all__ = ["COUNTED", "ONCE_PER_TARGET", "BudgetLedger", "BudgetLimits", "BudgetState", "Charge", "refusal"]

Charge = Literal["query", "fetch", "save"]

SESSIONS_SQL = """
CREATE TABLE IF NOT EXISTS tool_sessions (
    id          TEXT PRIMARY KEY,
    case_id     TEXT NOT NULL,
    skill       TEXT NOT NULL,
    surface     TEXT NOT NULL DEFAULT '',
    as_of       TEXT NOT NULL,
    max_queries INTEGER NOT NULL,
    max_fetches INTEGER NOT NULL,
    max_saves   INTEGER NOT NULL,
    queries     INTEGER NOT NULL DEFAULT 0,
    fetches     INTEGER NOT NULL DEFAULT 0,
    saves       INTEGER NOT NULL DEFAULT 0,
    accepted    INTEGER NOT NULL DEFAULT 0,
    current     INTEGER NOT NULL DEFAULT 0,
    private     INTEGER NOT NULL DEFAULT 0,
    started_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_sessions_case ON tool_sessions (skill, case_id, current);
CREATE TABLE IF NOT EXISTS tool_session_calls (
    session_id TEXT NOT NULL REFERENCES tool_sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    tool       TEXT NOT NULL,
    target     TEXT NOT NULL DEFAULT '',
    charged    TEXT,
    ok         INTEGER NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS tool_session_saves (
    session_id TEXT NOT NULL REFERENCES tool_sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    accepted   INTEGER NOT NULL,
    at         TEXT NOT NULL,
    receipt    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""
#: The budget ledger's tables in the workspace store, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("skill.budget", (SESSIONS_SQL,))

#: When the counts of a tool result's ``budget`` are taken (it says so in every result).
COUNTED = "after this call"
_COLUMN = {"query": ("queries", "max_queries"), "fetch": ("fetches", "max_fetches"), "save": ("saves", "max_saves")}
#: Longest ``target`` kept per call in the account (a query can be a whole case); an article id (a
#: fetch's target) is kept whole, since a re-read is recognised by it.
TARGET_CHARS = 300
#: Charges spent once per target per session: a fetch, once per article (module doc).
ONCE_PER_TARGET: frozenset[str] = frozenset({"fetch"})


@dataclass(frozen=True)
class BudgetLimits:
    """The three per-case budgets: ``max_queries`` retrieve calls, ``max_fetches`` articles read with
    get_article (each charged once per case: a re-read is free), ``max_saves`` save_output attempts
    (= ``max_save_retries`` + 1)."""

    max_queries: int
    max_fetches: int
    max_saves: int

    @property
    def max_save_retries(self) -> int:
        return self.max_saves - 1

    @classmethod
    def of(cls, budgets: Budgets) -> BudgetLimits:
        """The three a ledger counts, from resolved ``budgets`` (``max_saves`` = ``max_save_retries`` + 1)."""
        return cls(budgets.max_queries, budgets.max_fetches, budgets.max_save_retries + 1)

    @classmethod
    def for_skill(cls, ws: Workspace, budgets: BudgetOverrides | None) -> BudgetLimits:
        """The skill's ``budgets`` where set, else the workspace's ``harness`` settings (``Budgets.resolve``)."""
        return cls.of(Budgets.resolve(ws.config.harness, budgets))


@dataclass(frozen=True)
class BudgetState:
    """One case session's account: what it may spend (``limits``) and has spent."""

    session_id: str
    case_id: str
    skill: str
    as_of: str
    limits: BudgetLimits
    queries: int = 0
    fetches: int = 0
    saves: int = 0
    accepted: bool = False
    private: bool = False

    @property
    def queries_left(self) -> int:
        return max(0, self.limits.max_queries - self.queries)

    @property
    def fetches_left(self) -> int:
        return max(0, self.limits.max_fetches - self.fetches)

    @property
    def saves_left(self) -> int:
        return max(0, self.limits.max_saves - self.saves)

    def left(self, kind: Charge) -> int:
        return {"query": self.queries_left, "fetch": self.fetches_left, "save": self.saves_left}[kind]

    def to_dict(self) -> dict[str, int | str]:
        """What every tool result carries as ``budget``: ``{counted: "after this call", queries_left,
        queries_used, fetches_left, fetches_used, saves_left, saves_used}``. The counts are taken after
        the call that returns them: a ``retrieve`` that returns ``queries_used: 1, queries_left: 4`` was
        the first of five queries."""
        return {"counted": COUNTED, "queries_left": self.queries_left, "queries_used": self.queries,
                "fetches_left": self.fetches_left, "fetches_used": self.fetches,
                "saves_left": self.saves_left, "saves_used": self.saves}

    def line(self) -> str:
        """The budget in a few words, for text output (the same counts as ``to_dict``)."""
        lim = self.limits
        return (f"case {self.case_id}, {COUNTED}: queries {self.queries} used, {self.queries_left} left "
                f"(of {lim.max_queries}); fetches {self.fetches} used, {self.fetches_left} left "
                f"(of {lim.max_fetches}); saves {self.saves} used, {self.saves_left} left (of {lim.max_saves})")


def refusal(kind: Charge, state: BudgetState) -> str:
    """The one line an over-budget call is refused with, on every surface."""
    lim, case = state.limits, state.case_id
    if kind == "query":
        return (f"query budget spent ({lim.max_queries} retrieve calls for case {case!r}); this call was refused: "
                "work with what you have found and call save_output")
    if kind == "fetch":
        return (f"fetch budget spent ({lim.max_fetches} articles read with get_article for case {case!r}); this "
                "call was refused: quote from the articles you have read (re-reading them is free) and call "
                "save_output")
    return f"save budget spent ({lim.max_saves} save_output attempts for case {case!r}); this call was refused"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _state(row: sqlite3.Row) -> BudgetState:
    return BudgetState(
        session_id=row["id"], case_id=row["case_id"], skill=row["skill"], as_of=row["as_of"],
        limits=BudgetLimits(row["max_queries"], row["max_fetches"], row["max_saves"]),
        queries=row["queries"], fetches=row["fetches"], saves=row["saves"], accepted=bool(row["accepted"]),
        private=bool(row["private"]),
    )


class BudgetLedger:
    """The per-case accounts of one workspace (see module doc). Every method is one transaction."""

    def __init__(self, ws: Workspace) -> None:
        self.workspace = ws
        with ws.connect(SCHEMA):
            pass

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction (``Workspace.write_transaction``)."""
        return self.workspace.write_transaction()

    # -- sessions -------------------------------------------------------------------------------
    def start(self, case_id: str, skill: str, limits: BudgetLimits, *, as_of: date | str | None = None,
              surface: str = "", new: bool = False, private: bool = False) -> tuple[BudgetState, bool]:
        """``(session, started)``: the case's current session, continued, or a new one (``started``).

        ``new`` closes the current session and starts afresh; ``private`` starts a session of its own
        (a harness run) that is never continued or attributed implicitly. ``as_of`` (default: today)
        is the session's reference date."""
        day = (as_of.isoformat() if isinstance(as_of, date) else as_of) or date.today().isoformat()
        with self._write() as conn:
            if not private:
                row = conn.execute("SELECT * FROM tool_sessions WHERE skill = ? AND case_id = ? AND current = 1",
                                   (skill, case_id)).fetchone()
                if row is not None and not new:
                    return _state(row), False
                conn.execute("UPDATE tool_sessions SET current = 0 WHERE skill = ? AND case_id = ? AND current = 1",
                             (skill, case_id))
            sid = uuid.uuid4().hex
            now = _now()
            conn.execute(
                "INSERT INTO tool_sessions (id, case_id, skill, surface, as_of, max_queries, max_fetches, max_saves,"
                " current, private, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, case_id, skill, surface, day, limits.max_queries, limits.max_fetches, limits.max_saves,
                 0 if private else 1, 1 if private else 0, now, now),
            )
            row = conn.execute("SELECT * FROM tool_sessions WHERE id = ?", (sid,)).fetchone()
            return _state(row), True

    def get(self, session_id: str) -> BudgetState:
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT * FROM tool_sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise UserError(f"no tool session {session_id!r} in this workspace")
        return _state(row)

    def current(self, case_id: str, skill: str) -> BudgetState | None:
        """The case's current (non-private) session, or None."""
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT * FROM tool_sessions WHERE skill = ? AND case_id = ? AND current = 1",
                               (skill, case_id)).fetchone()
        return _state(row) if row is not None else None

    def open_sessions(self, skill: str) -> list[BudgetState]:
        """Current sessions of ``skill`` with no accepted save yet, most recently used first."""
        with self.workspace.connect() as conn:
            rows = conn.execute("SELECT * FROM tool_sessions WHERE skill = ? AND current = 1 AND accepted = 0 "
                                "ORDER BY updated_at DESC", (skill,)).fetchall()
        return [_state(r) for r in rows]

    # -- charges --------------------------------------------------------------------------------
    def charge(self, session_id: str, kind: Charge, tool: str, target: str = "") -> tuple[BudgetState, int]:
        """Spend one unit of ``kind``: ``(state after the charge, call number)``. A spent budget raises
        ``BudgetExceeded`` (``refusal``'s line) and is recorded as a refused call. A kind in
        ``ONCE_PER_TARGET`` (a fetch) whose ``target`` this session already paid for and read is free: the
        call is recorded uncharged (``charged`` says so) and never refused."""
        count, limit = _COLUMN[kind]
        with self._write() as conn:
            row = conn.execute("SELECT * FROM tool_sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise UserError(f"no tool session {session_id!r} in this workspace")
            state = _state(row)
            if kind in ONCE_PER_TARGET and conn.execute(
                    "SELECT 1 FROM tool_session_calls WHERE session_id = ? AND tool = ? AND target = ? AND ok = 1 "
                    "AND charged = ? LIMIT 1", (session_id, tool, target, kind)).fetchone() is not None:
                conn.execute("UPDATE tool_sessions SET updated_at = ? WHERE id = ?", (_now(), session_id))
                return state, self._log(conn, session_id, tool, target, None, True, whole=True)
            if row[count] >= row[limit]:
                self._log(conn, session_id, tool, target, None, False)
                refused = refusal(kind, state)
            else:
                conn.execute(f"UPDATE tool_sessions SET {count} = {count} + 1, updated_at = ? WHERE id = ?",
                             (_now(), session_id))
                seq = self._log(conn, session_id, tool, target, kind, True, whole=kind in ONCE_PER_TARGET)
                row = conn.execute("SELECT * FROM tool_sessions WHERE id = ?", (session_id,)).fetchone()
                return _state(row), seq
        raise BudgetExceeded(refused)

    def refund(self, session_id: str, seq: int) -> None:
        """Undo the charge of call ``seq`` (the call failed; a free call has none to undo); the call stays
        logged as not ok."""
        with self._write() as conn:
            row = conn.execute("SELECT charged, ok FROM tool_session_calls WHERE session_id = ? AND seq = ?",
                               (session_id, seq)).fetchone()
            if row is None or not row["ok"]:
                return
            if row["charged"] is not None:
                count = _COLUMN[row["charged"]][0]
                conn.execute(f"UPDATE tool_sessions SET {count} = MAX(0, {count} - 1) WHERE id = ?", (session_id,))
            conn.execute("UPDATE tool_session_calls SET ok = 0, charged = NULL WHERE session_id = ? AND seq = ?",
                         (session_id, seq))

    def charged(self, session_id: str, seq: int) -> bool:
        """Whether call ``seq`` spent a unit of a budget (a re-read of an article is free)."""
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT charged FROM tool_session_calls WHERE session_id = ? AND seq = ?",
                               (session_id, seq)).fetchone()
        return row is not None and row["charged"] is not None

    def note(self, session_id: str, tool: str, target: str = "", ok: bool = True) -> None:
        """Record an uncharged call (``load_case``, a ``--check``)."""
        with self._write() as conn:
            self._log(conn, session_id, tool, target, None, ok)
            conn.execute("UPDATE tool_sessions SET updated_at = ? WHERE id = ?", (_now(), session_id))

    def accepted(self, session_id: str) -> None:
        """Mark the session's output accepted (it is then no longer *open* for implicit attribution)."""
        with self._write() as conn:
            conn.execute("UPDATE tool_sessions SET accepted = 1, updated_at = ? WHERE id = ?", (_now(), session_id))

    @staticmethod
    def _log(conn: sqlite3.Connection, session_id: str, tool: str, target: str, charged: str | None,
             ok: bool, *, whole: bool = False) -> int:
        """Record a call; ``target`` is cut to ``TARGET_CHARS`` unless ``whole`` (an article id)."""
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM tool_session_calls WHERE session_id = ?",
                           (session_id,)).fetchone()[0]
        conn.execute("INSERT INTO tool_session_calls (session_id, seq, tool, target, charged, ok, at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (session_id, seq, tool, target if whole else target[:TARGET_CHARS], charged, 1 if ok else 0,
                      _now()))
        return int(seq)

    # -- what happened ----------------------------------------------------------------------------
    def calls(self, session_id: str) -> list[dict[str, Any]]:
        """Every call of the session in order: ``{seq, tool, target, charged, ok, at}``."""
        with self.workspace.connect() as conn:
            rows = conn.execute("SELECT seq, tool, target, charged, ok, at FROM tool_session_calls "
                                "WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        return [{**dict(r), "ok": bool(r["ok"])} for r in rows]

    def record_save(self, session_id: str, seq: int, receipt: Mapping[str, Any]) -> None:
        """Keep the result of save attempt ``seq`` (the call number ``charge`` gave): ``receipt`` is
        what the save returned (``accepted`` and, for an accepted save, its path, evidence and warnings;
        for a rejected one its ``reasons``), so it can be shown again without a save (``last_save``)."""
        body = json.dumps(dict(receipt), ensure_ascii=False)
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO tool_session_saves (session_id, seq, accepted, at, receipt) "
                         "VALUES (?, ?, ?, ?, ?)", (session_id, seq, 1 if receipt.get("accepted") else 0, _now(),
                                                    body))

    def last_save(self, session_id: str) -> tuple[dict[str, Any] | None, int]:
        """``(receipt of the session's last save attempt with its time "at", or None; attempts recorded)``."""
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT receipt, at FROM tool_session_saves WHERE session_id = ? ORDER BY seq DESC "
                               "LIMIT 1", (session_id,)).fetchone()
            n = conn.execute("SELECT COUNT(*) FROM tool_session_saves WHERE session_id = ?",
                             (session_id,)).fetchone()[0]
        if row is None:
            return None, 0
        return {**json.loads(row["receipt"]), "at": row["at"]}, int(n)

    def fetched(self, session_id: str) -> set[str]:
        """Article ids the session read successfully with ``get_article`` (any part)."""
        return {c["target"] for c in self.calls(session_id) if c["tool"] == "get_article" and c["ok"]}
