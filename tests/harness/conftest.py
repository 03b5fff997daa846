"""Fixtures for the harness tests: a small workspace with hand-written articles and cases, and a
retriever double, so no test needs a search index, a model or the network."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic_ai.models
import pytest

from skillrag.corpus import ingest
from skillrag.skill import CaseFile, CaseRecord, Message, SkillRegistry, write_cases
from skillrag.skill.testing import FakeRetriever
from skillrag.workspace import Workspace

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

ARTICLES = [
    {
        "id": "kb_card_lost",
        "title": "Lost or stolen debit cards",
        "content": (
            "## When a card is reported lost\n\n"
            "A lost debit card must be frozen before anything else is changed.\n\n"
            "## Procedure\n\n"
            "1. Verify the customer\u2019s identity with two security questions.\n"
            "2. Freeze the card with `freeze_card_4410` and confirm the freeze to the customer.\n"
            "3. Order a replacement card with `order_replacement_card_2231`.\n"
            "4. Tell the customer the replacement arrives within 5 business days.\n\n"
            "## Fees\n\n"
            "- Standard accounts pay a $10 replacement fee.\n"
            "- Premium accounts never pay a replacement fee.\n"
        ),
    },
    {
        "id": "kb_card_travel",
        "title": "Using cards abroad",
        "content": (
            "Customers travelling abroad can add a travel notice so card payments are not declined.\n"
            "If the card was lost abroad, an emergency card can be sent to a hotel address within 2 days. "
            "Emergency cards cost $25 unless the account is premium. The customer must give a full street address."
        ),
    },
    {
        "id": "kb_wire",
        "title": "Wire transfers",
        "content": (
            "## Limits\n\n"
            "Wire transfers above $5,000 need a second approver from the payments team.\n"
            "Use `submit_wire_9001` only after the second approval is recorded."
        ),
    },
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = Workspace.init(tmp_path / "ws")
    src = tmp_path / "src" / "kb"
    src.mkdir(parents=True)
    (src / "articles.json").write_text(json.dumps(ARTICLES), encoding="utf-8")
    ingest(w, [src])
    return w


@pytest.fixture
def cases_path(tmp_path: Path) -> Path:
    recs = [
        CaseRecord(
            case_id="case_lost",
            contact_reason="Customer lost their debit card while travelling and needs a new one",
            contact_reason_path=["cards", "lost card"],
            case_notes=["Customer is in Lisbon until Friday and has a standard account."],
            case_messages=[
                Message(role="customer", content="I lost my card abroad yesterday. Can you freeze it?")
            ],
        ),
        CaseRecord(case_id="case_wire", contact_reason="Customer wants to send a wire transfer of $8,000"),
    ]
    p = tmp_path / "cases.jsonl"
    write_cases(p, recs)
    return p


@pytest.fixture
def cases(cases_path: Path) -> CaseFile:
    return CaseFile(cases_path)


@pytest.fixture
def skill(ws: Workspace):
    return SkillRegistry(ws).get("cs-guidance")


@pytest.fixture
def retriever(ws: Workspace) -> FakeRetriever:
    return FakeRetriever(ws)
