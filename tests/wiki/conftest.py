"""Fixtures for the wiki tests: a small workspace with three product groups (no shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.corpus import ingest
from skillrag.workspace import Workspace

ARTICLES = {
    'doc_cards_gold_001': (
        'Gold Card: Annual Fee',
        (
            '## Overview\n\nThe Gold Card charges an annual fee that members can have waived.\n\n## Fees\n\nT'
            'he annual fee is $95 and is billed each January.\n\n## Waiver\n\nCustomers with a balance abov'
            'e $5,000 do not pay the annual fee.\n'
        ),
    ),
    'doc_cards_gold_002': (
        'Gold Card: Replacing a Lost Card',
        (
            '## Procedure\n\n1. Verify the customer identity.\n2. Freeze the card with freeze_card_1234.\n3'
            '. Order a replacement card.\n\n## Limits\n\nAt most two replacements are allowed per year.\n'
        ),
    ),
    'doc_cards_gold_003': (
        'Gold Card: Rewards',
        (
            '## How rewards accrue\n\nEvery purchase earns two points per dollar spent on the Gold Card.\n'
            '\n## Eligibility\n\nOnly accounts in good standing earn rewards points.\n'
        ),
    ),
    'doc_savings_blue_001': (
        'Blue Savings: Opening an Account',
        (
            '## Eligibility Requirements\n\nThe customer must be verified and at least 18 years old.\n\n## '
            'Opening Procedure\n\n1. Verify identity.\n2. Use open_account_4821 to open the account.\n'
        ),
    ),
    'doc_savings_blue_002': (
        'Blue Savings: Interest',
        (
            '## How interest is calculated\n\nInterest is compounded daily and credited to the account mo'
            'nthly.\n\n## Rates\n\nThe base APY is 2.0 percent.\n'
        ),
    ),
    'doc_disputes_001': (
        'Disputing a Charge',
        (
            '## Overview\n\nCustomers can dispute a card charge they do not recognise within sixty days.\n'
            '\n## Escalation\n\nContact the disputes team when the merchant refuses a refund.\n'
        ),
    ),
}


def write_corpus(folder: Path, articles: dict[str, tuple[str, str]] = ARTICLES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f in folder.glob("*.json"):
        f.unlink()
    for aid, (title, body) in articles.items():
        (folder / f"{aid}.json").write_text(json.dumps({"id": aid, "title": title, "content": body}), encoding="utf-8")
    return folder


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "src" / "docs")


@pytest.fixture
def ws(tmp_path: Path, corpus_dir: Path) -> Workspace:
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [corpus_dir])
    return ws


@pytest.fixture
def make_ws():
    """``make_ws(root, corpus_dir)``: a second workspace over a corpus folder."""

    def make(root: Path, corpus_dir: Path) -> Workspace:
        ws = Workspace.init(root)
        ingest(ws, [corpus_dir])
        return ws

    return make


@pytest.fixture
def write_articles():
    """``write_articles(folder, articles)``: (re)write a corpus folder."""
    return write_corpus


@pytest.fixture
def articles() -> dict[str, tuple[str, str]]:
    """The fixture corpus: article id -> (title, Markdown body)."""
    return dict(ARTICLES)
