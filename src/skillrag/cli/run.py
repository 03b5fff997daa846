"""`skillrag run` and `skillrag run-batch`: a support case in, guidance with verbatim evidence out."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.panel import Panel
from rich.table import Table

from skillrag.cli._common import (
    CasesOpt,
    JsonOpt,
    WorkspaceOpt,
    console,
    err_console,
    open_cases,
    open_workspace,
    print_json,
)
from skillrag.cli._progress import progress_bar
from skillrag.errors import MalformedSourceError, UserError
from skillrag.harness import HARNESSES, BatchItem, RunResult, make_harness, run_batch, run_case
from skillrag.skill import Case, CaseFile, CaseRecord, SkillRegistry
from skillrag.workspace.files import read_json_file

HarnessOpt = Annotated[
    str | None,
    typer.Option(
        "--harness", help=f"Who reasons: {' | '.join(HARNESSES)} (default: the workspace's harness.harness)."
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="Model id for the llm harness: openai:MODEL, anthropic:MODEL, "
        "openai-compat:MODEL@http://HOST:PORT/v1, test (default: models.default).",
    ),
]
SkillOpt = Annotated[str | None, typer.Option("--skill", "-s", help="Skill name (default: harness.skill).")]
GuidedOpt = Annotated[
    bool | None,
    typer.Option(
        "--guided/--free",
        help="llm harness: force the next workflow tool on every turn (small local models).",
    ),
]


def _out_file(out: str | None) -> Path | None:
    """``run -o``'s value as a file path. A value ending in a path separator names a folder (the
    ``Path`` type would drop the slash and write a file of that name): refused, as ``output_paths``
    refuses an existing folder."""
    if out is None:
        return None
    if not out.strip():
        raise UserError("-o/--out is empty: give the output file's path (e.g. out/c42.json)")
    if out.endswith(("/", os.sep)):
        raise UserError(f"{out}: names a folder; -o takes the output file's path (e.g. {Path(out) / 'c42.json'}); "
                        "for a folder of outputs use run-batch --out DIR")
    return Path(out)


def _read_case(path: Path) -> Case:
    raw = read_json_file(path, "case file")
    if not isinstance(raw, dict):
        raise MalformedSourceError(path, "a case file for --case holds one JSON object")
    try:
        return CaseRecord.model_validate(raw).case()
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(case)"
        raise MalformedSourceError(path, f"{where}: {err['msg']}") from None


@contextmanager
def _interruptible(stop: threading.Event, running: set[str], say) -> Iterator[None]:
    """SIGINT during a batch: the first Ctrl-C sets ``stop`` (no new case starts, running ones
    finish) and says so in one line; a second one abandons the running cases and exits at once
    with 130. ``os._exit`` skips interpreter teardown, so worker threads still inside native code
    (onnxruntime, an HTTP client) cannot abort the process; outputs are written by rename, so an
    abandoned case leaves no half-written file and simply runs again next time."""

    def on_sigint(signum, frame) -> None:
        if not stop.is_set():
            stop.set()
            say(f"interrupt: no new cases will start; waiting for {len(running)} running case(s) to finish "
                "(Ctrl-C again to abandon them)")
            return
        say(f"interrupted again: abandoned {len(running)} running case(s) "
            f"({', '.join(sorted(running)) or 'none'}); run the same command to resume")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)

    if threading.current_thread() is not threading.main_thread():  # signals go to the main thread only
        yield
        return
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _show(res: RunResult) -> None:
    rec = res.record
    if res.output is not None:
        console.print(Panel(res.output["guidance"], title=f"guidance · {rec.case_id}", expand=False))
        table = Table(title="evidence (verbatim)", show_lines=True)
        table.add_column("#", justify="right")
        table.add_column("source")
        table.add_column("snippet")
        table.add_column("why")
        for i, s in enumerate(res.output["snippets"], 1):
            table.add_row(
                str(i), f"{s['source_title']}\n[dim]{s['source_article']}[/dim]", s["text"], s["why"]
            )
        console.print(table)
    style = "green" if res.status == "accepted" else "red"
    model = f" · model {rec.model}" + (" (guided)" if rec.guided else "") if rec.model else ""
    console.print(
        f"[{style}]{res.status}[/{style}] · harness {rec.harness}{model} · {len(rec.queries)} queries · "
        f"{len(rec.fetches)} fetches · {rec.saves} saves ({rec.retries} rejected) · {rec.model_calls} model calls · "
        f"{rec.total_tokens} tokens · {rec.wall_ms / 1000:.2f} s wall, {rec.non_model_ms / 1000:.2f} s non-model"
    )
    if res.output_path is not None:
        console.print(f"output: {res.output_path}")
    console.print(f"record: {res.record_path}")


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        workspace: WorkspaceOpt = None,
        case: Annotated[Path | None, typer.Option("--case", help="One case as a JSON object file.")] = None,
        cases: CasesOpt = None,
        case_id: Annotated[str | None, typer.Option("--case-id", help="Case id in the --cases file.")] = None,
        harness: HarnessOpt = None,
        model: ModelOpt = None,
        skill: SkillOpt = None,
        guided: GuidedOpt = None,
        out: Annotated[
            str | None,
            typer.Option("-o", "--out", help="Output JSON file path (record beside it); not a folder."),
        ] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Run one case: print the guidance and its verbatim evidence, write the output and run record."""
        ws = open_workspace(workspace)
        out_path = _out_file(out)
        cfg = ws.config.harness
        skill_obj = SkillRegistry(ws).get(skill or cfg.skill)
        case_file: CaseFile | None = None
        if case is not None:
            if case_id is not None or cases is not None:
                raise UserError("pass either --case FILE or --cases FILE --case-id ID, not both")
            the_case = _read_case(case)
        else:
            if case_id is None:
                raise UserError(
                    "pass --case FILE, or --case-id ID with --cases FILE (run-batch runs a whole file)"
                )
            case_file = open_cases(ws, cases, skill_obj.config.cases)
            the_case = case_file.load(case_id)
        runner = make_harness(ws, harness or cfg.harness, model, guided=guided)
        res = run_case(ws, the_case, harness=runner, skill=skill_obj, cases=case_file, out_path=out_path)
        if as_json:
            print_json(
                {
                    "status": res.status,
                    "output": res.output,
                    "record": res.record.model_dump(mode="json"),
                    "output_path": res.output_path,
                    "record_path": res.record_path,
                }
            )
        else:
            _show(res)
        if res.status != "accepted":
            err_console.print(f"error: run {res.status}: {res.record.error}", highlight=False, markup=False)
            for reason in res.record.reasons:
                err_console.print(f"  - {reason}", highlight=False, markup=False)
            raise typer.Exit(1)

    @app.command("run-batch")
    def run_batch_cmd(
        workspace: WorkspaceOpt = None,
        cases: CasesOpt = None,
        ids: Annotated[
            str | None, typer.Option("--ids", help="Comma-separated case ids (default: all).")
        ] = None,
        harness: HarnessOpt = None,
        model: ModelOpt = None,
        skill: SkillOpt = None,
        guided: GuidedOpt = None,
        workers: Annotated[
            int | None,
            typer.Option("--workers", "-j", min=1, max=64, help="Cases at once (default: harness.workers)."),
        ] = None,
        out_dir: Annotated[
            Path | None, typer.Option("--out", help="Folder for OUT/<case_id>/ (default: runs/).")
        ] = None,
        force: Annotated[bool, typer.Option("--force", help="Re-run cases already accepted.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Run a case file with N workers and a progress bar; resumes (skips cases already accepted)."""
        ws = open_workspace(workspace)
        cfg = ws.config.harness
        skill_obj = SkillRegistry(ws).get(skill or cfg.skill)
        case_file = open_cases(ws, cases, skill_obj.config.cases)
        id_list = [i.strip() for i in ids.split(",") if i.strip()] if ids else None
        name = harness or cfg.harness
        total = len(id_list) if id_list is not None else len(case_file)
        stop = threading.Event()
        running: set[str] = set()
        with ws.write_lock("run-batch"), progress_bar(
            "[bold]{task.description}", detail="{task.fields[last]}", transient=False, disable=as_json
        ) as progress:
            task = progress.add_task(f"run-batch ({name})", total=total, last="")

            def done(item: BatchItem) -> None:
                running.discard(item.case_id)
                progress.update(task, advance=1, last=f"{item.case_id}: {item.status}")

            def say(line: str) -> None:
                progress.console.print(line, markup=False, highlight=False, soft_wrap=True)

            with _interruptible(stop, running, say):
                report = run_batch(
                    ws,
                    case_file,
                    ids=id_list,
                    harness=name,
                    model=model,
                    guided=guided,
                    skill=skill_obj,
                    workers=workers or cfg.workers,
                    out_dir=out_dir,
                    force=force,
                    on_done=done,
                    on_start=running.add,
                    stop=stop,
                )
        if as_json:
            print_json(report.to_dict())
        else:
            table = Table(title="run-batch")
            for col in ("case", "status", "seconds", "note"):
                table.add_column(col)
            for it in report.items:
                style = {"accepted": "green", "skipped": "dim", "not_started": "yellow"}.get(it.status, "red")
                table.add_row(
                    it.case_id, f"[{style}]{it.status}[/{style}]", f"{it.seconds:.2f}", it.error or ""
                )
            console.print(table)
            console.print(" · ".join(f"{k}: {v}" for k, v in sorted(report.counts().items())))
        if stop.is_set():
            left = report.counts().get("not_started", 0)
            err_console.print(f"interrupted: {left} case(s) not started; run the same command again to resume",
                              markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(130)
        if report.counts().get("error"):
            raise typer.Exit(1)
