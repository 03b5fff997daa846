"""The workspace: the folder on disk, its typed config and its SQLite store (with its
schema versions: ``skillrag.workspace.schema``)."""

from skillrag.workspace._workspace import Workspace, atomic_write_text, resolve_workspace_dir
from skillrag.workspace.config import WorkspaceConfig, load_config
from skillrag.workspace.schema import Schema

__all__ = ["Schema", "Workspace", "WorkspaceConfig", "atomic_write_text", "load_config", "resolve_workspace_dir"]
