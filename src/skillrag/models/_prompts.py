"""The one prompt loader: packaged prompt files (``<package>/prompts/<name>.md``) with named placeholders
checked when loaded and when filled.

A feature declares its prompts once, as a ``PromptSet``: the package that ships them, each prompt's
placeholders (exactly these, no more, no fewer) and their syntax, ``"format"`` (``{name}``, ``{{`` for a
brace; ``str.format``) or ``"template"`` (``${name}``, ``$$`` for a dollar; ``string.Template``). Every
failure is one ``ConfigError`` line naming the file: an unknown prompt, a missing file, a malformed or
drifted placeholder, a value missing or unknown when rendering.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from skillrag.errors import ConfigError

__all__ = ["Prompt", "PromptSet", "package_text"]

Style = Literal["format", "template"]


def package_text(package: str, *parts: str) -> str:
    """The UTF-8 text of the data file ``parts`` inside ``package`` (``package_text("skillrag.service",
    "templates", "review", "review.js")``); ``ConfigError`` naming it when it is missing."""
    try:
        return resources.files(package).joinpath(*parts).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ConfigError(f"{package}: packaged file {'/'.join(parts)} is missing") from None


def _placeholders(text: str, style: Style, where: str) -> frozenset[str]:
    if style == "template":
        tmpl = string.Template(text)
        if not tmpl.is_valid():
            raise ConfigError(f"prompt {where}: malformed placeholder (use ${{name}}; $$ for a dollar)")
        return frozenset(tmpl.get_identifiers())
    try:
        return frozenset(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)
    except ValueError as e:
        raise ConfigError(f"prompt {where}: malformed placeholder ({e}; write {{{{ and }}}} for a literal brace)") from None


@dataclass(frozen=True)
class Prompt:
    """One loaded prompt: ``template`` is the file's text, ``fields`` its placeholders."""

    name: str
    template: str
    fields: frozenset[str]
    style: Style = "format"
    where: str = ""

    def render(self, **values: object) -> str:
        """The prompt with every placeholder filled (``str(value)``); ``ConfigError`` when a value is
        missing or names no placeholder."""
        missing, extra = sorted(self.fields - set(values)), sorted(set(values) - self.fields)
        if missing:
            raise ConfigError(f"prompt {self.where or self.name}: no value for {', '.join(missing)}")
        if extra:
            raise ConfigError(f"prompt {self.where or self.name}: unknown value(s) {', '.join(extra)}")
        if self.style == "template":
            return string.Template(self.template).substitute({k: str(v) for k, v in values.items()})
        return self.template.format(**values)


class PromptSet:
    """The prompts of one package: ``fields`` maps a prompt's name (its file is ``prompts/<name>.md``, or
    ``prompts/<name>`` when the name has a suffix) to the placeholders the file must use, exactly."""

    def __init__(self, package: str, fields: Mapping[str, frozenset[str]], *, style: Style = "format") -> None:
        self.package, self.fields, self.style = package, fields, style
        self._loaded: dict[tuple[str, frozenset[str]], Prompt] = {}

    def load(self, name: str) -> Prompt:
        """Prompt ``name``, read once per declaration (a changed ``fields`` entry is checked again).
        Raises ``ConfigError``: unknown name, missing file, placeholders that differ from ``fields[name]``."""
        want = self.fields.get(name)
        if want is None:
            raise ConfigError(f"unknown prompt {name!r} of {self.package} (known: {', '.join(self.fields)})")
        key = (name, frozenset(want))
        if key not in self._loaded:
            file = name if "." in name else f"{name}.md"
            where = f"{self.package}/prompts/{file}"
            text = package_text(self.package, "prompts", file)
            found = _placeholders(text, self.style, where)
            if found != want:
                raise ConfigError(f"prompt {where}: placeholders differ (missing: {sorted(want - found)}, "
                                  f"unknown: {sorted(found - want)})")
            self._loaded[key] = Prompt(name, text, found, self.style, where)
        return self._loaded[key]

    def render(self, name: str, **values: object) -> str:
        """``load(name).render(**values)``."""
        return self.load(name).render(**values)
