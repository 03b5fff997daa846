from __future__ import annotations

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel

import skillrag.models as models_pkg
from skillrag.errors import ModelError, UserError
from skillrag.models import model_errors, model_id, parse_model_spec, resolve_model, to_pydantic_settings
from skillrag.workspace.config import ModelSettings


def test_public_api_is_pinned():
    assert sorted(models_pkg.__all__) == sorted(
        [
            "PROVIDERS",
            "ModelSpec",
            "Prompt",
            "PromptSet",
            "as_model_error",
            "counted_usage",
            "make_agent",
            "model_errors",
            "model_id",
            "package_text",
            "parse_model_spec",
            "resolve_model",
            "to_pydantic_settings",
        ]
    )


@pytest.mark.parametrize(
    ("spec", "provider", "name", "base"),
    [
        ("test", "test", "test", None),
        ("openai:gpt-4.1", "openai", "gpt-4.1", None),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", None),
        (
            "openai-compat:qwen2.5:7b@http://127.0.0.1:11434/v1/",
            "openai-compat",
            "qwen2.5:7b",
            "http://127.0.0.1:11434/v1",
        ),
        ("openai-compat:m@https://h.example/v1", "openai-compat", "m", "https://h.example/v1"),
    ],
)
def test_parse_model_spec(spec, provider, name, base):
    parsed = parse_model_spec(spec)
    assert (parsed.provider, parsed.name, parsed.base_url) == (provider, name, base)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("", "empty model id"),
        ("gpt-4.1", "expected provider:model"),
        ("openai:", "expected provider:model"),
        ("mystery:m", "unknown provider 'mystery'"),
        ("openai-compat:m", "openai-compat:MODEL@"),
        ("openai-compat:m@ftp://x/v1", "not an http(s) URL"),
        ("openai-compat:@http://x/v1", "openai-compat:MODEL@"),
    ],
)
def test_bad_specs_are_one_line_user_errors(spec, needle):
    with pytest.raises(UserError) as info:
        resolve_model(spec)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_model_instance_passes_through():
    fm = FunctionModel(lambda m, i: None)
    assert resolve_model(fm) is fm


def test_test_spec_gives_test_model():
    assert isinstance(resolve_model("test"), TestModel)


def test_openai_needs_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match=r"\$OPENAI_API_KEY is not set"):
        resolve_model("openai:gpt-4.1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    m = resolve_model("openai:gpt-4.1")
    assert isinstance(m, OpenAIChatModel) and m.model_name == "gpt-4.1"


def test_anthropic_needs_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match=r"\$ANTHROPIC_API_KEY is not set"):
        resolve_model("anthropic:claude-sonnet-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert isinstance(resolve_model("anthropic:claude-sonnet-4-5"), AnthropicModel)


def test_openai_compat_needs_no_key_and_keeps_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    m = resolve_model("openai-compat:smol@http://127.0.0.1:8080/v1")
    assert isinstance(m, OpenAIChatModel)
    assert m.model_name == "smol"
    assert str(m.base_url).rstrip("/") == "http://127.0.0.1:8080/v1"
    # such servers read `max_tokens`, not `max_completion_tokens`
    assert m.profile["openai_chat_supports_max_completion_tokens"] is False


def test_workspace_settings_become_model_defaults():
    assert to_pydantic_settings(ModelSettings(max_output_tokens=64)) == {"timeout": 120.0, "max_tokens": 64}
    settings = ModelSettings(timeout_s=7.5, temperature=0.2)
    assert to_pydantic_settings(settings) == {"timeout": 7.5, "temperature": 0.2}
    m = resolve_model("openai-compat:smol@http://127.0.0.1:8080/v1", settings=settings)
    assert m.settings == {"timeout": 7.5, "temperature": 0.2}
    assert to_pydantic_settings(None) is None


def test_model_id_for_records():
    assert (
        model_id("openai-compat:smol@http://127.0.0.1:8080/v1/")
        == "openai-compat:smol@http://127.0.0.1:8080/v1"
    )
    assert model_id(FunctionModel(lambda m, i: None, model_name="scripted")) == "function:scripted"


def test_real_requests_are_blocked_in_unit_tests():
    agent = Agent(resolve_model("openai-compat:smol@http://127.0.0.1:9/v1"))
    with pytest.raises(RuntimeError, match="ALLOW_MODEL_REQUESTS"):
        agent.run_sync("hello")


def test_unreachable_server_is_one_model_error():
    """A refused connection (nothing listens on port 9 of 127.0.0.1) becomes one ModelError line."""
    from pydantic_ai.models import override_allow_model_requests

    model = resolve_model(
        "openai-compat:smol@http://127.0.0.1:9/v1", settings={"timeout": 2.0, "max_retries": 0}
    )
    agent = Agent(model)
    with (
        override_allow_model_requests(True),
        pytest.raises(ModelError) as info,
        model_errors("openai-compat:smol"),
    ):
        agent.run_sync("hello")
    assert "server unreachable" in str(info.value)
    assert "\n" not in str(info.value)


def test_model_errors_lets_other_errors_through():
    with pytest.raises(KeyError), model_errors("m"):
        raise KeyError("x")
