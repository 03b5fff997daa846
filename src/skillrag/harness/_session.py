"""One run's view of the four tools: every call recorded as a ``Step``, budgets charged by the tools.

The query, fetch and save budgets are not counted here: ``SkillTools`` charges every call to the
run's case session in the workspace store (``skillrag.skill.budget``), the one account every surface
uses. The session adds what only a harness has: the wall-time budget and the run record.
"""

from __future__ import annotations

import threading
import time
from functools import wraps
from typing import Any

from skillrag.errors import BudgetExceeded, ContractViolation
from skillrag.harness._records import Budgets, RunRecord, Step
from skillrag.skill import (
    ArticleView,
    BudgetLimits,
    BudgetState,
    Case,
    PageRead,
    RetrieveResult,
    SavedOutput,
    SkillTools,
    hit_to_dict,
)

__all__ = ["Session"]


def _serialized(method):
    """Run the method under the session lock: a model may ask for several tool calls at once, and
    pydantic-ai runs sync tools in worker threads, so calls of one run must not interleave."""

    @wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class Session:
    """Wraps ``SkillTools`` for one case. Opens the run's own (private) case session with the run's
    ``budgets`` (queries, fetches, saves = ``max_save_retries`` + 1); a call past one raises
    ``BudgetExceeded`` from the tools *before* it runs, with the same line as on every other surface.
    Every call (ok or not) becomes a ``Step`` in ``record.steps`` with its wall time in milliseconds.
    Calls are serialised (thread-safe)."""

    def __init__(self, tools: SkillTools, case: Case, budgets: Budgets, record: RunRecord) -> None:
        self.tools = tools
        self.case = case
        self.budgets = budgets
        self.record = record
        self.t0 = time.perf_counter()
        self.last_saved: SavedOutput | None = None
        self._lock = threading.RLock()
        limits = BudgetLimits.of(budgets)
        self.account = tools.start_session(case.case_id, private=True, limits=limits, as_of=case.as_of)

    # -- budgets ------------------------------------------------------------------------------
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.t0

    def check_time(self) -> None:
        """Raise ``BudgetExceeded`` once the run's wall time passes ``max_seconds``."""
        if self.elapsed_s() > self.budgets.max_seconds:
            raise BudgetExceeded(
                f"time budget spent ({self.elapsed_s():.1f} s > {self.budgets.max_seconds:g} s)"
            )

    def budget(self) -> BudgetState:
        """The run's case account now (``queries_left``, ``fetches_left``, ``saves_left``)."""
        return self.tools.ledger.get(self.account.session_id)

    @property
    def queries_left(self) -> int:
        return self.budget().queries_left

    @property
    def fetches_left(self) -> int:
        return self.budget().fetches_left

    @property
    def saves_left(self) -> int:
        return self.budget().saves_left

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

    def _call(self, name: str, args: dict[str, Any], fn: Any) -> tuple[Any, float]:
        """``(fn(), t0)`` for tool ``name``; a failure (a refused over-budget call included) is
        recorded as a step and re-raised. The caller records the successful step from ``t0``."""
        self.check_time()
        t0 = time.perf_counter()
        try:
            return fn(), t0
        except Exception as exc:
            self._step(name, args, t0, ok=False, error=str(exc))
            raise

    @_serialized
    def load_case(self, case_id: str) -> Case:
        """The case through ``SkillTools.load_case`` (``CaseNotFound`` for another id)."""
        args = {"case_id": case_id}
        case, t0 = self._call("load_case", args, lambda: self.tools.load_case(case_id))
        self._step("load_case", args, t0)
        return case

    @_serialized
    def search(self, query: str, k: int | None = None, filters: Any = None, detail: str | None = None) -> RetrieveResult:
        """``SkillTools.retrieve``: hits, pages and budget; spends a query. ``detail``: as ``retrieve``'s."""
        args: dict[str, Any] = {"query": query} | ({"k": k} if k is not None else {})
        if filters:
            args["filters"] = {key: v for key, v in dict(filters).items() if v}
        if detail:
            args["detail"] = detail
        result, t0 = self._call("retrieve", args,
                                lambda: self.tools.retrieve(query, k, filters=filters, detail=detail))
        self.record.queries.append(query)
        self._step("retrieve", args, t0, detail=f"{len(result)} hits, {len(result.pages)} pages")
        return result

    def retrieve(self, query: str, k: int | None = None) -> list[dict[str, Any]]:
        """The hits of ``search`` as dicts (``hit_to_dict``)."""
        return [hit_to_dict(h) for h in self.search(query, k)]

    @_serialized
    def read_page(self, page_id: str) -> PageRead:
        """``SkillTools.read_page`` (``retrieve --page``); spends a query (recorded as ``page:ID``)."""
        args = {"page": page_id}
        read, t0 = self._call("retrieve", args, lambda: self.tools.read_page(page_id))
        self.record.queries.append(f"page:{page_id}")
        self._step("retrieve", args, t0, detail=f"page {page_id}: {len(read.page.articles)} articles")
        return read

    @_serialized
    def get_article(self, article_id: str, section: str | None = None, summary: bool = False) -> ArticleView:
        """The article view; raises ``BudgetExceeded`` past ``max_fetches``, ``ArticleNotFound`` etc."""
        args: dict[str, Any] = {"article_id": article_id}
        if section is not None:
            args["section"] = section
        if summary:
            args["summary"] = True
        view, t0 = self._call("get_article", args,
                              lambda: self.tools.get_article(article_id, section=section, summary=summary))
        self.record.fetches.append(article_id)
        self._step("get_article", args, t0, detail=f"{len(view.text)} chars")
        return view

    @_serialized
    def save(self, output: dict[str, Any], path: Any = None, *, check: bool = False) -> SavedOutput:
        """``SkillTools.save_output``; a rejection raises ``ContractViolation`` and is counted in
        ``record.retries`` with its reasons in ``record.reasons``. ``check``: validate only (not a save)."""
        self.check_time()
        snippets = output.get("snippets") if isinstance(output, dict) else None
        args: dict[str, Any] = {"n_snippets": len(snippets) if isinstance(snippets, list) else None}
        if check:
            args["check"] = True
        else:
            self.record.saves += 1
        t0 = time.perf_counter()
        try:
            saved = self.tools.save_output(output, path, check=check)
        except ContractViolation as exc:
            if not check:
                self.record.retries += 1
                self.record.reasons = list(exc.reasons)
            self._step("save_output", args, t0, ok=False, error=str(exc), detail="; ".join(exc.reasons[:5]))
            raise
        except Exception as exc:
            if not check and isinstance(exc, BudgetExceeded):
                self.record.saves -= 1  # refused before it ran: not an attempt
            self._step("save_output", args, t0, ok=False, error=str(exc))
            raise
        detail = f"{len(saved.warnings)} warnings" + ("" if check else f"; {saved.path}")
        if check:
            self._step("save_output", args, t0, detail="check: " + detail)
            return saved
        self.record.reasons = []
        self.record.output_path = str(saved.path)
        self.last_saved = saved
        self._step("save_output", args, t0, detail=detail)
        return saved
