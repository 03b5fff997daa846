"""Test doubles for evaluation: a scripted judge model and a fake harness function (no network, no model).

- ``ScriptedJudge``: a pydantic-ai ``FunctionModel`` that answers judge calls from a list of replies in
  order and keeps every prompt it received (to check what a judge saw).
- ``RuleJudge``: a judge model whose reply is a pure function of the prompt, so the same rule applied by
  hand to a judge packet's ``prompt.md`` gives the same verdict (model vs external judges).
- ``fake_run_case``: a ``run_case``-compatible callable whose outputs are derived from the ground truth
  by a per-arm rule, so an arms run has known, checkable outcomes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FakeRunResult", "RuleJudge", "ScriptedJudge", "fake_run_case", "write_fake_cases"]


class ScriptedJudge:
    """A judge model that replies with ``replies`` in order (cycling when ``cycle``), recording prompts.

    ``.model`` is the ``FunctionModel`` to pass as the judge model; ``.prompts`` lists the user prompt
    text of every call.
    """

    def __init__(self, replies: Sequence[str], *, cycle: bool = False) -> None:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        self._replies = list(replies)
        self._cycle = cycle
        self._i = 0
        self._lock = threading.Lock()
        self.prompts: list[str] = []

        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            text_parts = [
                str(p.content)
                for m in messages
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, UserPromptPart)
            ]
            with self._lock:
                self.prompts.append("\n".join(text_parts))
                if self._i >= len(self._replies):
                    if not self._cycle or not self._replies:
                        raise AssertionError("ScriptedJudge ran out of replies")
                    self._i = 0
                reply = self._replies[self._i]
                self._i += 1
            return ModelResponse(parts=[TextPart(reply)])

        self.model = FunctionModel(respond, model_name="scripted-judge")


class RuleJudge:
    """A judge model that answers every call with ``rule(prompt)`` (the full reply text), recording prompts.

    ``.model`` is the ``FunctionModel`` to pass as the judge model; ``.prompts`` lists every prompt.
    """

    def __init__(self, rule: Callable[[str], str]) -> None:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        self.prompts: list[str] = []
        self._lock = threading.Lock()

        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            prompt = "\n".join(str(p.content) for m in messages if isinstance(m, ModelRequest)
                               for p in m.parts if isinstance(p, UserPromptPart))
            with self._lock:
                self.prompts.append(prompt)
            return ModelResponse(parts=[TextPart(rule(prompt))])

        self.model = FunctionModel(respond, model_name="rule-judge")


@dataclass
class FakeRunResult:
    """Shape of ``skillrag.harness.RunResult`` that the arms runner reads."""

    status: str
    output: dict[str, Any] | None
    record: dict[str, Any] = field(default_factory=dict)


def fake_run_case(
    ground_truth: Callable[[str], Any],
    *,
    passes: Mapping[str, Iterable[str]] | None = None,
    page_text: str = "",
    fail: Mapping[str, Iterable[str]] | None = None,
    delay_s: float = 0.0,
) -> Callable[..., FakeRunResult]:
    """A fake ``CaseRunner``: ``run(ws, case, arm, budget) -> FakeRunResult``.

    For a case whose id is in ``passes[arm.name]`` (every case when ``passes`` is None) the output
    consults and cites every required document and names every expected tool in guidance and snippets;
    otherwise the guidance names the tools but no snippet does, and only the first required document is
    consulted. A case in ``fail[arm.name]`` raises ``RuntimeError`` (to test error recording).
    ``page_text`` goes into the run record as a retrieval preview (judges must never see it). The
    record reports ``budget.max_queries`` queries. Calls are kept on ``run.calls`` as dicts.
    """
    calls: list[dict[str, Any]] = []
    lock = threading.Lock()

    def run(ws: Any, case: Any, arm: Any, budget: Any) -> FakeRunResult:
        if delay_s:
            time.sleep(delay_s)
        with lock:
            calls.append({"ws": ws, "case_id": case.case_id, "arm": arm.name, "budget": budget})
        if fail and case.case_id in set(fail.get(arm.name, ())):
            raise RuntimeError(f"scripted failure for {case.case_id}")
        gt = ground_truth(case.case_id)
        good = passes is None or case.case_id in set(passes.get(arm.name, ()))
        tools = list(dict.fromkeys(gt.expected_tools))
        docs = list(gt.required_documents) or ["doc_x"]
        guidance = "Steps:\n" + "\n".join(f"{i}. Use {t}." for i, t in enumerate(tools, 1))
        if good:
            n = max(len(docs), len(tools))
            snippets = [
                {"source_article": docs[i % len(docs)], "source_title": docs[i % len(docs)], "why": "a step",
                 "text": f"Use {tools[i % len(tools)]} here." if tools else "A relevant passage."}
                for i in range(n)
            ]
            consulted = docs
        else:
            snippets = [{"source_article": docs[0], "source_title": "t", "why": "context",
                         "text": "A passage that names no tool at all."}]
            consulted = docs[:1]
        n_queries = getattr(budget, "max_queries", None) or 3
        steps = [{"tool": "retrieve", "ms": 5.0, "preview": page_text} for _ in range(n_queries)]
        steps += [{"tool": "get_article", "ms": 1.0}, {"tool": "save_output", "ms": 2.0}]
        output = {"case_id": case.case_id, "guidance": guidance, "snippets": snippets,
                  "n_snippets": len(snippets), "articles_consulted": consulted}
        return FakeRunResult(status="accepted", output=output, record={"steps": steps, "ms": 40.0, "tokens": 0})

    run.calls = calls  # type: ignore[attr-defined]
    return run


def write_fake_cases(path: Any, cases: Sequence[Mapping[str, Any]]) -> None:
    """Write ``cases`` (dicts with case fields and ground truth) as JSONL to ``path``."""
    import json
    from pathlib import Path

    Path(path).write_text("".join(json.dumps(dict(c)) + "\n" for c in cases), encoding="utf-8")
