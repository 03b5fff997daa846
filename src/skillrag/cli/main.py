"""The ``skillrag`` command. Each command group lives in its own module with a ``register(app)``."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from skillrag.errors import ContractViolation, SkillragError

__all__ = ["app", "main"]

app = typer.Typer(
    name="skillrag",
    help="Grounded, auditable guidance from operational documents, as a portable agent skill.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)



@app.callback()
def _root(
    workspace: Annotated[
        Path | None,
        typer.Option("-w", "--workspace", help="Workspace folder for every command (same as each command's -w).",
                     show_default=False),
    ] = None,
) -> None:
    """Grounded, auditable guidance from operational documents, as a portable agent skill."""
    if workspace is not None:
        os.environ["SKILLRAG_WORKSPACE"] = str(workspace)


#: Command modules in the order of the data flow: content → wiki → search → skill → harness → eval → service.
COMMAND_MODULES = ["corpus", "demo", "wiki", "search", "skill", "run", "evaluation", "ask", "service"]

for _name in COMMAND_MODULES:
    importlib.import_module(f"skillrag.cli.{_name}").register(app)


#: What click raises for bad command-line input: typer ≥ 0.26 vendors click and raises its errors as
#: ``typer.TyperException``; older typer raises click's own ``ClickException``.
if hasattr(typer, "TyperException"):
    _CLI_ERRORS: tuple[type[Exception], ...] = (typer.TyperException,)
else:  # pragma: no cover - older typer
    import click

    _CLI_ERRORS = (click.ClickException,)


def _usage_line(exc: Exception) -> str:
    """A click usage or parameter error as one line: ``error: <message> (try: <command> --help)``."""
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    message = "; ".join(line.strip() for line in text.splitlines() if line.strip())
    ctx = getattr(exc, "ctx", None)
    hint = ""
    if getattr(exc, "exit_code", 1) == 2 and ctx is not None and ctx.command.get_help_option(ctx) is not None:
        hint = f" (try: {ctx.command_path} {ctx.help_option_names[0]})"
    return f"error: {message}{hint}"


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and return its exit status.

    A usage or parameter error (unknown option, missing argument, value out of range) is one
    ``error:`` line and exit 2; a ``SkillragError`` one ``error:`` line and exit 1 (a rejected
    output, its reasons listed once each) or 2; Ctrl-C exits 130. ``--help`` is typer's rich help.
    ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``) turns traces on for the command (``skillrag.tracing``)."""
    try:
        # traces: the OpenTelemetry SDK from the standard OTEL_* variables; off (a no-op) when they ask for none
        from skillrag.tracing import setup_tracing

        setup_tracing()
        # standalone_mode=False: click raises its usage errors to us instead of printing typer's
        # boxed rich panel, and returns the code of any `typer.Exit` (a Ctrl-C inside typer is Exit(130)).
        result = app(args=argv, prog_name="skillrag", standalone_mode=False)
    except SystemExit as exc:  # a command that calls sys.exit itself
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except _CLI_ERRORS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `skillrag` or `skillrag wiki` alone: help was printed
            return 2
        print(_usage_line(exc), file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except typer.Abort:  # EOF at a prompt, or typer.Abort
        print("error: aborted", file=sys.stderr)
        return 1
    except ContractViolation as exc:  # each reason once: one line for one, else a count and the list
        if len(exc.reasons) <= 1:
            print(f"error: {exc}", file=sys.stderr)
        else:
            print(f"error: {exc.subject} rejected: {len(exc.reasons)} reasons", file=sys.stderr)
            for reason in exc.reasons:
                print(f"  - {reason}", file=sys.stderr)
        return 1
    except SkillragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unwritable or vanished path the user named: one line, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
