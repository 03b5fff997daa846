"""The one agent factory: a pydantic-ai ``Agent`` with the model resolved in one place.

Every feature that talks to a model (the LLM harness, the wiki builder and link audit, the evidence
reasoner, the service chat, the judges) builds its agent here, so the model id is parsed once
(``resolve_model``) and the project's defaults are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillrag.models._resolve import resolve_model

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model

    from skillrag.workspace.config import ModelSettings as WorkspaceModelSettings

__all__ = ["make_agent"]


def make_agent(
    model: str | Model,
    output_type: Any = str,
    *,
    settings: WorkspaceModelSettings | dict[str, Any] | None = None,
    instructions: str | Sequence[str] | None = None,
    system_prompt: str | Sequence[str] = (),
    tools: Sequence[Any] = (),
    retries: int | dict[str, int] | None = None,
    model_settings: Any = None,
    defer_model_check: bool = False,
) -> Agent[None, Any]:
    """An ``Agent`` for ``model`` (a ``provider:model`` id, resolved with ``settings`` as its defaults by
    ``resolve_model``, or a ``pydantic_ai.models.Model``, used as given) whose output is ``output_type``
    (``str``, a pydantic model or a ``ToolOutput``), with ``instructions`` or a ``system_prompt``, the
    ``tools`` it may call and ``retries`` (pydantic-ai's default, 1, when None). No request is sent here.
    Raises what ``resolve_model`` raises: ``UserError`` for a malformed id, ``ModelError`` for a missing
    API key, ``MissingExtraError`` when the provider SDK is not installed."""
    from pydantic_ai import Agent

    return Agent(resolve_model(model, settings=settings), output_type=output_type, instructions=instructions,
                 system_prompt=system_prompt, tools=tools, retries=retries, model_settings=model_settings,
                 defer_model_check=defer_model_check)
