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


# --- a small knowledge base with cases, for scoring saved outputs (eval score) --------------------------

KB = [
    {"id": "kb_card_lost", "title": "Lost or stolen debit cards",
     "content": "## Procedure\n\n1. Verify the customer with two security questions.\n"
                "2. Freeze the card with `freeze_card_4410` and confirm the freeze.\n"
                "3. Order a replacement card with `order_replacement_card_2231`.\n"},
    {"id": "kb_wire", "title": "Wire transfers",
     "content": "Wire transfers above $5,000 need a second approver from the payments team. "
                "Use `submit_wire_9001` only after the second approval is recorded."},
    {"id": "kb_travel", "title": "Using cards abroad",
     "content": "Customers travelling abroad can add a travel notice so card payments are not declined."},
]


def kb_case(cid: str, reason: str, docs: list[str], tools: list[str], ref: str) -> dict:
    return {"case_id": cid, "contact_reason": reason,
            "case_messages": [{"role": "customer", "content": reason}],
            "ground_truth": {"reference_guidance": ref, "required_documents": docs, "expected_tools": tools}}


KB_CASES = [
    kb_case("lost", "Customer lost their debit card and needs it frozen and replaced", ["kb_card_lost"],
            ["freeze_card_4410", "order_replacement_card_2231"], "Verify, freeze_card_4410, then replace."),
    kb_case("wire", "Customer wants to send a wire transfer of $8,000", ["kb_wire"], ["submit_wire_9001"],
            "Get a second approver, then submit_wire_9001."),
    kb_case("travel", "Customer is travelling to Spain next week", ["kb_travel"], [], "Add a travel notice."),
    kb_case("stolen", "Customer's card was stolen", ["kb_card_lost"], ["freeze_card_4410"], "Freeze it."),
]


def kb_output(cid: str, snippets: list[tuple[str, str]], guidance: str = "1. Do it.") -> dict:
    snips = [{"source_article": a, "source_title": a, "text": t, "why": "step"} for a, t in snippets]
    return {"case_id": cid, "guidance": guidance, "snippets": snips, "n_snippets": len(snips),
            "articles_consulted": sorted({a for a, _ in snippets})}


@pytest.fixture
def kb(tmp_path: Path) -> tuple[Workspace, Path]:
    """A workspace holding ``KB`` and a case file of ``KB_CASES``: ``(ws, cases_path)``."""
    from skillrag.corpus import ingest

    w = Workspace.init(tmp_path / "kbws")
    src = tmp_path / "kbsrc"
    src.mkdir()
    (src / "kb.json").write_text(json.dumps(KB), encoding="utf-8")
    ingest(w, [src])
    cases = tmp_path / "kb_cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in KB_CASES), encoding="utf-8")
    return w, cases


def save_run(runs: Path, cid: str, output: dict | str | None = None, record: dict | None = None) -> None:
    """Write ``runs/CID/output.json`` (a dict, or raw text) and/or ``record.json`` as a harness would."""
    folder = runs / cid
    folder.mkdir(parents=True, exist_ok=True)
    if output is not None:
        text = output if isinstance(output, str) else json.dumps(output)
        (folder / "output.json").write_text(text, encoding="utf-8")
    if record is not None:
        (folder / "record.json").write_text(json.dumps(record), encoding="utf-8")
