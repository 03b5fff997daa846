"""Fixtures for the skill tests: a small workspace with hand-written articles (no shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.corpus import ingest
from skillrag.skill import CaseRecord, Message, SkillRegistry, write_cases
from skillrag.skill.cases import _GroundTruthBody
from skillrag.workspace import Workspace

ARTICLES = [
    {
        "id": "art_card_lost",
        "title": "Lost or stolen debit cards",
        "content": (
            "## Freezing the card\n\nWhen a customer reports a lost card, freeze it first.\n"
            "The customer\u2019s identity must be verified before any change \u2014 no exceptions.\n\n"
            "## Replacement\n\nOrder a replacement card within 2\u00a0business days.\n"
            "Replacement fees are waived for premium accounts\u2026 see the fee table."
        ),
    },
    {
        "id": "art_fees",
        "title": "Fee table",
        "content": "## Fees\n\nStandard accounts pay a $10 replacement fee.\nPremium accounts pay no fee.",
    },
    {
        "id": "art_other",
        "title": "Internal wire transfers",
        "content": "Wire transfers above $5,000 need a second approver from the payments team.",
    },
]

GT_SECRET = "SECRET-REFERENCE-GUIDANCE-7f3a"


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
            case_id="case_1",
            contact_reason="Customer lost their debit card",
            contact_reason_path=["cards", "lost"],
            case_notes=["Customer called from abroad."],
            case_messages=[Message(role="customer", content="I lost my card yesterday, please help.")],
            ground_truth=_GroundTruthBody(
                reference_guidance=GT_SECRET,
                required_documents=["art_card_lost"],
                expected_tools=["freeze_card_tool_9911"],
                expected_actions=[{"name": "freeze_card_tool_9911", "arguments": {"x": 1}}],
            ),
        ),
        CaseRecord(case_id="case_2", contact_reason="Wire transfer limits"),
    ]
    p = tmp_path / "cases.jsonl"
    write_cases(p, recs)
    return p


@pytest.fixture
def skill(ws: Workspace):
    return SkillRegistry(ws).get("cs-guidance")


@pytest.fixture
def gt_secret() -> str:
    return GT_SECRET
