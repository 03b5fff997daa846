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


# -- a workspace with a real index and a real (extractive) navigation layer -------------------------
FAMILY = [
    {
        "id": "doc_cards_gold_001",
        "title": "Gold Rewards Card: annual fee",
        "content": (
            "## Fees\n\nThe Gold Rewards Card has an annual fee of $95, waived in the first year.\n\n"
            "## Fees\n\nLate payments on the Gold Rewards Card cost $40.\n"
        ),
    },
    {
        "id": "doc_cards_gold_002",
        "title": "Gold Rewards Card: replacement",
        "content": "## Replacement\n\nReplace a Gold Rewards Card with `order_replacement_card_2231` "
                   "after the card is frozen.\n",
    },
    {
        "id": "doc_cards_(general)_010",
        "title": "Internal: card disputes",
        "content": (
            "# Disputes\n\n## Provisional credit\n\nGive provisional credit within 10 business days "
            "with `file_dispute_7731`.\n\n## Escalation\n\nEscalate disputes above $5,000 to the "
            "payments team.\n"
        ),
    },
]


def make_wiki_workspace(root: Path, *, backend: str = "wiki") -> Workspace:
    """A workspace (hash embedder, no model download) holding ARTICLES + FAMILY, with an extractive
    navigation layer and both search indexes built; the skill's backend is ``backend``."""
    from skillrag.search import build_index
    from skillrag.wiki import build_wiki
    from skillrag.workspace.config import WorkspaceConfig

    cfg = WorkspaceConfig.model_validate({"search": {"backend": backend, "embedder": "hash"}})
    w = Workspace.init(root / "ws", config=cfg)
    src = root / "src" / "kb"
    src.mkdir(parents=True)
    (src / "articles.json").write_text(json.dumps(ARTICLES + FAMILY), encoding="utf-8")
    ingest(w, [src])
    build_wiki(w, builder="extractive")
    build_index(w, backend="wiki")
    return w


@pytest.fixture
def wiki_ws(tmp_path: Path) -> Workspace:
    return make_wiki_workspace(tmp_path)
