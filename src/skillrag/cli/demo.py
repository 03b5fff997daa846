"""`skillrag demo`: the main job on the packaged demo help center (what `make demo` runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillrag.cli._common import console
from skillrag.demo import DEFAULT_CASE, run_demo


def demo_cmd(
    directory: Annotated[Path, typer.Option("--dir", help="Workspace folder to create or reuse.")] = Path(
        "build/demo-workspace"
    ),
    case: Annotated[str, typer.Option("--case", help="Demo case id (hp-001 … hp-014).")] = DEFAULT_CASE,
) -> None:
    """Ingest the demo help center, build the wiki and index, run one case with the extractive harness."""
    console.rule("skillrag demo: Harbor & Pine help center (offline, embedded defaults)")
    rep = run_demo(directory, case_id=case,
                   on_step=lambda name, detail, s: console.print(f"[bold]{name:<11}[/] {detail}  [dim]({s:.2f} s)[/]"))
    out = rep.output or {}
    console.print(Panel(Text(out.get("guidance", "")), title=f"case briefing for {case} (retrieval only, no model)"))
    table = Table("#", "article", "verbatim snippet", "why", show_lines=True)
    for i, sn in enumerate(out.get("snippets", []), 1):
        table.add_row(str(i), f"{sn['source_title']}\n[dim]{sn['source_article']}[/]", sn["text"], sn.get("why", ""))
    console.print(table)
    console.print(f"evidence contract: {rep.status}; output written to {rep.output_path}")
    console.print(f"next: skillrag search -w {rep.workspace} \"damaged sofa\"  ·  "
                  f"skillrag run -w {rep.workspace} --case-id hp-002  (cases: {rep.workspace}/cases.jsonl)")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_cmd)
