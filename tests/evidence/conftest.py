"""A small fixture corpus written for these tests: two banks with similarly named cards."""

from __future__ import annotations

import pytest

from skillrag.evidence.testing import make_articles

FIXTURE = [
    (
        "acme-gold-terms",
        "Acme Bank Gold Card: key terms",
        (
            "## Fees\n"
            "The Gold Card issued by Acme Bank has an annual fee of $95.\n"
            "- Late fee: $25.00\n"
            "- Foreign transaction fee: 3%\n\n"
            "## Rewards\n"
            "Earn 2% cash back on every purchase.\n"
        ),
    ),
    (
        "acme-gold-payments",
        "Gold Card: late payments",
        (
            "## Late payments\n"
            "Acme Bank charges a late fee of $35.00 on the Gold Card when the minimum payment is missed.\n"
        ),
    ),
    (
        "acme-gold-annual",
        "Gold Card: annual fee",
        "## Annual fee\nAcme Bank bills the Gold Card annual fee of $95 once a year.\n",
    ),
    (
        "zenith-gold",
        "Zenith Gold Card",
        "The Gold Card from Zenith Bank has an annual fee of $0 and a late fee of $15.00.\n",
    ),
    (
        "acme-platinum",
        "Acme Bank Platinum Card",
        (
            "Acme Bank's Platinum Card costs $450 a year.\n\n"
            "## Business\nThe Business Gold Card from Acme Bank has an annual fee of $150.\n"
        ),
    ),
    (
        "gold-card-rewards",
        "Gold Card: rewards",
        "## Rewards\nThe Gold Card earns 3% cash back on dining, with no cap.\n",
    ),
    (
        "acme-founder",
        "About Acme Bank",
        "## History\nMaria Lopez, the founder of Acme Bank, studied law in Madrid.\n",
    ),
]


@pytest.fixture
def corpus():
    return make_articles(FIXTURE)
