"""The workspace: one folder on disk holding config, wiki, skills, runs and the SQLite store.

Writers take the workspace's write lock (``Workspace.write_lock``): an OS file lock
(``filelock``, ``flock`` on POSIX) on ``.skillrag/write.lock``. The kernel drops it when the holder
exits, however it exits, so a killed writer never leaves a stale lock behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from skillrag.errors import WorkspaceError
from skillrag.workspace import schema
from skillrag.workspace.config import WorkspaceConfig, dump_config, load_config
from skillrag.workspace.runs import RunFolder, tool_log_path
from skillrag.workspace.schema import Schema

__all__ = ["Workspace", "aside_dir", "atomic_write_text", "resolve_workspace_dir", "swap_dir"]

CONFIG_NAME = "skillrag.yaml"
STATE_DIR = ".skillrag"
STORE_NAME = "store.sqlite"
LOCK_NAME = "write.lock"
LOCK_INFO_NAME = "write.lock.json"

_lock_depth: dict[str, int] = {}
_lock_guard = threading.Lock()


def resolve_workspace_dir(value: str | os.PathLike[str] | None) -> Path:
    """The workspace folder: ``value``, else ``$SKILLRAG_WORKSPACE``, else the current directory."""
    if value:
        return Path(value)
    env = os.environ.get("SKILLRAG_WORKSPACE")
    return Path(env) if env else Path.cwd()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and a rename (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def aside_dir(folder: Path) -> Path:
    """Where ``swap_dir`` sets ``folder`` aside while a new one takes its place: ``.NAME.old`` beside it."""
    return folder.with_name(f".{folder.name}.old")


def swap_dir(new: Path, live: Path) -> None:
    """Make the finished folder ``new`` the folder ``live`` with two renames: ``live`` is set aside
    (``aside_dir``; one left there by an interrupted swap is removed first), ``new`` renamed into its
    place, and the old one removed. A reader sees the old folder or the new one, never a half-written
    one; between the renames there is no ``live`` (a caller that must survive a kill there looks for
    ``aside_dir(live)``)."""
    old = aside_dir(live)
    if old.exists():
        shutil.rmtree(old)
    if live.exists():
        os.replace(live, old)
    os.replace(new, live)
    shutil.rmtree(old, ignore_errors=True)


@dataclass(frozen=True)
class Workspace:
    """An opened workspace. Build one with ``Workspace.init`` or ``Workspace.open``.

    Layout::

        DIR/skillrag.yaml      typed config (WorkspaceConfig)
        DIR/wiki/              navigation layer: pages, index.md, log.md
        DIR/skills/NAME/       SKILL.md + skill.yaml per skill
        DIR/runs/              run outputs and run records
        DIR/.skillrag/         internal state: store.sqlite (articles, index), caches
    """

    root: Path
    config: WorkspaceConfig

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def default_cases(self) -> Path:
        """``cases.jsonl`` at the root: the case file used when neither ``--cases`` nor the skill names one."""
        return self.root / "cases.jsonl"

    def run_folder(self, case_id: str) -> RunFolder:
        """``runs/<case_id>/``: the files of the case's run (``RunFolder``); ``InvalidIdError`` for an id
        that is not a plain case id."""
        return RunFolder.of(self.runs_dir, case_id)

    @property
    def tool_log(self) -> Path:
        """``runs/tool_calls.jsonl``: the tools' call log of this workspace's runs."""
        return tool_log_path(self.runs_dir)

    @property
    def owned_dirs(self) -> tuple[Path, ...]:
        """The folders the workspace writes (wiki, skills, runs, state): never source documents."""
        return (self.wiki_dir, self.skills_dir, self.runs_dir, self.state_dir)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def store_path(self) -> Path:
        return self.state_dir / STORE_NAME

    @property
    def lock_path(self) -> Path:
        return self.state_dir / LOCK_NAME

    @classmethod
    def init(cls, root: str | os.PathLike[str], *, config: WorkspaceConfig | None = None) -> Workspace:
        """Create (or complete) a workspace at ``root``; an existing config is kept, never overwritten."""
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root}: exists and is not a folder")
        for sub in ("wiki", "skills", "runs", STATE_DIR):
            (root / sub).mkdir(parents=True, exist_ok=True)
        cfg_path = root / CONFIG_NAME
        if not cfg_path.exists():
            atomic_write_text(cfg_path, dump_config(config or WorkspaceConfig(name=root.resolve().name)))
        ws = cls.open(root)
        with ws.connect():
            pass
        return ws

    @classmethod
    def open(cls, root: str | os.PathLike[str] | None = None) -> Workspace:
        """Open the workspace at ``root`` (see ``resolve_workspace_dir``); raises ``WorkspaceError``."""
        path = resolve_workspace_dir(root)
        if not (path / CONFIG_NAME).is_file():
            raise WorkspaceError(f"{path}: not a skillrag workspace (no {CONFIG_NAME}; run `skillrag init {path}`)")
        return cls(root=path.resolve(), config=load_config(path / CONFIG_NAME))

    @contextmanager
    def write_lock(self, command: str, *, wait: float = 0.0) -> Iterator[None]:
        """Hold the workspace's write lock while the block runs (one writer per workspace).

        ``command`` names the holder (``run-batch``, ``index``, ``wiki build``, ``ingest``) in the
        error another writer gets. ``wait`` is how long to wait for a busy lock, in seconds (0 = fail at
        once). Re-entrant within one process (``demo`` runs ingest, wiki build and index under one
        lock). Raises ``WorkspaceError`` naming the holder when the lock is still busy after ``wait``.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        key = str(self.lock_path.resolve())
        lock = FileLock(key, thread_local=False, is_singleton=True)
        info = self.state_dir / LOCK_INFO_NAME
        try:
            lock.acquire(timeout=wait)
        except Timeout:
            raise WorkspaceError(
                f"{self.root}: busy: {_holder(info)} is writing to this workspace; "
                "wait for it to finish, then run this again"
            ) from None
        with _lock_guard:
            depth = _lock_depth.get(key, 0)
            _lock_depth[key] = depth + 1
        try:
            if depth == 0:
                stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                atomic_write_text(info, json.dumps({"command": command, "pid": os.getpid(), "since": stamp}))
            yield
        finally:
            with _lock_guard:
                _lock_depth[key] -= 1
                last = _lock_depth[key] == 0
            if last:
                info.unlink(missing_ok=True)
            lock.release()

    def writer(self) -> str | None:
        """Who holds the write lock now (``"`skillrag index` (pid N, since T)"``), or None when no live
        process does. Reads the lock's note and checks its pid; never takes the lock itself."""
        info = self.state_dir / LOCK_INFO_NAME
        try:
            pid = int(json.loads(info.read_text(encoding="utf-8"))["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # a killed writer's note
        except OSError:
            pass  # alive, owned by another user
        return _holder(info)

    @contextmanager
    def write_transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection in one ``BEGIN IMMEDIATE`` transaction: SQLite's write lock is taken before
        anything is read, so a read-check-write (a budget charge, a review action) cannot interleave
        with another process's. Committed when the block ends, rolled back on any exception."""
        with self.connect() as conn:
            conn.isolation_level = None  # explicit transaction control
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def connect(self, *schemas: Schema) -> Iterator[sqlite3.Connection]:
        """A connection to the workspace store (WAL mode, foreign keys on); closed on exit.

        ``schemas``: the tables the caller needs, brought up to date first (``skillrag.workspace.schema``:
        missing migrations run once, in one transaction). Use ``with conn:`` inside for one transaction:
        it commits on success, rolls back on error. Raises ``WorkspaceError`` for a damaged store or one
        built by a newer skillrag.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with schema.connect(self.store_path, *schemas) as conn:
            yield conn


def _holder(info_path: Path) -> str:
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
        return f"`skillrag {info['command']}` (pid {info['pid']}, since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another skillrag command"
