"""Prompt files of the wiki package, loaded with their named placeholders checked."""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from importlib import resources

from skillrag.errors import ConfigError

__all__ = ["Prompt", "load_prompt"]

#: file name -> the placeholders it must use, exactly.
EXPECTED: dict[str, frozenset[str]] = {
    "build_page.md": frozenset(
        {"merge_rule", "family", "link_types", "article_id", "max_steps", "max_sources", "candidates",
         "index", "index_rule", "article_title", "article_source", "article_body"}
    ),
    "build_aspect.md": frozenset(
        {"page_id", "exists", "aspect", "category", "title", "link_types", "max_steps", "members"}
    ),
    "retry.md": frozenset({"reasons", "article_id"}),
    "maintainer_skill.md": frozenset(
        {"variant", "scope", "candidate_pages", "index_lines", "link_types", "max_steps", "max_sources",
         "lease_minutes", "max_candidate_chars", "max_page_chars", "per_source_chars"}
    ),
    "judge_link.md": frozenset(
        {"page_title", "page_id", "link_type", "article_id", "claims", "article_title", "article_body"}
    ),
}


@dataclass(frozen=True)
class Prompt:
    name: str
    template: str
    fields: frozenset[str]

    def render(self, **values: object) -> str:
        """The prompt with every placeholder filled; ``ConfigError`` if one is missing or unknown."""
        given = frozenset(values)
        if given != self.fields:
            missing, extra = sorted(self.fields - given), sorted(given - self.fields)
            raise ConfigError(f"prompt {self.name}: missing {missing}, unexpected {extra}")
        return self.template.format(**values)


@cache
def load_prompt(name: str) -> Prompt:
    """Load ``skillrag/wiki/prompts/<name>`` and check its placeholders against ``EXPECTED``."""
    try:
        text = resources.files("skillrag.wiki").joinpath("prompts", name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no wiki prompt named {name!r}") from None
    fields = frozenset(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)
    want = EXPECTED.get(name)
    if want is None or fields != want:
        raise ConfigError(f"prompt {name}: placeholders {sorted(fields)} do not match {sorted(want or [])}")
    return Prompt(name=name, template=text, fields=fields)
