from __future__ import annotations

import pytest

import skillrag.harness as harness_pkg
from skillrag.errors import ConfigError
from skillrag.harness import Budgets
from skillrag.harness import _prompts as prompts
from skillrag.workspace.config import BudgetOverrides, HarnessSettings


def test_public_api_is_pinned():
    assert sorted(harness_pkg.__all__) == sorted(
        [
            "HARNESSES",
            "BatchItem",
            "BatchReport",
            "Budgets",
            "Harness",
            "RunFolder",
            "RunRecord",
            "RunResult",
            "RunStatus",
            "Session",
            "Step",
            "is_done",
            "make_harness",
            "output_paths",
            "run_batch",
            "run_case",
            "run_each",
        ]
    )


def test_budgets_resolve_workspace_then_skill_then_override():
    ws = HarnessSettings(max_queries=8, max_fetches=12, max_tokens=1000)
    skill = BudgetOverrides(max_queries=5, max_fetches=None)
    b = Budgets.resolve(ws, skill, {"max_fetches": 2, "max_seconds": None})
    assert (b.max_queries, b.max_fetches, b.max_tokens, b.max_seconds) == (5, 2, 1000, 600.0)
    assert Budgets.resolve(ws, None, Budgets(max_queries=1)).max_queries == 1


def test_prompts_load_and_render_with_their_placeholders():
    text = prompts.render_prompt("llm_task", case_id="c_42")
    assert "`c_42`" in text and "$" not in text
    rules = prompts.render_prompt(
        "llm_rules", max_queries=3, max_fetches=4, max_snippets=15, max_save_retries=2
    )
    assert "at most 3 `retrieve` calls and 4 articles read with `get_article`" in rules
    with pytest.raises(ConfigError, match="no value for case_id"):
        prompts.render_prompt("llm_task")
    with pytest.raises(ConfigError, match="unknown prompt 'nope' of skillrag.harness"):
        prompts.load_prompt("nope")


def test_a_prompt_file_whose_placeholders_drift_is_rejected_at_load(monkeypatch):
    prompts.load_prompt("llm_task")  # loaded (and kept) under the shipped declaration
    monkeypatch.setitem(prompts.PROMPTS, "llm_task", frozenset({"case_id", "case_title"}))
    with pytest.raises(ConfigError, match=r"llm_task.md: placeholders differ \(missing: \['case_title'\]"):
        prompts.load_prompt("llm_task")
