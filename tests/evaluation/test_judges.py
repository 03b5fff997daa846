"""Judges with scripted models: majority voting, a split vote, unparseable verdicts, inputs without pages."""

import pydantic_ai.models
import pytest

from skillrag.errors import UserError
from skillrag.evaluation.judges import JUDGES, judge_inputs, load_prompt, parse_verdict, run_judge
from skillrag.evaluation.metrics import Reference
from skillrag.evaluation.testing import ScriptedJudge

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

CASE = {
    "case_id": "c1",
    "contact_reason": "Customer wants a cash-back card",
    "case_notes": ["income 250k", "no subscription"],
    "case_messages": [{"role": "user", "content": "Which card gives the most cash back?"}],
}
OUTPUT = {
    "case_id": "c1",
    "guidance": "1. Recommend the Platinum Rewards Card.\n2. Use apply_for_credit_card.",
    "snippets": [{"source_article": "doc_cc_001", "source_title": "Platinum", "text": "Earn 5% cash back.",
                  "why": "rate"}],
    "articles_consulted": ["doc_cc_001"],
}
REF = Reference(case_id="c1", reference_guidance="Recommend Platinum Rewards and apply.",
                required_documents=("doc_cc_001",), expected_tools=("apply_for_credit_card",))


def test_prompts_load_with_declared_placeholders():
    for name, spec in JUDGES.items():
        text = load_prompt(name).template
        assert "VERDICT: accept" in text
        rendered = judge_inputs(CASE, OUTPUT, REF).render(name)
        assert "{" not in rendered.replace("{}", "")  # every placeholder filled
        if spec.needs_reference:
            assert REF.reference_guidance in rendered
        else:
            assert REF.reference_guidance not in rendered
    with pytest.raises(UserError):
        load_prompt("nope")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("reasoning...\nVERDICT: accept", "accept"),
        ("reasoning\n**VERDICT: REJECT**\n\n", "reject"),
        ("verdict accept", "accept"),
        ("VERDICT: accept\nand some afterthought", None),
        ("I think it is fine.", None),
        ("", None),
        ("VERDICT: maybe", None),
    ],
)
def test_parse_verdict(text, want):
    assert parse_verdict(text) == want


def test_unanimous_majority():
    judge = ScriptedJudge(["ok\nVERDICT: accept"] * 3)
    res = run_judge("guidance_match", judge_inputs(CASE, OUTPUT, REF), judge.model)
    assert res.decision is True and not res.split and res.failure is None
    assert len(judge.prompts) == 3 and res.dissenting == 0


def test_split_vote_is_decided_by_majority_and_reported():
    judge = ScriptedJudge(["VERDICT: reject", "VERDICT: accept", "VERDICT: reject"])
    res = run_judge("snippets_sufficient", judge_inputs(CASE, OUTPUT, REF), judge.model)
    assert res.decision is False
    assert res.split is True
    assert res.dissenting == 1


def test_unparseable_verdict_is_a_failed_vote_not_a_crash():
    judge = ScriptedJudge(["no idea", "VERDICT: accept", "VERDICT: accept"])
    res = run_judge("correctness", judge_inputs(CASE, OUTPUT, REF), judge.model)
    assert res.decision is True
    assert res.votes[0].verdict is None and "unparseable" in res.votes[0].error
    assert res.split is False  # the parseable votes agree

    judge = ScriptedJudge(["garbage", "VERDICT: accept", "still garbage"])
    res = run_judge("correctness", judge_inputs(CASE, OUTPUT, REF), judge.model)
    assert res.decision is None
    assert res.failure == "no majority of 3: 1 accept, 0 reject, 2 failed"


def test_provider_failure_is_a_failed_vote():
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    n = {"i": 0}

    def flaky(messages, info):
        n["i"] += 1
        if n["i"] == 1:
            from pydantic_ai.exceptions import ModelHTTPError

            raise ModelHTTPError(503, "judge-model", "overloaded")
        return ModelResponse(parts=[TextPart("VERDICT: reject")])

    res = run_judge("guidance_match", judge_inputs(CASE, OUTPUT, REF), FunctionModel(flaky))
    assert res.decision is False
    assert res.votes[0].verdict is None and "ModelHTTPError" in res.votes[0].error


def test_judge_inputs_never_contain_navigation_page_text():
    page_text = "WIKI-PAGE: Solves choosing a rewards card; does not solve disputes. Links art_1."
    # page text can reach a run only through retrieval hits / the run record; put it everywhere else
    case = {**CASE, "retrieval_hits": [{"preview": page_text}]}
    output = {**OUTPUT, "pages_seen": [page_text], "record": {"steps": [{"preview": page_text}]}}
    judge = ScriptedJudge(["VERDICT: accept"], cycle=True)
    inputs = judge_inputs(case, output, REF)
    for name in JUDGES:
        run_judge(name, inputs, judge.model)
    assert len(judge.prompts) == 9
    for prompt in judge.prompts:
        assert "WIKI-PAGE" not in prompt
        assert "Earn 5% cash back." in prompt or "apply_for_credit_card" in prompt
    assert all(page_text not in str(v) for v in inputs.model_dump().values())


def test_empty_output_still_judged():
    judge = ScriptedJudge(["VERDICT: reject"] * 3)
    res = run_judge("snippets_sufficient", judge_inputs(CASE, None, REF), judge.model)
    assert res.decision is False
    assert "(no snippets)" in judge.prompts[0]
