"""Prompt files of the harness (``skillrag/harness/prompts/*.md``), with named ``${placeholders}``.

Each prompt declares the placeholders it must contain (``PROMPTS``); ``load_prompt`` and ``render_prompt``
are the one loader's (``skillrag.models.PromptSet``): a missing or unknown placeholder or value is a
``ConfigError``.
"""

from __future__ import annotations

from skillrag.errors import ConfigError
from skillrag.models import PromptSet

__all__ = ["HARD_CASES", "PROMPTS", "hard_case_method", "load_prompt", "manual_section", "render_prompt"]

#: The heading (its start) of the method section for hard cases in the cs-guidance SKILL.md: the one
#: source of that method, for the skill's readers and for this harness's prompt alike.
HARD_CASES = "Hard cases"

#: prompt name → the placeholders its file must use (exactly these).
PROMPTS: dict[str, frozenset[str]] = {
    "llm_rules": frozenset({"max_queries", "max_fetches", "max_snippets", "max_save_retries"}),
    "llm_task": frozenset({"case_id"}),
}


#: The harness's prompts, loaded and filled by the one loader (``skillrag.models.PromptSet``).
_SET = PromptSet("skillrag.harness", PROMPTS, style="template")
load_prompt = _SET.load
render_prompt = _SET.render


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
