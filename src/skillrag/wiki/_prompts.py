"""Prompt files of the wiki package, loaded with their named placeholders checked."""

from __future__ import annotations

from skillrag.models import Prompt, PromptSet

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


#: The wiki's prompts, loaded and filled by the one loader (``skillrag.models.PromptSet``).
_SET = PromptSet("skillrag.wiki", EXPECTED)
load_prompt = _SET.load
