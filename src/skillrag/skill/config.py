"""``skill.yaml``: the typed settings of one skill (retrieval, budgets, sources, snippet limits)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillrag.skill.contract import ContractLimits
from skillrag.workspace.config import MAX_K, BudgetOverrides, load_yaml_model

__all__ = ["SkillConfig", "load_skill_config"]


class SkillConfig(BaseModel):
    """The whole of a skill's ``skill.yaml``. Unknown settings are errors (``extra="forbid"``)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["wiki", "direct"] | None = Field(
        None, description="Retrieval backend for `retrieve`; none = the workspace's search.backend."
    )
    mode: Literal["hybrid", "bm25", "dense"] | None = Field(
        None, description="Retrievers fused by `retrieve`; none = the workspace's search.mode."
    )
    k: int = Field(10, ge=1, le=MAX_K, description="Results per `retrieve` call, in article ids.")
    pages: int = Field(
        3, ge=0, le=50, description="Navigation pages per `retrieve` call (wiki backend only; 0 = none)."
    )
    page_articles: int = Field(
        8, ge=0, le=MAX_K, description="Articles each page of a compact `retrieve` result lists, best-matching "
        "the query first (the rest are counted; `--detail pages` or `--page` lists them all)."
    )
    max_snippets: int = Field(15, ge=1, le=200, description="Most snippets one output may carry.")
    min_snippets: int = Field(1, ge=0, description="Fewest snippets one output must carry.")
    min_snippet_chars: int = Field(15, ge=1, description="Shortest snippet, in characters (normalised).")
    max_snippet_chars: int = Field(2000, ge=1, description="Longest snippet, in characters (normalised).")
    allowed_sources: list[str] | None = Field(
        None, description="Source tags the skill may search, read and cite; none = every source."
    )
    cases: str | None = Field(None, description="Default case file (JSONL), relative to the workspace root.")
    web_mode: Literal["off", "fallback", "always"] | None = Field(
        None,
        description="Web search for `skillrag serve`: off, fallback (only when retrieval finds nothing relevant, "
        "at most once per turn) or always; none = the workspace's service.skill_web setting, else off.",
    )
    web_allowlist: list[str] | None = Field(
        None, description="Hosts (and their subdomains) the web fallback may search and fetch; none = no host."
    )
    budgets: BudgetOverrides = Field(
        default_factory=BudgetOverrides,
        description="Per-case budgets of this skill; a null one = the workspace's `harness` setting of that name.")

    def limits(self) -> ContractLimits:
        """The evidence-contract limits this skill imposes on ``save_output``."""
        return ContractLimits(
            max_snippets=self.max_snippets,
            min_snippets=self.min_snippets,
            min_snippet_chars=self.min_snippet_chars,
            max_snippet_chars=self.max_snippet_chars,
        )


def load_skill_config(path: Path) -> SkillConfig:
    """Read ``skill.yaml`` (a missing file = all defaults); raises ``ConfigError`` naming the
    file and the first bad setting."""
    return load_yaml_model(path, SkillConfig, missing_ok=True)
