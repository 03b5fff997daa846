"""`skillrag ask`: an evidence-first answer to one question (subject gate, binding, conflicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillrag.cli._common import JsonOpt, WorkspaceOpt, err_console, open_workspace, print_json, write_raw


def ask_cmd(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question, in quotes.")],
    workspace: WorkspaceOpt = None,
    skill: Annotated[
        str, typer.Option(help="Skill to run (a folder under skills/ or a built-in).")
    ] = "evidence-qa",
    model: Annotated[
        str | None, typer.Option("--model", help="Model id (provider:model); runs the llm harness.")
    ] = None,
    harness: Annotated[
        str | None,
        typer.Option(help="extractive (no model, the default) or llm (needs --model or models.default)."),
    ] = None,
    no_index: Annotated[bool, typer.Option("--no-index", help="Do not use the search index.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the answer JSON here (default: runs/ask/).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Answer QUESTION from the knowledge base only: not found, or evidence with signals.

    The run passes a hard subject gate (the subject must exist and be bound to its parent entity
    in the source text) before any evidence is read; disagreeing sources are shown, not resolved.
    """
    from skillrag.errors import UserError
    from skillrag.evidence import ask, format_answer, save_answer

    ws = open_workspace(workspace)
    if harness is None:
        harness = "llm" if model else "extractive"
    if harness not in ("extractive", "llm"):
        raise UserError(f"unknown harness {harness!r} (extractive, llm)")
    if harness == "extractive" and model:
        raise UserError("--model runs the llm harness; drop --harness extractive or --model")
    answer = ask(ws, question, skill=skill, harness=harness, model=model, use_index=not no_index)
    path = save_answer(ws, answer, out)
    if json_out:
        print_json(answer.model_dump(mode="json"))
        return
    write_raw(format_answer(answer))
    err_console.print(f"saved: {path}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_cmd)
