"""The model layer: parse a model id once, build a pydantic-ai chat model, translate provider errors.

``resolve_model("openai:gpt-4.1")``, ``resolve_model("openai-compat:qwen@http://127.0.0.1:8080/v1")``,
``resolve_model("test")``; a ``pydantic_ai.models.Model`` instance passes through. ``counted_usage``: the
tokens of an agent run, counted on every exit path. Scripted models for tests live in
``skillrag.models.testing``. ``make_agent``: the one agent factory. ``PromptSet``: the one loader of packaged prompt files.
"""

from skillrag.models._agent import make_agent
from skillrag.models._errors import as_model_error, model_errors
from skillrag.models._prompts import Prompt, PromptSet, package_text
from skillrag.models._resolve import (
    PROVIDERS,
    ModelSpec,
    model_id,
    parse_model_spec,
    resolve_model,
    to_pydantic_settings,
)
from skillrag.models._usage import counted_usage

__all__ = [
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
