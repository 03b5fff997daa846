"""Scripted chat models for tests: agent code runs end to end with no network.

``ScriptedModel`` is a pydantic-ai ``FunctionModel`` that plays back a list of steps, one per model
request. A step is::

    "some text"                       a plain text reply (ends an agent run whose output is text)
    call("retrieve", query="...")     one tool call
    [call(...), call(...)]            several tool calls in one response
    ModelResponse(...)                sent as is
    fn(messages, info) -> any of the above   decided at request time (e.g. from the last tool result)

Every request's messages are kept in ``.requests``; ``tool_returns(messages)`` and
``retry_prompts(messages)`` read what the tools answered. Running past the script raises
``ScriptExhausted`` (a test bug, not a skillrag error).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

__all__ = [
    "ScriptExhausted",
    "ScriptedModel",
    "Step",
    "call",
    "last_tool_return",
    "retry_prompts",
    "text",
    "tool_returns",
]


class ScriptExhausted(RuntimeError):
    """The scripted model was asked for more responses than its script holds."""


Step: TypeAlias = "str | ToolCallPart | Sequence[ToolCallPart] | ModelResponse | Callable[[list[ModelMessage], AgentInfo], Any]"


def call(tool: str, /, **args: Any) -> ToolCallPart:
    """A tool call part for ``tool`` with keyword ``args`` (sent as a JSON object)."""
    return ToolCallPart(tool_name=tool, args=args)


def text(content: str) -> TextPart:
    """A plain text part."""
    return TextPart(content=content)


def _to_response(step: Any) -> ModelResponse:
    if isinstance(step, ModelResponse):
        return step
    if isinstance(step, str):
        return ModelResponse(parts=[TextPart(content=step)])
    if isinstance(step, ToolCallPart | TextPart):
        return ModelResponse(parts=[step])
    if isinstance(step, Sequence):
        return ModelResponse(parts=list(step))
    raise TypeError(f"unsupported script step: {step!r}")


class ScriptedModel(FunctionModel):
    """A ``FunctionModel`` that plays ``responses`` in order, one per model request.

    ``.requests`` holds the message list of every request; ``.calls`` counts requests served.
    """

    def __init__(self, responses: Sequence[Step], *, model_name: str = "scripted") -> None:
        self.script: list[Any] = list(responses)
        self.requests: list[list[ModelMessage]] = []
        super().__init__(self._play, model_name=model_name)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _play(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        index = len(self.requests)
        self.requests.append(list(messages))
        if index >= len(self.script):
            raise ScriptExhausted(f"scripted model has {len(self.script)} steps; request {index + 1} asked")
        step = self.script[index]
        if callable(step) and not isinstance(step, ToolCallPart | TextPart | ModelResponse):
            step = step(messages, info)
        return _to_response(step)


def tool_returns(messages: Sequence[ModelMessage], tool: str | None = None) -> list[ToolReturnPart]:
    """Every tool result in ``messages`` (optionally only ``tool``'s), oldest first."""
    out: list[ToolReturnPart] = []
    for msg in messages:
        if isinstance(msg, ModelRequest):
            out.extend(
                p
                for p in msg.parts
                if isinstance(p, ToolReturnPart)
                and getattr(p, "outcome", "success") == "success"
                and (tool is None or p.tool_name == tool)
            )
    return out


def retry_prompts(
    messages: Sequence[ModelMessage], tool: str | None = None
) -> list[RetryPromptPart | ToolReturnPart]:
    """Every retry sent back to the model in ``messages``: a ``RetryPromptPart`` or a tool result whose
    ``outcome`` is ``"retried"`` (a ``ModelRetry`` raised by a tool, or arguments that failed validation)."""
    out: list[RetryPromptPart | ToolReturnPart] = []
    for msg in messages:
        if not isinstance(msg, ModelRequest):
            continue
        for p in msg.parts:
            retried = isinstance(p, RetryPromptPart) or (
                isinstance(p, ToolReturnPart) and getattr(p, "outcome", "success") == "retried"
            )
            if retried and (tool is None or p.tool_name == tool):
                out.append(p)
    return out


def last_tool_return(messages: Sequence[ModelMessage], tool: str) -> Any:
    """The content of the latest successful ``tool`` result in ``messages`` (JSON text is decoded); ``None`` if none."""
    parts = tool_returns(messages, tool)
    if not parts:
        return None
    content = parts[-1].content
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content
