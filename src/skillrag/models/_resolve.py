"""Parse a model id (``provider:model``) in one place and build a pydantic-ai chat model.

Supported ids::

    test                                   pydantic-ai TestModel (no network)
    openai:gpt-4.1                         OpenAI Chat Completions, key from $OPENAI_API_KEY
    anthropic:claude-sonnet-4-5            Anthropic Messages, key from $ANTHROPIC_API_KEY
    openai-compat:MODEL@http://HOST:PORT/v1
                                           any OpenAI-compatible server (vLLM, Ollama, llama.cpp);
                                           key from $SKILLRAG_OPENAI_COMPAT_API_KEY if the server wants one

A ``pydantic_ai.models.Model`` instance passes through unchanged (tests hand in a ``FunctionModel``).
Provider SDKs are imported lazily; a missing one raises ``MissingExtraError`` naming the extra.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from skillrag.errors import MissingExtraError, ModelError, UserError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from skillrag.workspace.config import ModelSettings as WorkspaceModelSettings

__all__ = ["PROVIDERS", "ModelSpec", "model_id", "parse_model_spec", "resolve_model", "to_pydantic_settings"]

#: Provider prefixes ``resolve_model`` understands, with what each needs. The CLI reads its help from here.
PROVIDERS: dict[str, str] = {
    "test": "pydantic-ai TestModel, no network (`test`)",
    "openai": "OpenAI Chat Completions (`openai:MODEL`, needs $OPENAI_API_KEY)",
    "anthropic": "Anthropic Messages (`anthropic:MODEL`, needs $ANTHROPIC_API_KEY)",
    "openai-compat": "OpenAI-compatible server (`openai-compat:MODEL@http://HOST:PORT/v1`)",
}

COMPAT_KEY_ENV = "SKILLRAG_OPENAI_COMPAT_API_KEY"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model id: ``provider``, ``name`` and, for ``openai-compat``, the server ``base_url``."""

    provider: str
    name: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.provider == "test":
            return "test"
        if self.base_url:
            return f"{self.provider}:{self.name}@{self.base_url}"
        return f"{self.provider}:{self.name}"


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse ``spec`` into a ``ModelSpec``; raises ``UserError`` (one line) for anything malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise UserError("empty model id: use provider:model, e.g. openai:gpt-4.1 (or `test`)")
    spec = spec.strip()
    if spec == "test":
        return ModelSpec("test", "test")
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise UserError(f"model id {spec!r}: expected provider:model ({', '.join(PROVIDERS)})")
    if provider not in PROVIDERS or provider == "test":
        raise UserError(f"model id {spec!r}: unknown provider {provider!r} (known: {', '.join(PROVIDERS)})")
    if provider == "openai-compat":
        name, at, base_url = rest.rpartition("@")
        if not at or not name or not base_url:
            raise UserError(f"model id {spec!r}: expected openai-compat:MODEL@http://HOST:PORT/v1")
        url = urlparse(base_url)
        if url.scheme not in ("http", "https") or not url.netloc:
            raise UserError(f"model id {spec!r}: base URL {base_url!r} is not an http(s) URL")
        return ModelSpec(provider, name, base_url.rstrip("/"))
    return ModelSpec(provider, rest)


def to_pydantic_settings(settings: WorkspaceModelSettings | dict[str, Any] | None) -> dict[str, Any] | None:
    """Map the workspace ``models:`` section (timeout in seconds, temperature, max output tokens) to
    pydantic-ai model settings (``timeout``, ``temperature``, ``max_tokens``)."""
    if settings is None:
        return None
    if isinstance(settings, dict):
        return dict(settings)
    out: dict[str, Any] = {"timeout": float(settings.timeout_s)}
    if settings.temperature is not None:
        out["temperature"] = float(settings.temperature)
    if getattr(settings, "max_output_tokens", None) is not None:
        out["max_tokens"] = int(settings.max_output_tokens)
    return out


def _require_key(env: str, provider: str) -> str:
    key = os.environ.get(env, "").strip()
    if not key:
        raise ModelError(
            f"{provider}: ${env} is not set (export it, or use `--model test` / the extractive harness)"
        )
    return key


def resolve_model(
    spec: str | Model, *, settings: WorkspaceModelSettings | dict[str, Any] | None = None
) -> Model:
    """Build the chat model for ``spec`` (see the module docstring for the id forms).

    ``settings`` is the workspace ``models:`` section (or a pydantic-ai ``ModelSettings`` dict) applied
    as the model's defaults. No request is sent here. Raises ``UserError`` for a malformed id or an
    unknown provider, ``ModelError`` for a missing API key, ``MissingExtraError`` when the provider SDK
    is not installed.
    """
    from pydantic_ai.models import Model

    if isinstance(spec, Model):
        return spec
    parsed = parse_model_spec(spec)
    model_settings = to_pydantic_settings(settings)
    if parsed.provider == "test":
        from pydantic_ai.models.test import TestModel

        return TestModel(settings=model_settings)
    if parsed.provider in ("openai", "openai-compat"):
        try:
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider
        except ImportError:
            raise MissingExtraError("openai", "openai") from None
        if parsed.provider == "openai":
            provider = OpenAIProvider(api_key=_require_key("OPENAI_API_KEY", "openai"))
        else:
            from skillrag.models._compat import CompatProvider

            key = os.environ.get(COMPAT_KEY_ENV, "").strip() or "not-needed"
            provider = CompatProvider(base_url=parsed.base_url, api_key=key)
            # OpenAI-compatible servers (llama.cpp, Ollama, older vLLM) read `max_tokens`, not
            # OpenAI's newer `max_completion_tokens`; without this a response-length cap is ignored.
            profile = {"openai_chat_supports_max_completion_tokens": False}
            return OpenAIChatModel(parsed.name, provider=provider, settings=model_settings, profile=profile)
        return OpenAIChatModel(parsed.name, provider=provider, settings=model_settings)
    if parsed.provider == "anthropic":
        try:
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider
        except ImportError:
            raise MissingExtraError("anthropic", "anthropic") from None
        provider = AnthropicProvider(api_key=_require_key("ANTHROPIC_API_KEY", "anthropic"))
        return AnthropicModel(parsed.name, provider=provider, settings=model_settings)
    raise UserError(f"model id {spec!r}: unknown provider")  # pragma: no cover - parse_model_spec guards


def model_id(model: str | Model) -> str:
    """A printable id for ``model`` for run records: the spec string, or ``system:model_name``."""
    if isinstance(model, str):
        return str(parse_model_spec(model))
    system = getattr(model, "system", None) or type(model).__name__
    name = getattr(model, "model_name", None) or "?"
    base = getattr(model, "base_url", None)
    ident = f"{system}:{name}"
    return f"{ident}@{base}" if base and system not in ("function", "test") else ident
