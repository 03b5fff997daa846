"""Review decisions in the workspace store (SQLite, ``.skillrag/store.sqlite``).

Three append-only tables (triggers refuse ``UPDATE`` and ``DELETE``)::

    review_actions   id, case_id, output_sha256, action (approve|reject|edit), version,
                     reviewer, at (ISO 8601 UTC), comment
    review_guidance  case_id, output_sha256, version (>= 1), guidance, action_id
    review_snippets  case_id, output_sha256, version (>= 1), position, source_article, source_title,
                     text, why, start, end, content_hash, occurrences, action_id

A review refers to one saved output, named by the SHA-256 of its ``output.json`` bytes: when a case
is run again its new output starts a fresh review and the earlier actions stay in the history.
Version 0 is the output as the agent saved it, guidance and snippets (never stored here, never
changed); each edit adds version ``n + 1``: new guidance text (``edit``), or the same guidance with a
snippet a reviewer added (``add_evidence``; its passage checked by the evidence contract before, see
``review.runs.add_evidence``). A version's snippets are the agent's, then every snippet added up to
it, in the order they were added, so a snippet keeps its number in every later version. An
``approve``/``reject`` records the version it judged.

The review state of an output is set by its latest action: ``approve`` → ``approved``, ``reject`` →
``rejected``, ``edit`` → ``edited`` (a new version waits for a decision); no action → ``pending``.

Every action is one transaction (``BEGIN IMMEDIATE``) that first checks the reviewer decided on
the latest version: a stale page raises ``ReviewConflict`` and writes nothing.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from skillrag.corpus import check_id
from skillrag.errors import ReviewConflict, UserError
from skillrag.workspace import Schema, Workspace

__all__ = [
    "ACTIONS",
    "MAX_COMMENT_CHARS",
    "MAX_GUIDANCE_CHARS",
    "MAX_REVIEWER_CHARS",
    "STATES",
    "AddedSnippet",
    "GuidanceVersion",
    "ReviewAction",
    "ReviewState",
    "ReviewStore",
    "check_reviewer",
]

Action = Literal["approve", "reject", "edit"]
#: The review actions, in the order the page offers them.
ACTIONS: tuple[str, ...] = ("approve", "reject", "edit")
#: The review states of an output.
STATES: tuple[str, ...] = ("pending", "approved", "rejected", "edited")
MAX_REVIEWER_CHARS = 100
MAX_COMMENT_CHARS = 4000
MAX_GUIDANCE_CHARS = 50_000
#: The review tables, all append-only: one trigger per table and statement refuses ``UPDATE`` and ``DELETE``.
_APPEND_ONLY = ("review_snippets", "review_actions", "review_guidance")

REVIEW_SQL = """
CREATE TABLE IF NOT EXISTS review_actions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id       TEXT NOT NULL,
    output_sha256 TEXT NOT NULL,
    action        TEXT NOT NULL CHECK (action IN ('approve', 'reject', 'edit')),
    version       INTEGER NOT NULL CHECK (version >= 0),
    reviewer      TEXT NOT NULL,
    at            TEXT NOT NULL,
    comment       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS review_actions_case ON review_actions (case_id, output_sha256, id);
