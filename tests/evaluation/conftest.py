"""Fixtures for evaluation tests: a tiny case file with ground truth and an empty workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic_ai.models
import pytest

from skillrag.workspace import Workspace

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

TOOLS = ["log_verification", "transfer_funds_between_bank_accounts_1234", "transfer_to_human_agents"]


def make_cases(n: int) -> list[dict]:
    cases = []
    for i in range(n):
        cases.append({
            "case_id": f"case_{i:02d}",
            "contact_reason": f"Customer {i} asks to move money between accounts",
            "case_notes": [f"note {i}"],
            "case_messages": [{"role": "customer", "content": f"Please move $10{i} to savings."}],
            "ground_truth": {
                "reference_guidance": "Verify the customer, then transfer the funds.",
                "required_documents": [f"doc_{i}_a", f"doc_{i}_b"],
                "expected_tools": TOOLS[: 1 + i % 3],
                "expected_actions": [],
            },
        })
    return cases


@pytest.fixture
def case_path(tmp_path: Path) -> Path:
    p = tmp_path / "cases.jsonl"
    p.write_text("".join(json.dumps(c) + "\n" for c in make_cases(12)), encoding="utf-8")
    return p


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.init(tmp_path / "ws")
