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


#: Two banks with a card of the same name; Brightwater's own documents disagree on its annual fee.
BANKS = [
    (
        "bw-gold",
        "Brightwater Bank Gold Rewards Card",
        "## Fees\nThe Gold Rewards Card from Brightwater Bank has an annual fee of $95.\n- Late fee: $30.00\n",
    ),
    (
        "bw-schedule",
        "Brightwater fee schedule 2025",
        (
            "## Cards\n"
            "Brightwater Bank Gold Rewards Card annual fee: $120\n"
            "Brightwater Bank Gold Rewards Card late fee: $30.00\n"
        ),
    ),
    (
        "bw-business",
        "Brightwater Bank Business Gold Rewards Card",
        "The Business Gold Rewards Card from Brightwater Bank has an annual fee of $250.\n",
    ),
    (
        "hb-gold",
        "Harbor Bank Gold Rewards Card",
        "## Fees\nHarbor Bank's Gold Rewards Card has an annual fee of $0.\n",
    ),
    (
        "hb-fees",
        "Harbor Bank card fees",
        (
            "## Annual fees\n"
            "Harbor Bank's Gold Rewards Card has an annual fee of $0.\n"
            "The annual fee of the Silver Rewards Card is $45.\n"
        ),
    ),
    (
        "gold-rewards-faq",
        "Gold Rewards Card FAQ",
        "The Gold Rewards Card earns 2 points per dollar on groceries.\n",
    ),
]

#: A small telecom help center: policies, procedures and settings rather than named products.
TELECOM = [
    (
        "tc-refuel",
        "Data refueling",
        (
            "## When to refuel\n"
            "When a line has used all of its monthly data, a customer can refuel data for the rest of "
            "the billing cycle.\n\n"
            "## Limits\n"
            "A customer can refuel up to 2 GB of data per billing cycle.\n"
            "Each refuel is charged at $2.00 per GB.\n"
        ),
    ),
    (
        "tc-apn",
        "Fixing MMS: APN settings",
        (
            "## APN settings\n"
            "If picture messages fail to send, check the APN settings on the device against these values:\n"
            "- APN: internet.carrier.example\n"
            "- MMSC URL: http://mms.carrier.example/mmsc\n"
            "- MMS proxy: proxy.carrier.example\n"
        ),
    ),
    (
        "tc-plans",
        "Plans",
        "The Unlimited plan includes 50 GB of data each month. The Basic plan includes 5 GB of data.\n",
    ),
    (
        "tc-roaming",
        "International roaming",
        "Roaming data is billed per MB. A roaming pass adds 1 GB of data for 7 days.\n",
    ),
]


@pytest.fixture
def banks():
    return make_articles(BANKS)


@pytest.fixture
def telecom():
    return make_articles(TELECOM)


#: Issue 21's regression corpus (self-written): Brightwater Bank's card with two conflicting annual
#: fees (one of them only in a table row), a look-alike business card, Harbor Bank's card of the
#: same name beside Brightwater's in one comparison, Brightway Bank's two savings accounts (a
#: sibling product named without its head noun), and a tool page that names an attribute
#: ("data refueling (in GB)") without stating a value.
BRIGHT = [
    (
        "bw-gold",
        "Brightwater Bank Gold Rewards Card",
        "## Fees\nThe Gold Rewards Card from Brightwater Bank has an annual fee of $95.\n",
    ),
    (
        "bw-schedule",
        "Brightwater Bank fee schedule",
        (
            "## Card fees\n"
            "Brightwater Bank charges these fees on its cards.\n\n"
            "| Card | Annual fee | Late fee |\n"
            "|---|---|---|\n"
            "| Gold Rewards Card | $120 | $30 |\n"
            "| Silver Rewards Card | $45 | $25 |\n"
        ),
    ),
    (
        "bw-business",
        "Brightwater Bank Business Gold Rewards Card",
        "The Business Gold Rewards Card from Brightwater Bank has an annual fee of $250.\n",
    ),
    (
        "hb-gold",
        "Harbor Bank Gold Rewards Card",
        "## Fees\nHarbor Bank's Gold Rewards Card has an annual fee of $0.\n",
    ),
    (
        "cards-compare",
        "Comparing Gold Rewards Cards",
        (
            "Harbor Bank and Brightwater Bank both issue a Gold Rewards Card.\n"
            "The Gold Rewards Card from Brightwater Bank has an annual fee of $95, while Harbor Bank's has none.\n"
        ),
    ),
    (
        "bway-everyday",
        "Brightway Bank Everyday Saver Account",
        (
            "## Rates\n"
            "The Everyday Saver Account from Brightway Bank pays an interest rate of 1.10% APY.\n\n"
            "## Compared with Saver Plus\n"
            "Saver Plus pays an interest rate of 4.25% APY on balances over $5,000.\n"
        ),
    ),
    (
        "bway-plus",
        "Brightway Bank Saver Plus Account",
        "The Saver Plus Account from Brightway Bank pays an interest rate of 4.25% APY.\n",
    ),
]

#: A telecom page that names the attribute but states no value of it.
REFUEL_NAME_ONLY = [
    (
        "tc-refuel-tool",
        "Data refueling",
        (
            "## Parameters\n"
            "- gb_amount (number): data refueling (in GB)\n\n"
            "## When to refuel\n"
            "When a line has used all of its monthly data, a customer can refuel data for the rest of "
            "the billing cycle.\n"
        ),
    ),
]


@pytest.fixture
def bright():
    return make_articles(BRIGHT)
