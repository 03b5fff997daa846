"""Issue 21, class 2: `sufficient` needs a quoted span that gives a value of the asked attribute for
the bound subject; code, not the model, finds every candidate span and lists the conflicts.

Corpus: ``BRIGHT`` and ``REFUEL_NAME_ONLY`` in conftest (self-written). One test per failure the
audit found; each failed on the code before the fix."""

from __future__ import annotations

import pytest

from skillrag.evidence import LLMReasoner, State, answer_question
from skillrag.evidence.testing import make_articles, scripted_llm_steps
from skillrag.models.testing import ScriptedModel

from .conftest import BRIGHT, REFUEL_NAME_ONLY, TELECOM


def _ask(question, fixture=BRIGHT, **kw):
    return answer_question(question, articles=make_articles(fixture), **kw)


def _values(ans, attribute):
    return {(c.article_id, c.normalized) for c in ans.claims if c.attribute == attribute}


def test_possessive_owner_before_the_product_keeps_the_conflict():
    # "Brightwater Bank's Gold Rewards Card annual fee": the bank owns the card, the fee is asked;
    # the old grammar took the bank as the subject and answered $120 alone with high confidence
    ans = _ask("What is Brightwater Bank's Gold Rewards Card annual fee?")
    s = ans.subject
    assert (s.name, s.parent_entity, s.attribute) == ("Gold Rewards Card", "Brightwater Bank", "annual fee")
    (conflict,) = ans.conflicts
    assert {(c.article_id, c.normalized) for c in conflict.claims} >= {
        ("bw-gold", "usd:95.00"),
        ("bw-schedule", "usd:120.00"),
    }
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (False, "low", "conflict")
    assert "$95" in ans.conclusion and "$120" in ans.conclusion and "not arbitrated" in ans.conclusion


def test_a_fee_in_a_table_row_is_found():
    # the Silver Rewards Card's fee is stated only in a table: row = the card, column = the fee
    ans = _ask("What is the annual fee of Brightwater Bank's Silver Rewards Card?")
    assert ans.final_state == State.CONCLUDED
    assert _values(ans, "annual fee") == {("bw-schedule", "usd:45.00")}
    (unit,) = [u for u in ans.evidence if u.article_id == "bw-schedule"]
    assert unit.text == "| Silver Rewards Card | $45 | $25 |"  # the verbatim row, not the header
    assert "late fee" not in {c.attribute for c in ans.claims}  # $25 is the late fee's column
    # the Gold card's row of the same table is another subject's: dropped, and said so
    gold = next(d for d in ans.dropped_evidence if d.text.startswith("| Gold Rewards Card"))
    assert gold.reason == "subject mismatch: the span names 'Gold Rewards Card', not 'Silver Rewards Card'"
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (True, "medium", "subject_mismatch")
    assert ans.contract is not None and ans.contract.accepted


def test_the_sibling_products_row_is_not_the_subjects_value():
    ans = _ask("What is the late fee of Brightwater Bank's Gold Rewards Card?")
    assert _values(ans, "late fee") == {("bw-schedule", "usd:30.00")}  # not the Silver card's $25


def test_a_sibling_product_named_without_its_head_noun_is_not_the_subject():
    # "Saver Plus pays … 4.25%" sits in the Everyday Saver article: it is the sibling's rate
    for question in (
        "What is Brightway Bank's Everyday Saver Account interest rate?",
        "What is the interest rate of Brightway Bank's Everyday Saver Account?",
    ):
        ans = _ask(question)
        assert ans.subject.name == "Everyday Saver Account"
        assert _values(ans, "interest rate") == {("bway-everyday", "pct:1.1")}
        assert all("Saver Plus" not in u.text for u in ans.evidence)
        assert any("Saver Plus" in d.reason for d in ans.dropped_evidence)
        assert ans.conflicts == [] and ans.sufficient and ans.risk_signal == "subject_mismatch"


@pytest.mark.parametrize(
    "question",
    [
        "What is the annual fee of Harbor Bank's Gold Rewards Card?",
        "What is the annual fee of Harbor's Gold Rewards Card?",  # no "Bank"
        "What is the annual fee of harbor bank's gold rewards card?",  # lower case
        "what is the annual fee of harbor's gold rewards card?",
    ],
)
def test_another_organisations_card_is_never_bound(question):
    # the comparison says "The Gold Rewards Card from Brightwater Bank has an annual fee of $95":
    # that is Brightwater's card, whatever the question's casing or suffix
    ans = _ask(question)
    assert ans.final_state == State.CONCLUDED
    assert _values(ans, "annual fee") == {("hb-gold", "usd:0.00")}
    assert all("Brightwater Bank has" not in u.text for u in ans.evidence)
    assert "bw-gold" not in {aid for c in ans.candidates for aid in c.article_ids}
    assert ans.conflicts == [] and ans.sufficient


