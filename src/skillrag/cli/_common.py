"""Options and output helpers shared by the CLI command modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skillrag.workspace import Workspace

__all__ = ["JsonOpt", "WorkspaceOpt", "console", "err_console", "open_workspace", "print_json", "write_raw"]

console = Console()
err_console = Console(stderr=True)

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "-w",
        "--workspace",
        envvar="SKILLRAG_WORKSPACE",
        help="Workspace folder (default: current directory or $SKILLRAG_WORKSPACE).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def open_workspace(path: Path | None) -> Workspace:
    """Open the workspace at ``path`` (``WorkspaceError`` if it is not one)."""
    return Workspace.open(path)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_raw(text: str) -> None:
    """Write ``text`` to stdout exactly (UTF-8, no newline added or translated)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()
