"""Write the generated references in docs/: the configuration tables from the pydantic schemas
(``skillrag.workspace.config.WorkspaceConfig``, ``skillrag.skill.config.SkillConfig``) and the CLI reference from the typer app (``skillrag.cli.main``).

Run ``python docs/gen.py`` after changing a setting or a command; ``tests/test_docs.py`` regenerates both
and fails when the committed files differ. Only the text between the GENERATED markers is rewritten.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

DOCS = Path(__file__).resolve().parent
START, END = "<!-- GENERATED-START (python docs/gen.py) -->", "<!-- GENERATED-END -->"


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell (pipes escaped, line breaks folded)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(t: Any) -> str:
    """A readable name for annotation ``t`` (``int | None``, ``"a" | "b"``, ``list[str]``)."""
    origin = typing.get_origin(t)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in typing.get_args(t))
    if origin in (typing.Union, types.UnionType):
        return " | ".join("None" if a is type(None) else _type(a) for a in typing.get_args(t))
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type(a) for a in typing.get_args(t))}]"
    return getattr(t, "__name__", str(t))


def _range(field: Any) -> str:
    """The field's bounds from its metadata (``≥ 1``, ``≤ 64``)."""
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    out = []
    for m in field.metadata:
        for attr, sign in signs.items():
            if getattr(m, attr, None) is not None:
                out.append(f"{sign} {getattr(m, attr)}")
    return ", ".join(out)


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key, t = f"{prefix}{name}", field.annotation
        if isinstance(t, type) and issubclass(t, BaseModel):
            rows += _rows(t, f"{key}.")
            continue
        args = typing.get_args(t)
        sub = args[-1] if typing.get_origin(t) is dict and args else None
        default = field.get_default(call_default_factory=True)
        default = default.model_dump(mode="json") if isinstance(default, BaseModel) else default
        rows.append(f"| `{key}` | {_cell(_type(t))} | {_cell(json.dumps(default, ensure_ascii=False))} | "
                    f"{_cell(_range(field))} | {_cell(field.description or '')} |")
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            rows += _rows(sub, f"{key}.NAME.")
    return rows


def _table(model: type[BaseModel]) -> str:
    head = "| key | type | default | range | description |\n|---|---|---|---|---|"
    return head + "\n" + "\n".join(_rows(model, ""))


def config_reference() -> str:
    """The tables of every ``skillrag.yaml`` key and every ``skills/NAME/skill.yaml`` key: type, default,
    range and description (with its unit)."""
    from skillrag.skill.config import SkillConfig
    from skillrag.workspace.config import WorkspaceConfig

    return (f"### `skillrag.yaml`\n\n{_table(WorkspaceConfig)}\n\n### `skills/NAME/skill.yaml`\n\n"
            f"A skill's settings; a `null` (the default where the table says so) takes the workspace's setting.\n\n"
            f"{_table(SkillConfig)}")


def _params(cmd: Any) -> str:
    """The command's arguments and options as ``--help`` shows them (usage, then help with default/range/env)."""
    import typer

    ctx = typer.Context(cmd, info_name=cmd.name)
    rows = [r for p in cmd.params if not getattr(p, "hidden", False) and (r := p.get_help_record(ctx))]
    return "| argument / option | help |\n|---|---|\n" + "\n".join(
        f"| `{_cell(usage)}` | {_cell(help_)} |" for usage, help_ in rows)


def _commands(group: Any, path: str) -> list[str]:
    out = []
    for name in sorted(getattr(group, "commands", {})):
        cmd = group.commands[name]
        if cmd.hidden:
            continue
        full = f"{path} {name}"
        out.append(f"### `{full}`\n\n{(cmd.help or '').strip()}")
        if cmd.params and not getattr(cmd, "commands", None):
            out.append(_params(cmd))
        out += _commands(cmd, full)
    return out


def cli_reference() -> str:
    """Every ``skillrag`` command with its help, arguments and options, as the typer app declares them."""
    import typer

    from skillrag.cli.main import app

    root = typer.main.get_command(app)
    root.name = "skillrag"
    return f"`skillrag`: {(root.help or '').strip()}\n\n{_params(root)}\n\n" + "\n\n".join(_commands(root, "skillrag"))


#: Each generated file and what writes its generated part.
TARGETS = {"configuration.md": config_reference, "cli.md": cli_reference}


def render(name: str, text: str | None = None) -> str:
    """The file ``docs/<name>`` with its generated part rewritten (``text``: the file's current text)."""
    text = (DOCS / name).read_text(encoding="utf-8") if text is None else text
    if START not in text or END not in text:
        raise SystemExit(f"error: docs/{name} has no {START} … {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{TARGETS[name]()}\n{END}{tail}"


def main() -> int:
    for name in TARGETS:
        (DOCS / name).write_text(render(name), encoding="utf-8")
        print(f"updated docs/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
