"""Prompt files of the service (``skillrag/service/prompts/*.md``), with placeholders checked at load."""

from __future__ import annotations

from skillrag.models import PromptSet

__all__ = ["PROMPT_FIELDS", "load_prompt"]

#: The named placeholders each prompt must contain, exactly.
PROMPT_FIELDS: dict[str, frozenset[str]] = {
    "condense": frozenset({"history", "question"}),
    "chat": frozenset({"web_note", "max_rounds", "max_tool_calls"}),
}


#: The service's prompts, loaded and filled by the one loader (``skillrag.models.PromptSet``).
_SET = PromptSet("skillrag.service", PROMPT_FIELDS)
load_prompt = _SET.load
