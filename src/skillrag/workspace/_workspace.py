"""The workspace: one folder on disk holding config, wiki, skills, runs and the SQLite store."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skillrag.errors import WorkspaceError
from skillrag.workspace.config import WorkspaceConfig, dump_config, load_config

__all__ = ["Workspace", "atomic_write_text", "resolve_workspace_dir"]

CONFIG_NAME = "skillrag.yaml"
STATE_DIR = ".skillrag"
STORE_NAME = "store.sqlite"


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
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def store_path(self) -> Path:
        return self.state_dir / STORE_NAME

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
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the workspace store (WAL mode, foreign keys on); closed on exit.

        Use ``with conn:`` inside for one transaction: it commits on success, rolls back on error.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.store_path, timeout=30.0)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            yield conn
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{self.store_path}: store is damaged ({exc})") from None
        finally:
            conn.close()
