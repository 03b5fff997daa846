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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI; a ``SkillragError`` becomes one ``error:`` line and exit 1 or 2."""
    try:
        app(args=argv, standalone_mode=True)
    except SystemExit as exc:  # click's own exit: usage errors print their message and exit 2
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except ContractViolation as exc:
        print(f"error: {exc}", file=sys.stderr)
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
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
