"""Values, the kinds an attribute asks for, zeros in words, and the rule a sentence states."""

import pytest

from skillrag.text import ALL_KINDS, find_values, has_figure, rule_of, value_kinds, zero_value


def test_values_are_normalised_for_comparison():
    vals = find_values("fee $1,032.50, APR 17.99 %, window 105 days and 2-hour reply")
    assert [v.normalized for v in vals] == ["usd:1032.50", "pct:17.99", "dur:105 day", "dur:2 hour"]


def test_money_ends_at_its_last_digit_and_dates_are_values():
    vals = find_values("An annual fee of $95, then $5,000 from March 3, 2025 (or 2025-03-04; 1 Apr 2025).")
    assert [(v.text, v.normalized) for v in vals] == [
        ("$95", "usd:95.00"),
        ("$5,000", "usd:5000.00"),
        ("March 3, 2025", "date:2025-03-03"),
        ("2025-03-04", "date:2025-03-04"),
        ("1 Apr 2025", "date:2025-04-01"),
    ]
    assert find_values("2025-02-30") == []  # not a date


def test_money_in_words_and_other_currencies_is_money():
    """The save warnings (``skill.gaps``) read "25 USD" and "10 percent" as amounts while the ask
    flow read only "$": one reading now."""
    vals = find_values("25 USD, 30 dollars, €12, £3.50, ¥500 and 10 percent")
    assert [(v.kind, v.normalized) for v in vals] == [
        ("money", "usd:25.00"), ("money", "usd:30.00"), ("money", "eur:12.00"), ("money", "gbp:3.50"),
        ("money", "jpy:500.00"), ("pct", "pct:10")]


def test_counts_only_when_asked():
    assert find_values("Up to 4 cards and 3 attempts") == []
    got = find_values("Up to 4 cards and 3 attempts", ALL_KINDS)
    assert [v.normalized for v in got] == ["count:4 card", "count:3 attempt"]


@pytest.mark.parametrize(
    ("attribute", "kinds"),
    [
        ("annual fee", {"money", "pct"}),
        ("interest rate", {"pct"}),
        ("dispute window", {"dur"}),
        ("MMSC URL", {"url"}),
        ("data", {"size"}),
        ("due date", {"date"}),
        ("late charges", {"money", "pct"}),  # a Snowball stem: "charges" is "charge"
        ("points earn", None),
        (None, None),
    ],
)
def test_the_kinds_of_value_an_attribute_asks_for(attribute, kinds):
    got = value_kinds(attribute)
    assert (set(got) if got is not None else None) == kinds


def test_a_zero_stated_in_words():
    kinds = value_kinds("annual fee")
    text = "There is no annual fee."
    a = text.index("annual")
    z = zero_value(text, a, a + len("annual fee"), kinds)
    assert z is not None and (z.text, z.normalized) == ("no annual fee", "usd:0.00")
    label = "Annual fee: none"
    assert zero_value(label, 0, len("Annual fee:"), kinds).normalized == "usd:0.00"
    assert zero_value("The annual fee is waived", 4, 14, kinds) is None  # waived is a condition
    assert zero_value(text, a, a + 10, value_kinds("grace period")) is None  # a duration has no zero word


def test_rules_limit_before_amount_before_condition():
    assert rule_of("Premium accounts never pay a fee.").kind == "condition"
    assert rule_of("Refunds post within 5 business days.").kind == "limit"
    assert rule_of("The fee is $10.").kind == "amount"
    assert rule_of("Add the card to your wallet.") is None
    # a duration written with a hyphen is an amount, as find_values reads it (the harness's own
    # amount rule missed "30-day" and "minutes")
    assert rule_of("Communicate the 30-day funding window.").kind == "amount"


def test_a_figure_is_any_digit_or_sign():
    assert has_figure("Tier 2") and has_figure("$") and not has_figure("no figures here")
