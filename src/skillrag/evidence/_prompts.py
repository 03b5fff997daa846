"""Prompt files of the evidence package (``prompts/*.md``), with ``$name`` placeholders that are
checked when loaded: a file whose placeholders differ from what the code fills is a ``ConfigError``."""

from __future__ import annotations

from skillrag.models import PromptSet

__all__ = ["PROMPTS", "load_prompt", "render"]

#: Prompt name → the placeholders the code fills.
PROMPTS: dict[str, frozenset[str]] = {
    "system": frozenset({"manual"}),
    "subject": frozenset({"question"}),
    "candidates": frozenset({"question", "subject", "articles"}),
    "evidence": frozenset({"question", "subject", "candidates", "articles"}),
    "conclude": frozenset({"question", "subject", "evidence"}),
}


#: The evidence prompts, loaded and filled by the one loader (``skillrag.models.PromptSet``).
_SET = PromptSet("skillrag.evidence", PROMPTS, style="template")
load_prompt = _SET.load
render = _SET.render
