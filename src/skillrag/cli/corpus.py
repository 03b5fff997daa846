"""`skillrag init`, `ingest`, `article`, `articles`: the workspace and the content layer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from skillrag.cli._common import (
    JsonOpt,
    WorkspaceOpt,
    console,
    err_console,
    open_workspace,
    print_json,
    write_raw,
)
from skillrag.cli._progress import progress_bar
from skillrag.corpus import ArticleStore, count_files, ingest, summarize
from skillrag.workspace import Workspace


def init_cmd(directory: Annotated[Path, typer.Argument(help="Folder to create the workspace in.")]) -> None:
    """Create a workspace: skillrag.yaml, wiki/, skills/ (with the built-in skills), runs/ and the SQLite store."""
    from skillrag.skill import install_builtin_skills

    ws = Workspace.init(directory)
    copied = install_builtin_skills(ws)
    console.print(f"workspace ready at {ws.root}" + (f" (skills: {', '.join(copied)})" if copied else ""))


def ingest_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders: .json, .jsonl, .md, .txt, .html.")],
    workspace: WorkspaceOpt = None,
    tag: Annotated[str | None, typer.Option(help="Source tag for filters (default: folder name).")] = None,
    skip_bad: Annotated[bool, typer.Option("--skip-bad", help="Reject malformed files, ingest the rest.")] = False,
    split_sections: Annotated[bool | None, typer.Option(
        "--split-sections/--no-split-sections",
        help="Also store every document with headings as section-articles (default: corpus.split_headings; "
             "documents over corpus.split_chars are always split).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Load source articles; unchanged ones are untouched, changed ones flagged, missing ones marked removed."""
    ws = open_workspace(workspace)
    total = count_files(paths, ws.owned_dirs)
    with ws.write_lock("ingest"), progress_bar("ingest", disable=total < 50) as progress:
        task = progress.add_task("ingest", total=total)
        report = ingest(ws, paths, tag=tag, skip_bad=skip_bad, on_file=lambda _f: progress.advance(task),
                        split_sections=split_sections)
    counts = report.counts()
    if json_out:
        print_json({"counts": counts, "rejected": report.rejected, "changed": report.changed, "removed": report.removed,
                    "split": report.split})
        return
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    if report.split:
        console.print(f"{len(report.split)} documents stored with {sum(report.split.values())} section-articles "
                      "(search and the wiki use the sections; `skillrag article DOC_ID` reads a whole document)")
    for r in report.rejected:
        err_console.print(f"rejected: {r}", markup=False, highlight=False)


def article_cmd(
    article_id: Annotated[str, typer.Argument(metavar="ID", help="Article id.")],
    workspace: WorkspaceOpt = None,
    section: Annotated[str | None, typer.Option(
        help="Print only one section: its number, its heading path ('A > B') or its heading (any case); "
             "a heading several sections share is refused with their numbers and paths.")] = None,
    summary: Annotated[bool, typer.Option("--summary", help="Print a short deterministic summary.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Print an article's body exactly as stored (or one section, or a summary)."""
    from skillrag.skill.tools import resolve_section  # the resolver `skillrag tool get-article` uses

    ws = open_workspace(workspace)
    art = ArticleStore(ws).get(article_id)
    picked = None
    if section is not None:
        picked = resolve_section(art, section)  # ArticleNotFound / UserError: one `error:` line, exit 2
        text = art.body[picked.start : picked.end]
    elif summary:
        text = summarize(art, ws.config.corpus.summary_chars) + "\n"
    else:
        text = art.body
    if json_out:
        data = art.model_dump()
        data["text"] = text
        if picked is not None:
            data["section"] = picked.to_dict()
        data["section_articles"] = [s.id for s in ArticleStore(ws).sections_of(art.id)]
        print_json(data)
    else:
        write_raw(text)


def articles_cmd(
    workspace: WorkspaceOpt = None,
    removed: Annotated[bool, typer.Option("--removed", help="Include removed articles.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """List the stored articles."""
    ws = open_workspace(workspace)
    arts = ArticleStore(ws).list(include_removed=removed)
    if json_out:
        print_json([
            {"id": a.id, "title": a.title, "source_path": a.source_path, "source_tag": a.source_tag,
             "content_hash": a.content_hash, "status": a.status, "chars": len(a.body)}
            for a in arts
        ])
        return
    # ids are what users copy: the id column keeps every id whole on one line (other columns wrap)
    id_col = Column("id", no_wrap=True, overflow="fold", min_width=max((len(a.id) for a in arts), default=2))
    table = Table(id_col, Column("title", min_width=10), Column("source", overflow="fold", min_width=6),
                  Column("chars", no_wrap=True, justify="right"), Column("status", no_wrap=True))
    for a in arts:
        table.add_row(a.id, a.title, a.source_path, str(len(a.body)), a.status)
    console.print(table)
    console.print(f"{len(arts)} articles")


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("ingest")(ingest_cmd)
    app.command("article")(article_cmd)
    app.command("articles")(articles_cmd)
