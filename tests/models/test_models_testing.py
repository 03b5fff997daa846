from __future__ import annotations

import pytest
from pydantic_ai import Agent, ModelRetry

from skillrag.models.testing import ScriptedModel, ScriptExhausted, call, last_tool_return, retry_prompts


def _agent(model):
    agent = Agent(model)

    @agent.tool_plain
    def add(a: int, b: int) -> dict:
        if a < 0:
            raise ModelRetry("a must not be negative")
        return {"sum": a + b}

    return agent


def test_scripted_model_plays_steps_in_order():
    model = ScriptedModel([call("add", a=1, b=2), "three"])
    result = _agent(model).run_sync("add")
    assert result.output == "three"
    assert model.calls == 2
    assert last_tool_return(model.requests[1], "add") == {"sum": 3}


def test_dynamic_step_sees_tool_results_and_retries():
    def answer(messages, info):
        assert [t.name for t in info.function_tools] == ["add"]
        return f"got {last_tool_return(messages, 'add')['sum']}"

    model = ScriptedModel([call("add", a=-1, b=2), call("add", a=4, b=2), answer])
    result = _agent(model).run_sync("add")
    assert result.output == "got 6"
    prompts = retry_prompts(model.requests[1], "add")
    assert len(prompts) == 1 and "must not be negative" in str(prompts[0].content)


def test_running_past_the_script_is_loud():
    model = ScriptedModel([call("add", a=1, b=1)])
    with pytest.raises(ScriptExhausted):
        _agent(model).run_sync("add")
