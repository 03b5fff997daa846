"""The llm reasoner with scripted models: the model extracts and judges, code validates each step."""

import pytest
from pydantic_ai.messages import ModelRequest, SystemPromptPart

from skillrag.errors import ConfigError, ModelError
from skillrag.evidence import LLMReasoner, State, _prompts, answer_question
from skillrag.evidence.testing import scripted_llm_steps
from skillrag.models.testing import ScriptedModel, call, retry_prompts

Q_LATE = "What is the late fee of Acme Bank's Gold Card?"
SUBJECT = {"type": "credit_card", "name": "Gold Card", "parent_entity": "Acme Bank", "attribute": "late fee"}
CANDS = [
    {
        "name": "Gold Card",
        "article_id": "acme-gold-terms",
        "name_quote": "The Gold Card issued by Acme Bank has an annual fee of $95.",
        "parent_quote": "The Gold Card issued by Acme Bank",
    },
    {
        "name": "Gold Card",
        "article_id": "acme-gold-payments",
        "name_quote": "on the Gold Card",
        "parent_quote": "Acme Bank charges a late fee",
    },
    # a look-alike the model should not have proposed: the gate refuses it
    {
        "name": "Gold Card",
        "article_id": "zenith-gold",
        "name_quote": "The Gold Card from Zenith Bank",
        "parent_quote": "Acme Bank",
    },
]


def _system_prompt(model: ScriptedModel) -> str:
    first = model.requests[0][0]
    assert isinstance(first, ModelRequest)
    return "\n".join(p.content for p in first.parts if isinstance(p, SystemPromptPart))


def test_model_steps_inside_the_machine_surface_a_conflict(corpus):
    model = ScriptedModel(
        scripted_llm_steps(
            SUBJECT,
            CANDS,
            [
                {
                    "article_id": "acme-gold-terms",
                    "text": "Late fee: $25.00",
                    "subject": "Gold Card",
                    "why": "fee list",
                },
                {
                    "article_id": "acme-gold-payments",
                    "text": "Acme Bank charges a late fee of $35.00 on the Gold Card",
                    "subject": "Gold Card",
                    "why": "late payments",
                },
                {"article_id": "acme-gold-terms", "text": "Late fee: $25.00", "subject": "Platinum Card"},
                {"article_id": "acme-gold-terms", "text": "Late fee: $20.00", "subject": "Gold Card"},
            ],
            {
                "conclusion": "The sources disagree: $25.00 [0] and $35.00 [1].",
                "answered": True,
                "claims": [
                    {"evidence_index": 0, "attribute": "late fee", "value": "$25.00"},
                    {"evidence_index": 1, "attribute": "late fee", "value": "$35.00"},
                    {"evidence_index": 1, "attribute": "late fee", "value": "$45.00"},
                ],
                "suggested_next_actions": ["Ask the card team which late fee applies."],
            },
        )
    )
    ans = answer_question(Q_LATE, articles=corpus, reasoner=LLMReasoner(model, manual="MANUAL-MARKER"))
    assert model.calls == 4
    assert "MANUAL-MARKER" in _system_prompt(model)
    assert ans.harness == "llm" and ans.note is None and ans.record.tokens > 0
    assert ans.final_state == State.CONCLUDED
    # the model's look-alike is refused; the articles it left out are bound by code (complete list)
    assert sorted(r.article_id for r in ans.rejected_candidates) == [
        "acme-platinum",
        "gold-card-rewards",
        "zenith-gold",
    ]
    assert "acme-gold-annual" in ans.candidates[0].article_ids
    assert ans.record.steps[1].detail["bound_by_code"] == 3
    assert [u.text for u in ans.evidence] == [
        "Late fee: $25.00",
        "Acme Bank charges a late fee of $35.00 on the Gold Card",
    ]
    assert sorted(d.reason.split(":")[0] for d in ans.dropped_evidence) == [
        "not a verbatim substring of the article body",
        "subject drift",
    ]
    (conflict,) = ans.conflicts
    assert {c.normalized for c in conflict.claims} == {"usd:25.00", "usd:35.00"}
    assert "$45.00" not in {c.value for c in ans.claims}  # a claim not in its unit is refused
    assert ans.risk_signal == "conflict" and ans.sufficient is False
    assert "Ask the card team which late fee applies." in ans.suggested_next_actions
    assert ans.contract.accepted
    # the conclusion over a conflict is code's listing, not the model's text
    assert ans.conclusion.startswith("The sources disagree and the disagreement is not arbitrated")
    assert "[0]" not in ans.conclusion and ans.record.steps[-1].detail["model_conclusion_withheld"] is True


