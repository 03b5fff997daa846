"""The workspace: the folder on disk, its typed config, its SQLite store (with its schema versions:
``skillrag.workspace.schema``) and its run-folder layout."""

from skillrag.workspace._workspace import (
    Workspace,
    aside_dir,
    atomic_write_text,
    resolve_workspace_dir,
    swap_dir,
)
from skillrag.workspace.config import WorkspaceConfig, load_config
from skillrag.workspace.runs import RunFolder
from skillrag.workspace.schema import Schema

__all__ = ["RunFolder", "Schema", "Workspace", "WorkspaceConfig", "aside_dir", "atomic_write_text",
           "load_config", "resolve_workspace_dir", "swap_dir"]
