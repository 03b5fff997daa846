"""The span of one tool call (``skillrag.tool.<name>``), opened by ``SkillTools._timed``: the one place
every surface's calls go through (Python API, CLI, exported scripts, MCP, both harnesses), so each
surface's calls are traced alike.

Attributes: ``gen_ai.operation.name`` ``execute_tool`` and ``gen_ai.tool.name`` (the OpenTelemetry GenAI
conventions, so a trace viewer shows them as tool calls), ``skillrag.skill``, ``skillrag.surface``,
``skillrag.case_id``, each scalar argument as ``skillrag.<tool>.<arg>`` (bounded as in the tool log; the
query text only as ``skillrag.retrieve.query_chars`` unless message content is captured, ``FREE_TEXT_ARGS``);
``retrieve``: ``skillrag.retrieve.backend``, ``.mode``, ``.hits``, ``.pages``; every read:
``skillrag.tool.result_bytes`` (UTF-8 bytes of the JSON the agent is shown); ``save_output``:
``skillrag.save.accepted``, ``.reasons`` (the contract's, when rejected), ``.warnings``, ``.snippets``;
the budget left after the call (``skillrag.budget.queries_left`` ...). Values that take work (the result's
size) are computed only for a recording span.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry.trace import Span

from skillrag.errors import ContractViolation
from skillrag.tracing import capture_content, set_attributes, span

__all__ = ["FREE_TEXT_ARGS", "note_failure", "note_result", "tool_span"]

#: Arguments that carry case text rather than ids: on a span only as their length, unless message content
#: is captured (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, as for the model spans).
FREE_TEXT_ARGS = frozenset({"query"})


@contextmanager
def tool_span(tools: Any, tool: str, args: Mapping[str, Any]) -> Iterator[Span]:
    """The span of one call of ``tool`` with its (already bounded) ``args``."""
    with span(f"skillrag.tool.{tool}") as current:
        if current.is_recording():
            attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                                     "skillrag.skill": tools.skill.name, "skillrag.surface": tools.surface}
            for k, v in args.items():
                if k in FREE_TEXT_ARGS and not capture_content():
                    attrs[f"skillrag.{tool}.{k}_chars"] = len(v) if isinstance(v, str) else None
                elif isinstance(v, str | int | float | bool):
                    attrs[f"skillrag.{tool}.{k}"] = v
            set_attributes(current, attrs)
        yield current


def _json_bytes(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))


def _budget(state: Any) -> dict[str, Any]:
    if state is None:
        return {}
    return {"skillrag.budget.queries_left": state.queries_left, "skillrag.budget.fetches_left": state.fetches_left,
            "skillrag.budget.saves_left": state.saves_left, "skillrag.session_id": state.session_id}


def _session(tools: Any, case_id: str | None) -> dict[str, Any]:
    """The case session the call went to (``skillrag.session_id``), when the tools hold it."""
    state = tools.session
    return {"skillrag.session_id": state.session_id} if state is not None and state.case_id == case_id else {}


def note_result(current: Span, tools: Any, tool: str, result: Any, case_id: str | None) -> None:
    """The result's attributes on the tool span (only when it records)."""
    if not current.is_recording():
        return
    from skillrag.skill import views

    attrs: dict[str, Any] = {"skillrag.case_id": case_id} | _session(tools, case_id)
    attrs |= _budget(getattr(result, "budget", None))
    if tool == "retrieve" and hasattr(result, "page"):  # retrieve --page
        attrs["skillrag.tool.result_bytes"] = _json_bytes(views.page_json(result))
    elif tool == "retrieve":
        retriever = tools._retriever  # the one the call used (never opened here)
        for name in ("backend", "mode"):
            value = getattr(retriever, name, None)
            attrs[f"skillrag.retrieve.{name}"] = value if isinstance(value, str) else None
        attrs |= {"skillrag.retrieve.hits": len(result), "skillrag.retrieve.pages": len(result.pages),
                  "skillrag.tool.result_bytes": _json_bytes(views.retrieve_json(result))}
    elif tool == "get_article":
        attrs |= {"skillrag.get_article.part": result.part,
                  "skillrag.tool.result_bytes": _json_bytes(views.article_json(result))}
    elif tool == "load_case":
        attrs["skillrag.tool.result_bytes"] = _json_bytes(result.model_dump(mode="json"))
    elif tool == "save_output":
        attrs |= {"skillrag.save.accepted": True, "skillrag.save.check": result.checked_only,
                  "skillrag.save.warnings": len(result.warnings), "skillrag.save.snippets": len(result.evidence),
                  "skillrag.save.warning_kinds": sorted({g.kind for g in result.warnings})}
    set_attributes(current, attrs)


def note_failure(current: Span, tools: Any, tool: str, exc: BaseException, case_id: str | None) -> None:
    """A failed call: its case and, for a rejected save, ``skillrag.save.accepted`` false and the reasons
    (the exception itself is recorded on the span as it leaves it)."""
    if not current.is_recording():
        return
    attrs: dict[str, Any] = {"skillrag.case_id": case_id, "skillrag.error.kind": type(exc).__name__}
    attrs |= _session(tools, case_id)
    if tool == "save_output" and isinstance(exc, ContractViolation):
        attrs |= {"skillrag.save.accepted": False, "skillrag.save.reasons": list(exc.reasons),
                  "skillrag.save.n_reasons": len(exc.reasons)}
    set_attributes(current, attrs)