@pytest.mark.parametrize(
    "question",
    [
        "What is the annual fee of brightwater bank's gold rewards card?",
        "what is the annual fee of brightwater's gold rewards card?",
    ],
)
def test_a_lower_case_name_is_matched_as_the_sources_write_it(question):
    # lower case made the name a "topic" matched by stems: the Business card was bound as the subject
    ans = _ask(question)
    (cand,) = ans.candidates
    assert cand.name == "Gold Rewards Card" and "bw-business" not in cand.article_ids
    assert ans.record.steps[0].detail["name_as_written"] == "gold rewards card"
    reasons = {r.article_id: r.reason for r in ans.rejected_candidates}
    assert reasons["bw-business"].startswith("look-alike")
    assert reasons["hb-gold"].startswith("another organisation's")
    assert {c.normalized for cf in ans.conflicts for c in cf.claims} == {"usd:95.00", "usd:120.00"}
    assert ans.sufficient is False and ans.risk_signal == "conflict"


def test_a_dropped_suffix_that_fits_two_organisations_is_ambiguous():
    arts = [
        *BRIGHT,
        (
            "bwcu-gold",
            "Brightwater Credit Union Gold Rewards Card",
            "The Gold Rewards Card from Brightwater Credit Union has an annual fee of $40.\n",
        ),
    ]
    ans = _ask("What is the annual fee of Brightwater's Gold Rewards Card?", arts)
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (False, "low", "ambiguous_subject")
    assert ans.record.steps[1].detail["parent_matches"] == "Brightwater Bank; Brightwater Credit Union"
    assert any(
        "Brightwater Bank" in a and "Brightwater Credit Union" in a for a in ans.suggested_next_actions
    )
    # with the suffix the question is exact again
    exact = _ask("What is the annual fee of Brightwater Credit Union's Gold Rewards Card?", arts)
    assert _values(exact, "annual fee") == {("bwcu-gold", "usd:40.00")} and exact.sufficient


def test_the_attributes_name_alone_is_not_an_answer():
    ans = _ask("How much data can a customer refuel?", REFUEL_NAME_ONLY)
    assert ans.final_state == State.CONCLUDED and ans.evidence  # spans about refueling were found
    assert ans.claims == []
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (False, "low", "insufficient_evidence")
    assert "no quoted span states a value" in ans.confidence_reason
    # the same question over a page that states the amount is answered
    full = _ask("How much data can a customer refuel?", TELECOM)
    assert [c.normalized for c in full.claims] == ["size:2gb"] and full.sufficient


def test_a_value_of_another_kind_is_not_a_value_of_the_attribute():
    arts = [
        (
            "z-card",
            "Zeta Bank Blue Card",
            "## Fees\nThe Blue Card from Zeta Bank: the annual fee is charged in month 12.\n",
        )
    ]
    ans = _ask("What is the annual fee of Zeta Bank's Blue Card?", arts)
    assert not ans.sufficient and ans.risk_signal == "insufficient_evidence"


GOLD = {"type": "credit_card", "name": "Gold Rewards Card", "parent_entity": "Brightwater Bank",
        "attribute": "annual fee"}


def test_a_model_that_cites_one_side_of_a_conflict_still_gets_the_conflict():
    model = ScriptedModel(
        scripted_llm_steps(
            GOLD,
            [
                {
                    "name": "Gold Rewards Card",
                    "article_id": "bw-gold",
                    "name_quote": "The Gold Rewards Card from Brightwater Bank has an annual fee of $95.",
                    "parent_quote": "The Gold Rewards Card from Brightwater Bank has an annual fee of $95.",
                }
            ],
            [
                {
                    "article_id": "bw-gold",
                    "text": "The Gold Rewards Card from Brightwater Bank has an annual fee of $95.",
                    "subject": "Gold Rewards Card",
                }
            ],
            {
                "conclusion": "The annual fee is $95 [0].",
                "answered": True,
                "claims": [{"evidence_index": 0, "attribute": "annual fee", "value": "$95"}],
            },
        )
    )
    ans = _ask(
        "What is the annual fee of Brightwater Bank's Gold Rewards Card?", reasoner=LLMReasoner(model)
    )
    assert model.calls == 4
    (conflict,) = ans.conflicts
    cited = {(c.article_id, c.normalized) for c in conflict.claims}
    assert ("bw-gold", "usd:95.00") in cited and ("bw-schedule", "usd:120.00") in cited
    for c in conflict.claims:  # every value is a verified, quoted unit
        assert c.value in ans.evidence[c.evidence_index].text
    found = [u for u in ans.evidence if u.article_id == "bw-schedule"]
    assert found and found[0].why.startswith("found by code")
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (False, "low", "conflict")
    assert "The annual fee is $95 [0]." != ans.conclusion and "not arbitrated" in ans.conclusion
    assert ans.record.steps[3].detail["found_by_code"] >= 1
    assert ans.contract is not None and ans.contract.accepted


def test_a_model_citing_only_a_name_span_is_not_sufficient():
    model = ScriptedModel(
        scripted_llm_steps(
            {"type": "policy", "name": "data refuel", "attribute": "data"},
            [
                {
                    "name": "data refuel",
                    "article_id": "tc-refuel-tool",
                    "name_quote": "Data refueling",
                }
            ],
            [
                {
                    "article_id": "tc-refuel-tool",
                    "text": "gb_amount (number): data refueling (in GB)",
                    "subject": "data refuel",
                }
            ],
            {"conclusion": "Customers refuel data in GB [0].", "answered": True, "claims": []},
        )
    )
    ans = _ask("How much data can a customer refuel?", REFUEL_NAME_ONLY, reasoner=LLMReasoner(model))
    assert ans.evidence and ans.claims == []
    assert (ans.sufficient, ans.risk_signal) == (False, "insufficient_evidence")