def test_a_model_conclusion_that_picks_one_side_of_a_conflict_is_not_passed_through(corpus):
    model = ScriptedModel(
        scripted_llm_steps(
            SUBJECT,
            CANDS[:2],
            [
                {"article_id": "acme-gold-terms", "text": "Late fee: $25.00", "subject": "Gold Card"},
                {
                    "article_id": "acme-gold-payments",
                    "text": "Acme Bank charges a late fee of $35.00 on the Gold Card",
                    "subject": "Gold Card",
                },
            ],
            {
                "conclusion": "The late fee is $35.00: the late-payments page is the newer one.",
                "answered": True,
                "claims": [{"evidence_index": 1, "attribute": "late fee", "value": "$35.00"}],
            },
        )
    )
    ans = answer_question(Q_LATE, articles=corpus, reasoner=LLMReasoner(model))
    assert ans.risk_signal == "conflict" and ans.sufficient is False and ans.confidence == "low"
    assert "newer one" not in ans.conclusion
    assert "$25.00" in ans.conclusion and "$35.00" in ans.conclusion and "not arbitrated" in ans.conclusion
    assert {c.normalized for c in ans.conflicts[0].claims} == {"usd:25.00", "usd:35.00"}
    assert ans.record.steps[-1].detail["model_conclusion_withheld"] is True


def test_not_found_stops_after_the_gate_with_no_further_model_call(corpus):
    model = ScriptedModel(
        scripted_llm_steps(
            {
                "type": "credit_card",
                "name": "Gold Card",
                "parent_entity": "Harbor Bank",
                "attribute": "annual fee",
            },
            [
                {
                    "name": "Gold Card",
                    "article_id": "zenith-gold",
                    "name_quote": "The Gold Card from Zenith Bank",
                    "parent_quote": "Zenith Bank",
                }
            ],
        )
    )
    ans = answer_question(
        "What is the annual fee of Harbor Bank's Gold Card?", articles=corpus, reasoner=LLMReasoner(model)
    )
    assert model.calls == 2  # subject + candidates; a third request would exhaust the script
    assert ans.final_state == State.SUBJECT_NOT_FOUND
    assert ans.rejected_candidates[0].reason == (
        "another organisation's: 'Zenith Bank Gold Card' is Zenith Bank's, not Harbor Bank's"
    )
    assert (ans.sufficient, ans.confidence, ans.risk_signal) == (False, "low", "subject_not_found")


def test_model_answer_judged_unanswered_is_insufficient(corpus):
    model = ScriptedModel(
        scripted_llm_steps(
            {**SUBJECT, "attribute": "annual fee"},
            CANDS[:1],
            [
                {
                    "article_id": "acme-gold-terms",
                    "text": "The Gold Card issued by Acme Bank has an annual fee of $95.",
                    "subject": "Gold Card",
                }
            ],
            {"conclusion": "Unclear.", "answered": False, "claims": []},
        )
    )
    ans = answer_question(
        "What is the annual fee of Acme Bank's Gold Card?", articles=corpus, reasoner=LLMReasoner(model)
    )
    # two articles state $95 (one found by code), but the model judged it unanswered
    assert (
        ans.confidence == "high" and ans.sufficient is False and ans.risk_signal == "insufficient_evidence"
    )


def test_subject_not_taken_from_the_question_is_sent_back_then_accepted(corpus):
    bad = call("final_result", type="credit_card", name="Platinum Card", parent_entity="Acme Bank")
    conclusion = {"conclusion": "Nothing to go on.", "answered": False, "claims": []}
    model = ScriptedModel([bad, *scripted_llm_steps(SUBJECT, [], [], conclusion)])
    ans = answer_question(Q_LATE, articles=corpus, reasoner=LLMReasoner(model))
    assert ans.subject.name == "Gold Card"
    retries = retry_prompts(model.requests[1])
    assert retries and "not taken from the question" in str(retries[0].content)
    # the model proposed no candidate, but code checks every article naming the subject: the
    # Acme Gold Card is bound all the same (no false "not found"); it proposed no evidence either,
    # but code finds every span stating the late fee, and they disagree
    assert ans.final_state == State.CONCLUDED and ans.record.steps[1].detail["bound_by_code"] == 6
    assert sorted(ans.candidates[0].article_ids) == ["acme-gold-annual", "acme-gold-payments", "acme-gold-terms"]
    assert all(u.why.startswith("found by code") for u in ans.evidence)
    assert {c.normalized for c in ans.conflicts[0].claims} == {"usd:25.00", "usd:35.00"}
    assert ans.sufficient is False and ans.risk_signal == "conflict"


def test_model_that_never_gives_a_valid_subject_raises_model_error(corpus):
    bad = call("final_result", type="credit_card", name="Platinum Card")
    model = ScriptedModel([bad, bad, bad])
    reasoner = LLMReasoner(model, retries=2)
    with pytest.raises(ModelError, match="no valid SubjectClass after 3 tries"):
        answer_question(Q_LATE, articles=corpus, reasoner=reasoner)
    # the three refused replies were paid for: the reasoner's count says so (models.counted_usage)
    assert len(model.requests) == 3 and reasoner.tokens > 0


def test_prompts_load_and_a_placeholder_mismatch_is_an_error(monkeypatch):
    for name in _prompts.PROMPTS:
        assert _prompts.load_prompt(name).template.strip()
    monkeypatch.setitem(_prompts.PROMPTS, "subject", frozenset({"question", "context"}))
    with pytest.raises(ConfigError, match=r"missing: \['context'\]"):
        _prompts.load_prompt("subject")
