"""Prompt files of the evidence package (``prompts/*.md``), with ``$name`` placeholders that are
checked when loaded: a file whose placeholders differ from what the code fills is an error."""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

__all__ = ["PROMPTS", "load_prompt", "render"]

#: Prompt name → the placeholders the code fills.
PROMPTS: dict[str, frozenset[str]] = {
    "system": frozenset({"manual"}),
    "subject": frozenset({"question"}),
    "candidates": frozenset({"question", "subject", "articles"}),
    "evidence": frozenset({"question", "subject", "candidates", "articles"}),
    "conclude": frozenset({"question", "subject", "evidence"}),
}


@cache
def load_prompt(name: str) -> Template:
    """The prompt ``prompts/<name>.md``; raises ``ValueError`` when its placeholders are not
    exactly ``PROMPTS[name]`` (or the name is unknown)."""
    if name not in PROMPTS:
        raise ValueError(f"unknown prompt {name!r} (known: {', '.join(sorted(PROMPTS))})")
    text = (resources.files("skillrag.evidence") / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    tpl = Template(text)
    if not tpl.is_valid():
        raise ValueError(f"prompt {name!r}: a `$$` placeholder is malformed")
    found = frozenset(tpl.get_identifiers())
    if found != PROMPTS[name]:
        missing = sorted(PROMPTS[name] - found)
        extra = sorted(found - PROMPTS[name])
        raise ValueError(f"prompt {name!r}: placeholders differ (missing {missing}, unknown {extra})")
    return tpl


def render(name: str, **values: str) -> str:
    """``load_prompt(name)`` filled with ``values`` (exactly its placeholders)."""
    return load_prompt(name).substitute(**values)
