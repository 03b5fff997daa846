"""The workspace: the folder on disk, its typed config and its SQLite store."""

from skillrag.workspace._workspace import Workspace, atomic_write_text, resolve_workspace_dir
from skillrag.workspace.config import WorkspaceConfig, load_config

__all__ = ["Workspace", "WorkspaceConfig", "atomic_write_text", "load_config", "resolve_workspace_dir"]