CREATE TABLE IF NOT EXISTS review_guidance (
    case_id       TEXT NOT NULL,
    output_sha256 TEXT NOT NULL,
    version       INTEGER NOT NULL CHECK (version >= 1),
    guidance      TEXT NOT NULL,
    action_id     INTEGER NOT NULL REFERENCES review_actions (id),
    PRIMARY KEY (case_id, output_sha256, version)
);
CREATE TABLE IF NOT EXISTS review_snippets (
    case_id        TEXT NOT NULL,
    output_sha256  TEXT NOT NULL,
    version        INTEGER NOT NULL CHECK (version >= 1),
    position       INTEGER NOT NULL CHECK (position >= 0),
    source_article TEXT NOT NULL,
    source_title   TEXT NOT NULL,
    text           TEXT NOT NULL,
    why            TEXT NOT NULL,
    start          INTEGER NOT NULL CHECK (start >= 0),
    "end"          INTEGER NOT NULL,
    content_hash   TEXT NOT NULL,
    occurrences    INTEGER NOT NULL DEFAULT 1,
    action_id      INTEGER NOT NULL REFERENCES review_actions (id),
    PRIMARY KEY (case_id, output_sha256, version, position),
    CHECK ("end" > start)
);
""" + "".join(
    f"CREATE TRIGGER IF NOT EXISTS {table}_append_only_{op[0].lower()} BEFORE {op} ON {table}\n"
    f"    BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;\n"
    for table in _APPEND_ONLY for op in ("UPDATE", "DELETE"))
#: The review tables in the workspace store, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("review", (REVIEW_SQL,))


@dataclass(frozen=True)
class ReviewAction:
    """One recorded action. ``version``: the guidance version judged (approve/reject) or created
    (edit); ``at``: ISO 8601 UTC, seconds; ``comment``: the reason of a rejection, else optional."""

    id: int
    case_id: str
    output_sha256: str
    action: str
    version: int
    reviewer: str
    at: str
    comment: str


@dataclass(frozen=True)
class AddedSnippet:
    """A snippet a reviewer added while reviewing: the four snippet fields of the evidence contract,
    and where its passage is: ``body[start:end]`` (character offsets in the raw body) of the article
    whose content hash was ``content_hash`` then; ``occurrences``: how often the passage occurs in it
    (the offsets point at the first)."""

    source_article: str
    source_title: str
    text: str
    why: str
    start: int
    end: int
    content_hash: str
    occurrences: int = 1

    def snippet(self) -> dict[str, str]:
        """The snippet as an output carries it (``contract.SNIPPET_FIELDS``)."""
        return {"source_article": self.source_article, "source_title": self.source_title, "text": self.text,
                "why": self.why}

    def record(self, index: int) -> dict[str, Any]:
        """Its audit record as snippet ``index`` of a version (the shape ``save_output`` writes)."""
        return {"index": index, "source_article": self.source_article, "start": self.start, "end": self.end,
                "content_hash": self.content_hash, "occurrences": self.occurrences, "matched": 1}


@dataclass(frozen=True)
class GuidanceVersion:
    """One version of an output's guidance: 0 as the agent saved it, 1.. as reviewers edited it
    (``reviewer``, ``at`` and ``comment`` of the edit; ``None``/empty for version 0). ``added``: the
    snippets this version added (module doc); its snippets are the output's, then those added by every
    version up to and including this one."""

    version: int
    guidance: str
    reviewer: str | None = None
    at: str | None = None
    comment: str = ""
    added: tuple[AddedSnippet, ...] = ()


@dataclass(frozen=True)
class ReviewState:
    """Where the review of one output stands: ``state`` (one of ``STATES``), the ``latest_version``
    of its guidance, and the ``last`` action recorded for it (None when there is none)."""

    state: str = "pending"
    latest_version: int = 0
    last: ReviewAction | None = None

    @property
    def approved_version(self) -> int | None:
        """The guidance version an approval stands for, or None when the output is not approved."""
        return self.last.version if self.state == "approved" and self.last is not None else None


def _clean_line(value: object, what: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise UserError(f"{what}: must be text")
    text = value.strip()
    if not text:
        raise UserError(f"{what}: must not be empty")
    if len(text) > max_chars:
        raise UserError(f"{what}: {len(text)} characters, at most {max_chars}")
    return text


def check_reviewer(name: object) -> str:
    """The reviewer's name, stripped: 1..100 characters, one line, no control characters.
    Raises ``UserError``."""
    text = _clean_line(name, "reviewer", MAX_REVIEWER_CHARS)
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise UserError("reviewer: must be one line of printable characters")
    return text


def _check_comment(comment: object, *, required: bool, what: str = "comment") -> str:
    if comment is None or (isinstance(comment, str) and not comment.strip() and not required):
        return ""
    return _clean_line(comment, what, MAX_COMMENT_CHARS)


def _check_sha(value: object) -> str:
    if not (isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)):
        raise UserError("output_sha256: must be 64 lower-case hex digits")
    return value


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class ReviewStore:
    """The review tables of one workspace. Raises ``UserError`` for bad input (empty reviewer,
    rejection without a reason, empty guidance, a non-plain case id) and ``ReviewConflict`` when
    ``version``/``base_version`` is not the latest version of the output's guidance."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        with workspace.connect(SCHEMA):
            pass

    # -- reading ------------------------------------------------------------------------------
    def actions(self, case_id: str | None = None) -> list[ReviewAction]:
        """Every action (of one case when ``case_id`` is given), oldest first."""
        q = "SELECT * FROM review_actions"
        args: tuple[str, ...] = ()
        if case_id is not None:
            q += " WHERE case_id = ?"
            args = (case_id,)
        with self.workspace.connect() as conn:
            return [_action(r) for r in conn.execute(q + " ORDER BY id", args)]

    def versions(self, case_id: str, output_sha256: str, original: str) -> list[GuidanceVersion]:
        """Every guidance version of one output, oldest first; ``original`` is version 0 (the
        output's own guidance)."""
        with self.workspace.connect() as conn:
            rows = conn.execute(
                "SELECT g.version, g.guidance, a.reviewer, a.at, a.comment FROM review_guidance g "
                "JOIN review_actions a ON a.id = g.action_id WHERE g.case_id = ? AND g.output_sha256 = ? "
                "ORDER BY g.version", (case_id, output_sha256)).fetchall()
            added: dict[int, list[AddedSnippet]] = {}
            for r in conn.execute(
                    "SELECT * FROM review_snippets WHERE case_id = ? AND output_sha256 = ? ORDER BY version, position",
                    (case_id, output_sha256)):
                added.setdefault(r["version"], []).append(AddedSnippet(
                    r["source_article"], r["source_title"], r["text"], r["why"], r["start"], r["end"],
                    r["content_hash"], r["occurrences"]))
        return [GuidanceVersion(0, original)] + [
            GuidanceVersion(r["version"], r["guidance"], r["reviewer"], r["at"], r["comment"],
                            tuple(added.get(r["version"], ()))) for r in rows
        ]

    def state(self, case_id: str, output_sha256: str) -> ReviewState:
        """The review state of one output (``pending`` when nothing was recorded)."""
        with self.workspace.connect() as conn:
            return _state(conn, case_id, output_sha256)

    def states(self) -> dict[tuple[str, str], ReviewState]:
        """``(case_id, output_sha256) -> ReviewState`` for every output that has an action."""
        out: dict[tuple[str, str], ReviewState] = {}
        with self.workspace.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM review_actions WHERE id IN "
                "(SELECT MAX(id) FROM review_actions GROUP BY case_id, output_sha256)").fetchall()
            latest = {(r["case_id"], r["output_sha256"]): r["v"] for r in conn.execute(
                "SELECT case_id, output_sha256, MAX(version) AS v FROM review_guidance "
                "GROUP BY case_id, output_sha256")}
        for r in rows:
            key = (r["case_id"], r["output_sha256"])
            out[key] = _from_last(_action(r), latest.get(key, 0))
        return out

    # -- writing ------------------------------------------------------------------------------
    def approve(self, case_id: str, output_sha256: str, reviewer: str, *, version: int,
                comment: str | None = None) -> ReviewAction:
        """Approve guidance ``version`` (which must be the latest) of the output."""
        return self._record(case_id, output_sha256, "approve", reviewer, version,
                            _check_comment(comment, required=False))

    def reject(self, case_id: str, output_sha256: str, reviewer: str, reason: str, *,
               version: int) -> ReviewAction:
        """Reject guidance ``version`` (the latest) with a ``reason`` (required)."""
        return self._record(case_id, output_sha256, "reject", reviewer, version,
                            _check_comment(reason, required=True, what="reason"))

    def edit(self, case_id: str, output_sha256: str, reviewer: str, guidance: str, *, base_version: int,
             comment: str | None = None) -> ReviewAction:
        """Store ``guidance`` as version ``base_version + 1``; ``base_version`` must be the latest
        (the version the reviewer edited). The output file and its snippets are not touched."""
        text = guidance.replace("\r\n", "\n") if isinstance(guidance, str) else guidance
        text = _clean_line(text, "guidance", MAX_GUIDANCE_CHARS)
        return self._record(case_id, output_sha256, "edit", reviewer, base_version,
                            _check_comment(comment, required=False), guidance=text)

    def add_evidence(self, case_id: str, output_sha256: str, reviewer: str, guidance: str,
                     snippet: AddedSnippet, *, base_version: int, comment: str | None = None) -> ReviewAction:
        """Store version ``base_version + 1``: ``guidance`` (the latest version's, unchanged) with
        ``snippet`` added to its snippets. ``base_version`` must be the latest. The caller checks the
        passage against the evidence contract first (``review.runs.add_evidence``); this checks only
        its shape (non-empty fields, ``0 <= start < end``). The output file is not touched."""
        text = guidance.replace("\r\n", "\n") if isinstance(guidance, str) else guidance
        text = _clean_line(text, "guidance", MAX_GUIDANCE_CHARS)
        for name in ("source_article", "source_title", "text", "why", "content_hash"):
            _clean_line(getattr(snippet, name), name, MAX_GUIDANCE_CHARS)
        if not (isinstance(snippet.start, int) and isinstance(snippet.end, int) and 0 <= snippet.start < snippet.end):
            raise UserError("snippet offsets: need whole numbers 0 <= start < end")
        return self._record(case_id, output_sha256, "edit", reviewer, base_version,
                            _check_comment(comment, required=False), guidance=text, added=snippet)

    def _immediate(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.workspace.write_transaction()

    def _record(self, case_id: str, output_sha256: str, action: Action, reviewer: str, version: int,
                comment: str, *, guidance: str | None = None, added: AddedSnippet | None = None) -> ReviewAction:
        check_id(case_id, "case")
        sha = _check_sha(output_sha256)
        who = check_reviewer(reviewer)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise UserError("version: must be a whole number >= 0")
        with self._immediate() as conn:
            current = _state(conn, case_id, sha)
            if version != current.latest_version:
                raise ReviewConflict(
                    f"case {case_id!r}: you reviewed guidance version {version}, but the latest is version "
                    f"{current.latest_version} (someone edited it meanwhile); reload the page and decide again")
            at = _now()
            new_version = version + 1 if action == "edit" else version
            cur = conn.execute(
                "INSERT INTO review_actions (case_id, output_sha256, action, version, reviewer, at, comment) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (case_id, sha, action, new_version, who, at, comment))
            action_id = int(cur.lastrowid or 0)
            if action == "edit":
                conn.execute(
                    "INSERT INTO review_guidance (case_id, output_sha256, version, guidance, action_id) "
                    "VALUES (?, ?, ?, ?, ?)", (case_id, sha, new_version, guidance, action_id))
            if added is not None:
                a = added
                conn.execute(
                    'INSERT INTO review_snippets (case_id, output_sha256, version, position, source_article, '
                    'source_title, text, why, start, "end", content_hash, occurrences, action_id) '
                    "VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (case_id, sha, new_version, a.source_article, a.source_title, a.text, a.why, a.start, a.end,
                     a.content_hash, a.occurrences, action_id))
        return ReviewAction(action_id, case_id, sha, action, new_version, who, at, comment)


def _action(r: sqlite3.Row) -> ReviewAction:
    return ReviewAction(r["id"], r["case_id"], r["output_sha256"], r["action"], r["version"], r["reviewer"],
                        r["at"], r["comment"])


def _from_last(last: ReviewAction | None, latest_version: int) -> ReviewState:
    if last is None:
        return ReviewState("pending", latest_version, None)
    state = {"approve": "approved", "reject": "rejected", "edit": "edited"}[last.action]
    return ReviewState(state, latest_version, last)


def _state(conn: sqlite3.Connection, case_id: str, sha: str) -> ReviewState:
    row = conn.execute("SELECT * FROM review_actions WHERE case_id = ? AND output_sha256 = ? ORDER BY id DESC "
                       "LIMIT 1", (case_id, sha)).fetchone()
    latest = conn.execute("SELECT MAX(version) FROM review_guidance WHERE case_id = ? AND output_sha256 = ?",
                          (case_id, sha)).fetchone()[0]
    return _from_last(_action(row) if row is not None else None, latest or 0)
