"""Prompt files of the service (``skillrag/service/prompts/*.md``), with placeholders checked at load."""

from __future__ import annotations

import string
from functools import cache
from importlib import resources

from skillrag.errors import ConfigError

__all__ = ["PROMPT_FIELDS", "load_prompt"]

#: The named placeholders each prompt must contain, exactly.
PROMPT_FIELDS: dict[str, frozenset[str]] = {
    "condense": frozenset({"history", "question"}),
    "chat": frozenset({"web_note", "max_rounds", "max_tool_calls"}),
}


@cache
def load_prompt(name: str) -> str:
    """The text of prompt ``name``; raises ``ConfigError`` if its placeholders differ from ``PROMPT_FIELDS``."""
    text = resources.files("skillrag.service").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    found = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    want = PROMPT_FIELDS[name]
    if found != want:
        raise ConfigError(f"prompt {name}.md: placeholders {sorted(found)} but expected {sorted(want)}")
    return text
