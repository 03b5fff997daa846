"""Options and output helpers shared by the CLI command modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from skillrag.errors import UserError
from skillrag.skill import CaseFile
from skillrag.workspace import Workspace

__all__ = ["CasesOpt", "JsonOpt", "WorkspaceOpt", "console", "err_console", "open_cases", "open_workspace", "print_json", "write_raw"]

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
CasesOpt = Annotated[
    Path | None,
    typer.Option("--cases", envvar="SKILLRAG_CASES", show_default=False,
                 help="Case file (JSONL). Default: the skill's `cases` setting, else WORKSPACE/cases.jsonl."),
]


def open_workspace(path: Path | None) -> Workspace:
    """Open the workspace at ``path`` (``WorkspaceError`` if it is not one)."""
    return Workspace.open(path)


def open_cases(ws: Workspace | None, cases: Path | None, skill_cases: str | None = None) -> CaseFile:
    """The case file a command reads: ``cases`` (``--cases``/``$SKILLRAG_CASES``), else the skill's ``cases``
    setting (relative to the workspace root), else ``WORKSPACE/cases.jsonl`` when it exists; ``UserError``
    (one line) when there is none."""
    if cases is not None:
        return CaseFile(cases)
    if ws is not None:
        if skill_cases:
            return CaseFile(ws.root / skill_cases)
        if ws.default_cases.is_file():
            return CaseFile(ws.default_cases)
    raise UserError("no case file: pass --cases FILE (or set $SKILLRAG_CASES)")


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_raw(text: str) -> None:
    """Write ``text`` to stdout exactly (UTF-8, no newline added or translated)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()
