"""The ``skillrag`` command. Each command group lives in its own module with a ``register(app)``."""

from __future__ import annotations

import importlib
import sys

import click
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

#: Command modules in the order of the data flow: content → wiki → search → skill → harness → eval → service.
COMMAND_MODULES = ["corpus", "wiki", "search", "skill", "run", "evaluation", "ask", "service"]

for _name in COMMAND_MODULES:
    importlib.import_module(f"skillrag.cli.{_name}").register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI; a ``SkillragError`` becomes one ``error:`` line and exit 1 or 2."""
    try:
        app(args=argv, standalone_mode=False)
    except ContractViolation as exc:
        print(f"error: {exc}", file=sys.stderr)
        for reason in exc.reasons:
            print(f"  - {reason}", file=sys.stderr)
        return 1
    except SkillragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
