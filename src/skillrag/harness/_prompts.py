"""Prompt files of the harness (``skillrag/harness/prompts/*.md``), with named ``${placeholders}``.

Each prompt declares the placeholders it must contain; ``load_prompt`` checks the file against
that list when it is read (a missing or unknown placeholder is a ``ConfigError``), and
``render_prompt`` fills them (a missing value is a ``ConfigError`` too).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

from skillrag.errors import ConfigError

__all__ = ["HARD_CASES", "PROMPTS", "hard_case_method", "load_prompt", "manual_section", "render_prompt"]

#: The heading (its start) of the method section for hard cases in the cs-guidance SKILL.md: the one
#: source of that method, for the skill's readers and for this harness's prompt alike.
HARD_CASES = "Hard cases"

#: prompt name → the placeholders its file must use (exactly these).
PROMPTS: dict[str, frozenset[str]] = {
    "llm_rules": frozenset({"max_queries", "max_fetches", "max_snippets", "max_save_retries"}),
    "llm_task": frozenset({"case_id"}),
}


@cache
def load_prompt(name: str) -> Template:
    """The prompt ``name`` as a ``string.Template``; raises ``ConfigError`` if the file is missing or
    its placeholders differ from ``PROMPTS[name]``."""
    if name not in PROMPTS:
        raise ConfigError(f"unknown harness prompt {name!r} (known: {', '.join(PROMPTS)})")
    try:
        text = (resources.files("skillrag.harness") / "prompts" / f"{name}.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"harness prompt file prompts/{name}.md is missing") from None
    tmpl = Template(text)
    if not tmpl.is_valid():
        raise ConfigError(f"harness prompt {name}.md: malformed placeholder (use ${{name}}; $$ for a dollar)")
    found = set(tmpl.get_identifiers())
    want = PROMPTS[name]
    if found != want:
        missing, extra = sorted(want - found), sorted(found - want)
        raise ConfigError(
            f"harness prompt {name}.md: placeholders differ (missing: {missing}, unknown: {extra})"
        )
    return tmpl


def render_prompt(name: str, **values: object) -> str:
    """``load_prompt(name)`` filled with ``values``; raises ``ConfigError`` for a missing value."""
    tmpl = load_prompt(name)
    missing = PROMPTS[name] - set(values)
    if missing:
        raise ConfigError(f"harness prompt {name}: no value for {', '.join(sorted(missing))}")
    return tmpl.substitute({k: str(v) for k, v in values.items()})


def manual_section(manual: str, heading: str) -> str | None:
    """The ``## `` section of ``manual`` whose heading starts with ``heading`` (any case), up to the next
    ``## `` heading, or None when it has none."""
    lines = manual.splitlines()
    want = heading.casefold()
    for i, line in enumerate(lines):
        if line.startswith("## ") and line[3:].strip().casefold().startswith(want):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
            return "\n".join(lines[i:end]).strip()
    return None


def hard_case_method(manual: str) -> str:
    """What the harness adds to a skill's manual so its prompt always carries the method for hard cases:
    nothing when the manual has the section (``HARD_CASES``) itself, else that section of the built-in
    cs-guidance SKILL.md (a workspace copy installed before the section existed, or a skill of its own)."""
    if manual_section(manual, HARD_CASES) is not None:
        return ""
    from skillrag.skill.registry import builtin_skills_dir
    from skillrag.skill.spec import read_skill_md

    _, body = read_skill_md(builtin_skills_dir() / "cs-guidance" / "SKILL.md")
    section = manual_section(body, HARD_CASES)
    if section is None:
        raise ConfigError(f"the built-in cs-guidance SKILL.md has no '## {HARD_CASES}' section")
    return section
