"""One run's view of the four tools: budgets enforced in code, every call recorded as a ``Step``."""

from __future__ import annotations

import threading
import time
from functools import wraps
from typing import Any

from skillrag.errors import BudgetExceeded, ContractViolation
from skillrag.harness._records import Budgets, RunRecord, Step
from skillrag.skill import ArticleView, Case, SavedOutput, SkillTools, hit_to_dict

__all__ = ["Session"]


def _serialized(method):
    """Run the method under the session lock: a model may ask for several tool calls at once, and
    pydantic-ai runs sync tools in worker threads, so the budget check and the call must not interleave."""

    @wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class Session:
    """Wraps ``SkillTools`` for one case. Counts queries, fetches and saves against ``budgets``;
    a call past a budget raises ``BudgetExceeded`` *before* it runs. Every call (ok or not) becomes
    a ``Step`` in ``record.steps`` with its wall time in milliseconds. Calls are serialised (thread-safe)."""

    def __init__(self, tools: SkillTools, case: Case, budgets: Budgets, record: RunRecord) -> None:
        self.tools = tools
        self.case = case
        self.budgets = budgets
        self.record = record
        self.t0 = time.perf_counter()
        self.last_saved: SavedOutput | None = None
        self._lock = threading.RLock()

    # -- budgets ------------------------------------------------------------------------------
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.t0

    def check_time(self) -> None:
        """Raise ``BudgetExceeded`` once the run's wall time passes ``max_seconds``."""
        if self.elapsed_s() > self.budgets.max_seconds:
            raise BudgetExceeded(
                f"time budget spent ({self.elapsed_s():.1f} s > {self.budgets.max_seconds:g} s)"
            )

    @property
    def queries_left(self) -> int:
        return max(0, self.budgets.max_queries - len(self.record.queries))

    @property
    def fetches_left(self) -> int:
        return max(0, self.budgets.max_fetches - len(self.record.fetches))

    # -- recorded calls -----------------------------------------------------------------------
    def _step(
        self,
        name: str,
        args: dict[str, Any],
        t0: float,
        *,
        ok: bool = True,
        error: str | None = None,
        detail: str | None = None,
    ) -> None:
        ms = (time.perf_counter() - t0) * 1000
        self.record.steps.append(
            Step(kind="tool", name=name, ms=ms, ok=ok, error=error, args=args, detail=detail)
        )
        self.record.tool_ms += ms

    def _call(self, name: str, args: dict[str, Any], fn: Any, *, spent: str | None = None) -> tuple[Any, float]:
        """``(fn(), t0)`` for tool ``name``; a failure is recorded as a step and re-raised. ``spent`` is
        the message of an exhausted budget: the call is then refused (recorded) with ``BudgetExceeded``.
        The caller records the successful step from ``t0`` with its own detail."""
        t0 = time.perf_counter()
        if spent is not None:
            self._step(name, args, t0, ok=False, error=spent)
            raise BudgetExceeded(spent)
        try:
            return fn(), t0
        except Exception as exc:
            self._step(name, args, t0, ok=False, error=str(exc))
            raise

    @_serialized
    def load_case(self, case_id: str) -> Case:
        """The case through ``SkillTools.load_case`` (``CaseNotFound`` for another id)."""
        self.check_time()
        args = {"case_id": case_id}
        case, t0 = self._call("load_case", args, lambda: self.tools.load_case(case_id))
        self._step("load_case", args, t0)
        return case

    @_serialized
    def retrieve(self, query: str, k: int | None = None) -> list[dict[str, Any]]:
        """Hits as dicts (``hit_to_dict``); raises ``BudgetExceeded`` past ``max_queries``."""
        self.check_time()
        args = {"query": query} | ({"k": k} if k is not None else {})
        spent = None if self.queries_left > 0 else f"query budget spent ({self.budgets.max_queries} retrieve calls)"
        hits, t0 = self._call("retrieve", args, lambda: [hit_to_dict(h) for h in self.tools.retrieve(query, k)],
                          spent=spent)
        self.record.queries.append(query)
        self._step("retrieve", args, t0, detail=f"{len(hits)} hits")
        return hits

    @_serialized
    def get_article(self, article_id: str, section: str | None = None, summary: bool = False) -> ArticleView:
        """The article view; raises ``BudgetExceeded`` past ``max_fetches``, ``ArticleNotFound`` etc."""
        self.check_time()
        args: dict[str, Any] = {"article_id": article_id}
        if section is not None:
            args["section"] = section
        if summary:
            args["summary"] = True
        spent = None if self.fetches_left > 0 else f"fetch budget spent ({self.budgets.max_fetches} get_article calls)"
        view, t0 = self._call("get_article", args,
                          lambda: self.tools.get_article(article_id, section=section, summary=summary), spent=spent)
        self.record.fetches.append(article_id)
        self._step("get_article", args, t0, detail=f"{len(view.text)} chars")
        return view

    @_serialized
    def save(self, output: dict[str, Any], path: Any = None) -> SavedOutput:
        """``SkillTools.save_output``; a rejection raises ``ContractViolation`` and is counted in
        ``record.retries`` with its reasons in ``record.reasons``."""
        self.check_time()
        snippets = output.get("snippets") if isinstance(output, dict) else None
        args = {"n_snippets": len(snippets) if isinstance(snippets, list) else None}
        self.record.saves += 1
        t0 = time.perf_counter()
        try:
            saved = self.tools.save_output(output, path)
        except ContractViolation as exc:
            self.record.retries += 1
            self.record.reasons = list(exc.reasons)
            self._step("save_output", args, t0, ok=False, error=str(exc), detail="; ".join(exc.reasons[:5]))
            raise
        except Exception as exc:
            self._step("save_output", args, t0, ok=False, error=str(exc))
            raise
        self.record.reasons = []
        self.record.output_path = str(saved.path)
        self.last_saved = saved
        self._step("save_output", args, t0, detail=str(saved.path))
        return saved
