"""Disagreeing sources are surfaced side by side with citations, never arbitrated."""

from skillrag.evidence import State, answer_question
from skillrag.evidence.model import Claim
from skillrag.evidence.testing import make_articles
from skillrag.evidence.verify import find_conflicts


def test_two_articles_disagreeing_on_a_fee_are_both_surfaced(corpus):
    ans = answer_question("What is the late fee of Acme Bank's Gold Card?", articles=corpus)
    assert ans.final_state == State.CONCLUDED
    (conflict,) = ans.conflicts
    assert conflict.subject == "Gold Card" and conflict.attribute == "late fee"
    cited = {(c.article_id, c.normalized) for c in conflict.claims}
    assert cited == {("acme-gold-terms", "usd:25.00"), ("acme-gold-payments", "usd:35.00")}
    for c in conflict.claims:  # each claim cites a verified unit that holds its value
        unit = ans.evidence[c.evidence_index]
        assert unit.article_id == c.article_id and c.value in unit.text
    assert ans.risk_signal == "conflict"
    assert ans.confidence == "low" and ans.sufficient is False
    assert "$25.00" in ans.conclusion and "$35.00" in ans.conclusion and "not arbitrated" in ans.conclusion
    assert any("which value is current" in a for a in ans.suggested_next_actions)
    assert ans.contract is not None and ans.contract.accepted


def test_agreeing_independent_sources_give_high_confidence(corpus):
    ans = answer_question("What is the annual fee of Acme Bank's Gold Card?", articles=corpus)
    assert ans.conflicts == []
    assert {c.normalized for c in ans.claims if c.attribute == "annual fee"} == {"usd:95.00"}
    assert len({u.article_id for u in ans.evidence}) == 2
    assert (ans.confidence, ans.sufficient, ans.risk_signal) == ("high", True, "none")


def test_a_time_window_conflict_is_found_too():
    arts = make_articles(
        [
            (
                "a",
                "Zip Card: disputes",
                "## Disputes\nThe dispute window for the Zip Card at Zip Bank is 60 days.\n",
            ),
            (
                "b",
                "Zip Card: dispute window",
                "## Disputes\nZip Bank gives Zip Card holders a dispute window of 90 days from the statement date.\n",
            ),
        ]
    )
    ans = answer_question("What is the dispute window for Zip Bank's Zip Card?", articles=arts)
    assert ans.risk_signal == "conflict"
    assert {c.normalized for c in ans.conflicts[0].claims} == {"dur:60 day", "dur:90 day"}


def test_ranges_and_different_kinds_are_not_conflicts():
    claims = [
        Claim(
            subject="X",
            attribute="credit limit",
            value="$1 to $5",
            normalized="usd:1.00|usd:5.00",
            evidence_index=0,
            article_id="a",
        ),
        Claim(
            subject="X",
            attribute="credit limit",
            value="$1 to $5",
            normalized="usd:1.00|usd:5.00",
            evidence_index=1,
            article_id="b",
        ),
        Claim(
            subject="X",
            attribute="credit limit",
            value="3%",
            normalized="pct:3",
            evidence_index=1,
            article_id="b",
        ),
        Claim(
            subject="Y",
            attribute="credit limit",
            value="$9",
            normalized="usd:9.00",
            evidence_index=2,
            article_id="c",
        ),
    ]
    assert find_conflicts(claims) == []
