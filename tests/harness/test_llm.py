"""The LLM harness driven by scripted models (pydantic-ai FunctionModel): no network, real tools."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.exceptions import ModelHTTPError

from skillrag.errors import ModelError, UserError
from skillrag.harness import run_case
from skillrag.harness.llm import LLMHarness
from skillrag.models.testing import ScriptedModel, call, last_tool_return, retry_prompts, tool_returns

GOOD = "Freeze the card with `freeze_card_4410` and confirm the freeze to the customer."
GOOD2 = "If the card was lost abroad, an emergency card can be sent to a hotel address within 2 days."


def save_call(*snips, guidance="1. Freeze the card.\n2. Send an emergency card."):
    return call(
        "save_output",
        output={
            "guidance": guidance,
            "snippets": [{"source_article": a, "text": t, "why": "backs a step"} for a, t in snips],
            "articles_consulted": sorted({a for a, _ in snips}),
        },
    )


def fetch_hit(article_id: str):
    """A step that fetches ``article_id`` after checking the latest retrieve result listed it."""

    def step(messages, info):
        hits = last_tool_return(messages, "retrieve")["hits"]
        assert article_id in [h["article_id"] for h in hits]
        return call("get_article", article_id=article_id)

    return step


def run(ws, cases, retriever, model, **kw):
    harness = LLMHarness(model, guided=kw.pop("guided", False))
    return run_case(ws, cases.load("case_lost"), harness=harness, cases=cases, retriever=retriever, **kw)


def test_happy_path_three_queries_two_fetches(ws, cases, retriever):
    seen = {}

    def load(messages, info):
        seen["instructions"] = info.instructions
        seen["tools"] = sorted(t.name for t in info.function_tools)
        seen["outputs"] = [t.name for t in info.output_tools]
        seen["text_allowed"] = info.allow_text_output
        return call("load_case", case_id="case_lost")

    def fetch_second(messages, info):
        return call("get_article", article_id="kb_card_travel")

    def save(messages, info):
        body = last_tool_return(messages, "get_article")["body"]
        assert GOOD2 in body
        return save_call(("kb_card_lost", GOOD), ("kb_card_travel", GOOD2))

    model = ScriptedModel(
        [
            load,
            call("retrieve", query="lost debit card"),
            call("retrieve", query="freeze card"),
            call("retrieve", query="emergency card abroad", k=3),
            fetch_hit("kb_card_lost"),
            fetch_second,
            save,
        ]
    )
    res = run(ws, cases, retriever, model)
    assert res.status == "accepted", res.record.error
    # the skill's SKILL.md is the instructions, with the harness rules; exactly four tools
    assert "# Customer-support guidance with verbatim evidence" in seen["instructions"]
    assert "at most 5 `retrieve` calls" in seen["instructions"]
    assert seen["tools"] == ["get_article", "load_case", "retrieve"] and seen["outputs"] == ["save_output"]
    assert seen["text_allowed"] is False
    # the case came back through load_case, without ground truth fields
    loaded = last_tool_return(model.requests[1], "load_case")
    assert loaded["case_id"] == "case_lost" and "ground_truth" not in loaded
    rec = res.record
    assert rec.queries == ["lost debit card", "freeze card", "emergency card abroad"]
    assert rec.fetches == ["kb_card_lost", "kb_card_travel"]
    assert rec.model_calls == 7 and rec.saves == 1 and rec.retries == 0
    assert rec.input_tokens > 0 and rec.output_tokens > 0
    kinds = [(s.kind, s.name) for s in rec.steps]
    assert kinds[:3] == [
        ("model", "function:scripted"),
        ("tool", "load_case"),
        ("model", "function:scripted"),
    ]
    assert sum(1 for k, _ in kinds if k == "tool") == 7
    assert all(s.ms >= 0 for s in rec.steps) and rec.model_ms > 0 and rec.wall_ms >= rec.model_ms
    # the output: case id, n_snippets and titles filled in by the harness; saved with an audit block
    out = res.output
    assert out["case_id"] == "case_lost" and out["n_snippets"] == 2
    assert out["snippets"][0]["source_title"] == "Lost or stolen debit cards"
    assert set(out["articles_consulted"]) == {"kb_card_lost", "kb_card_travel"}
    assert out["audit"]["snippets"][0]["source_article"] == "kb_card_lost"
    on_disk = json.loads(res.record_path.read_text())
    assert on_disk["status"] == "accepted" and on_disk["model"] == "function:scripted"
    assert json.loads(res.output_path.read_text())["guidance"] == out["guidance"]


def test_rejected_save_is_fixed_on_retry(ws, cases, retriever):
    paraphrase = "Freeze the card using freeze_card_4410 and tell the customer."

    def fixed(messages, info):
        reasons = retry_prompts(messages, "save_output")
        assert len(reasons) == 1
        assert "not a verbatim substring of article 'kb_card_lost'" in str(reasons[0].content)
        return save_call(("kb_card_lost", GOOD))

    model = ScriptedModel(
        [
            call("load_case", case_id="case_lost"),
            call("retrieve", query="lost card"),
            call("get_article", article_id="kb_card_lost"),
            save_call(("kb_card_lost", paraphrase)),
            fixed,
        ]
    )
    res = run(ws, cases, retriever, model)
    assert res.status == "accepted"
    assert res.record.saves == 2 and res.record.retries == 1 and res.record.reasons == []
    failed = [s for s in res.record.steps if s.name == "save_output" and not s.ok]
    assert len(failed) == 1 and "not a verbatim substring" in failed[0].detail


def test_never_valid_save_fails_after_the_retry_budget(ws, cases, retriever):
    junk = save_call(("kb_card_lost", "This sentence appears in no article at all."))
    model = ScriptedModel([call("load_case", case_id="case_lost"), *[junk] * 10])
    res = run(ws, cases, retriever, model, budgets={"max_save_retries": 2})
    assert res.status == "failed" and res.output is None
    assert res.record.saves == 3 and res.record.retries == 3
    assert "rejected 3 times" in res.record.error
    assert any("not a verbatim substring" in r for r in res.record.reasons)
    assert model.calls == 4  # load + 3 saves, then the harness stopped the run
    assert not (ws.runs_dir / "case_lost" / "output.json").exists()
    assert json.loads(res.record_path.read_text())["status"] == "failed"


def test_schema_junk_from_the_model_ends_failed_not_crashed(ws, cases, retriever):
    model = ScriptedModel([call("save_output", output="not an object")] * 10)
    res = run(ws, cases, retriever, model, budgets={"max_save_retries": 1})
    assert res.status == "failed" and "model gave up" in res.record.error


def test_query_budget_refuses_once_then_stops(ws, cases, retriever):
    model = ScriptedModel([call("retrieve", query=f"card {i}") for i in range(10)])
    res = run(ws, cases, retriever, model, budgets={"max_queries": 2})
    assert res.status == "budget_exceeded"
    assert res.record.error == ("query budget spent (2 retrieve calls for case 'case_lost'); this call was "
                                "refused: work with what you have found and call save_output")
    assert len(res.record.queries) == 2 and model.calls == 4
    refused = last_tool_return(model.requests[3], "retrieve")
    assert "refused" in refused["error"]


def test_fetch_budget_refusal_lets_the_model_save(ws, cases, retriever):
    model = ScriptedModel(
        [
            call("get_article", article_id="kb_card_lost"),
            call("get_article", article_id="kb_card_travel"),
            save_call(("kb_card_lost", GOOD)),
        ]
    )
    res = run(ws, cases, retriever, model, budgets={"max_fetches": 1})
    assert res.status == "accepted"
    assert res.record.fetches == ["kb_card_lost"]
    assert "fetch budget spent" in last_tool_return(model.requests[2], "get_article")["error"]


def test_token_budget_ends_the_run(ws, cases, retriever):
    model = ScriptedModel([call("retrieve", query="lost card")] * 3)
    res = run(ws, cases, retriever, model, budgets={"max_tokens": 50})
    assert res.status == "budget_exceeded" and "model budget spent" in res.record.error


def test_time_budget_ends_the_run(ws, cases, retriever):
    import time

    def slow(messages, info):
        time.sleep(0.3)
        return call("retrieve", query="lost card")

    model = ScriptedModel([slow] * 20)
    res = run(ws, cases, retriever, model, budgets={"max_seconds": 0.5})
    assert res.status == "budget_exceeded" and "time budget" in res.record.error
    assert res.record.wall_ms < 5000


def test_tool_error_is_fed_back_to_the_model(ws, cases, retriever):
    def recover(messages, info):
        err = last_tool_return(messages, "get_article")
        assert "no article with id 'kb_nope'" in err["error"]
        return call("get_article", article_id="kb_card_lost")

    def empty_query_seen(messages, info):
        assert "empty query" in last_tool_return(messages, "retrieve")["error"]
        return call("get_article", article_id="kb_nope")

    model = ScriptedModel(
        [call("retrieve", query="   "), empty_query_seen, recover, save_call(("kb_card_lost", GOOD))]
    )
    res = run(ws, cases, retriever, model)
    assert res.status == "accepted"
    assert res.record.fetches == ["kb_card_lost"]
    errors = [s for s in res.record.steps if s.kind == "tool" and not s.ok]
    assert [s.name for s in errors] == ["retrieve", "get_article"]


def test_text_reply_is_sent_back_until_a_save(ws, cases, retriever):
    model = ScriptedModel(["I think you should freeze the card.", save_call(("kb_card_lost", GOOD))])
    res = run(ws, cases, retriever, model)
    assert res.status == "accepted" and model.calls == 2


def test_guided_mode_forces_the_workflow(ws, cases, retriever):
    forced = []

    def step(tool_call):
        def f(messages, info):
            forced.append((info.model_settings or {}).get("tool_choice"))
            return tool_call(messages) if callable(tool_call) else tool_call

        return f

    model = ScriptedModel(
        [
            step(call("load_case", case_id="wrong_id")),  # a failed call still moves the workflow on
            step(call("retrieve", query="lost card")),
            step(call("retrieve", query="freeze")),
            step(call("retrieve", query="abroad")),
            step(call("get_article", article_id="kb_card_lost")),
            step(call("get_article", article_id="kb_card_travel")),
            step(save_call(("kb_card_lost", GOOD))),
        ]
    )
    res = run(ws, cases, retriever, model, guided=True)
    assert res.status == "accepted" and res.record.guided
    assert forced == [["load_case"]] + [["retrieve"]] * 3 + [["get_article"]] * 2 + [["save_output"]]
    assert "no case with id 'wrong_id'" in tool_returns(model.requests[1], "load_case")[0].content["error"]


def test_provider_failure_is_one_model_error_and_a_record(ws, cases, retriever):
    def boom(messages, info):
        raise ModelHTTPError(503, "scripted", body={"error": "overloaded"})

    with pytest.raises(ModelError, match="HTTP 503"):
        run(ws, cases, retriever, ScriptedModel([boom]))
    rec = json.loads((ws.runs_dir / "case_lost" / "record.json").read_text())
    assert rec["status"] == "failed" and "HTTP 503" in rec["error"]
    assert rec["steps"][0]["kind"] == "model" and rec["steps"][0]["ok"] is False


def test_llm_harness_needs_a_model(ws, cases, retriever):
    with pytest.raises(UserError, match="needs a model"):
        run_case(ws, cases.load("case_lost"), harness="llm", cases=cases, retriever=retriever)
    with pytest.raises(UserError, match="unknown harness"):
        run_case(ws, cases.load("case_lost"), harness="magic", cases=cases, retriever=retriever)


def test_parallel_tool_calls_cannot_overrun_the_query_budget(ws, cases, retriever):
    many = [call("retrieve", query=f"card {i}") for i in range(4)]
    model = ScriptedModel([many, save_call(("kb_card_lost", GOOD))])
    res = run(ws, cases, retriever, model, budgets={"max_queries": 2})
    assert len(res.record.queries) == 2
    # two ran, one was refused with a message, the fourth ended the run
    assert res.status == "budget_exceeded"


def _instructions(ws, cases, retriever) -> str:
    seen = {}

    def record(messages, info):
        seen["instructions"] = info.instructions
        return save_call(("kb_card_lost", GOOD), guidance="1. Freeze the card with `freeze_card_4410`.")

    res = run(ws, cases, retriever, ScriptedModel([record]))
    assert res.status == "accepted", res.record.error
    return seen["instructions"]


def test_the_harness_prompt_carries_the_skill_md_method_for_hard_cases_once(ws, cases, retriever):
    """One source: the SKILL.md section is the harness's method; a manual without it gets the built-in one."""
    import shutil

    from skillrag.harness._prompts import HARD_CASES, manual_section
    from skillrag.skill import builtin_skills_dir
    from skillrag.skill.spec import read_skill_md

    _, body = read_skill_md(builtin_skills_dir() / "cs-guidance" / "SKILL.md")
    method = manual_section(body, HARD_CASES)
    assert method is not None and "(a) Order the requests" in method and "(f) Sensitive data" in method
    text = _instructions(ws, cases, retriever)
    assert text.count("## Hard cases") == 1 and method in text
    assert 'work through the "Hard cases" method above' in text  # the harness rules point at it
    # a workspace copy of the skill from before the section existed: the harness still carries the method
    own = ws.skills_dir / "cs-guidance"
    shutil.copytree(builtin_skills_dir() / "cs-guidance", own)
    md = (own / "SKILL.md").read_text()
    start = md.index("## Hard cases")
    (own / "SKILL.md").write_text(md[:start] + md[md.index("## Dates, offers", start):])
    text = _instructions(ws, cases, retriever)
    assert text.count("## Hard cases") == 1 and method in text
