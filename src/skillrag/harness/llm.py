"""The LLM harness: any chat model runs the skill, with the four tools as its only tools.

The agent is a pydantic-ai ``Agent`` whose instructions are the skill's ``SKILL.md`` body (plus the
built-in cs-guidance SKILL.md's "Hard cases" method section when that body lacks one:
``_prompts.hard_case_method``; one source, never a copy) and the harness rules (``prompts/llm_rules.md``). ``load_case``, ``retrieve`` and ``get_article`` are
function tools; ``save_output`` is the output tool, so the run ends exactly when the evidence
contract accepts an output. A rejected save goes back to the model with every reason (a
``ModelRetry``), at most ``max_save_retries`` times; ``save_output(check=true)`` validates and sends
the offsets and warnings back the same way, without saving (at most ``MAX_CHECKS`` per run). Tool
results are the JSON of ``skillrag.skill.views`` (the same as the command line and MCP), each with the
case's ``budget``. A tool error (unknown article id, empty query) is returned to the model as
``{"error": ...}``. Budgets are enforced in code: queries, fetches and saves by the tools' per-case
account (one refused call is reported to the model with the same line as on every surface, a second
ends the run), model tokens and turns by pydantic-ai ``UsageLimits``, wall time by the run
``timeout`` and the session.
Every model request is timed and its token usage recorded as a ``Step``; the record's totals are the
run's ``RunUsage`` (``models.counted_usage``), true on every exit path, a budget stopping the run included.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import ModelRetry, ToolOutput
from pydantic_ai.models import Model
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.usage import UsageLimits

from skillrag.errors import BudgetExceeded, ContractViolation, SkillragError
from skillrag.harness._prompts import hard_case_method, render_prompt
from skillrag.harness._records import Step
from skillrag.harness._session import Session
from skillrag.models import counted_usage, make_agent, model_id, resolve_model
from skillrag.skill import Case, SavedOutput, Skill, render_manual
from skillrag.skill.views import article_json, case_json, page_json, retrieve_json, save_json

__all__ = ["MAX_CHECKS", "LLMHarness", "OutputArg", "SnippetArg"]

#: ``save_output(check=true)`` calls a run may make (each is sent back to the model as a retry prompt).
MAX_CHECKS = 5


class SnippetArg(BaseModel):
    """One snippet as the model sends it. Everything defaults to empty so that malformed snippets
    reach the evidence contract, which names every problem."""

    model_config = ConfigDict(extra="allow")

    source_article: str = ""
    source_title: str = ""
    text: str = ""
    why: str = ""


class DerivedArg(BaseModel):
    """One figure the guidance computed (the output contract's ``derived`` entry): ``value``, the quoted
    figures it comes ``from``, and ``how``. Defaults are empty so the contract names what is missing."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    value: str = ""
    from_: list[str] = Field(default_factory=list, alias="from")
    how: str = ""


class OutputArg(BaseModel):
    """The ``output`` argument of ``save_output`` (the output contract of SKILL.md)."""

    model_config = ConfigDict(extra="allow")

    case_id: str | None = None
    guidance: str = ""
    snippets: list[SnippetArg] = Field(default_factory=list)
    n_snippets: int | None = None
    articles_consulted: list[str] = Field(default_factory=list)
    derived: list[DerivedArg] | None = None


class _RunStop(Exception):
    """Ends the agent run from inside a tool (the harness, not the model, decided)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class _RecordingModel(WrapperModel):
    """Times every model request and records it, with its token usage, as a step of the run record (the
    record's token totals come from the run's ``RunUsage``: ``models.counted_usage``)."""

    def __init__(self, wrapped: Model, session: Session, name: str) -> None:
        super().__init__(wrapped)
        self._session = session
        self._name = name

    async def request(self, messages, model_settings, model_request_parameters):  # type: ignore[override]
        t0 = time.perf_counter()
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
        except Exception as exc:
            self._note(t0, ok=False, error=str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__)
            raise
        usage = response.usage
        named = [c for c in (getattr(p, "tool_name", None) for p in response.parts) if c]
        self._note(t0, detail="calls: " + ", ".join(named) if named else "text",
                   input_tokens=int(usage.input_tokens or 0), output_tokens=int(usage.output_tokens or 0))
        return response

    def _note(self, t0: float, **step: Any) -> None:
        """Count one model call that began at ``t0`` (``perf_counter``) in the run record, as a ``Step``."""
        rec, ms = self._session.record, (time.perf_counter() - t0) * 1000
        rec.model_ms += ms
        rec.model_calls += 1
        rec.steps.append(Step(kind="model", name=self._name, ms=ms, **step))


class LLMHarness:
    """Runs a case with a chat model (``model``: a model id or a pydantic-ai ``Model``).

    ``model_settings`` (a pydantic-ai ``ModelSettings`` dict, e.g. ``{"temperature": 0}``) apply to
    every request. ``guided`` forces, on every turn, the tool the workflow expects next (``next_tool``):
    for small local models that never pick a tool themselves (a llama.cpp server with SmolLM2 calls
    tools only when one is forced). Raises ``ModelError`` (via ``resolve_model``) for a bad id or missing key.
    """

    name = "llm"

    def __init__(
        self,
        model: str | Model,
        *,
        settings: Any = None,
        model_settings: dict[str, Any] | None = None,
        guided: bool = False,
    ) -> None:
        self.model = resolve_model(model, settings=settings)
        self.model_name = model if isinstance(model, str) else model_id(self.model)
        self.model_settings = model_settings
        self.guided = guided

    @staticmethod
    def next_tool(session: Session) -> str:
        """The tool the workflow expects next (guided mode): ``load_case`` once, ``retrieve`` until
        three queries (or the budget) were tried, ``get_article`` until two fetches were tried, then
        ``save_output``. Counts attempts, failed ones included, so a stuck model still moves on."""
        tried: dict[str, int] = {}
        for step in session.record.steps:
            if step.kind == "tool":
                tried[step.name] = tried.get(step.name, 0) + 1
        b = session.budgets
        if not tried.get("load_case"):
            return "load_case"
        if tried.get("retrieve", 0) < min(3, b.max_queries):
            return "retrieve"
        if tried.get("get_article", 0) < min(2, b.max_fetches):
            return "get_article"
        return "save_output"

    def run(self, session: Session, case: Case, skill: Skill, out_path=None) -> SavedOutput:
        """Run the agent loop for ``case``; returns the accepted output. Raises ``BudgetExceeded``
        (a budget ran out), ``ContractViolation`` (no accepted save after the retries, or the model
        gave up), or the model layer's errors (``ModelError`` after translation by the caller)."""
        budgets = session.budgets
        refused = {"n": 0}
        manual = render_manual(skill, session.account.limits).strip()
        method = hard_case_method(manual)  # the SKILL.md method section, unless the manual has it already
        instructions = (
            manual
            + ("\n\n" + method if method else "")
            + "\n\n"
            + render_prompt(
                "llm_rules",
                max_queries=budgets.max_queries,
                max_fetches=budgets.max_fetches,
                max_snippets=skill.config.max_snippets,
                max_save_retries=budgets.max_save_retries,
            )
        )

        def over_budget(exc: BudgetExceeded) -> dict[str, Any]:
            if session.elapsed_s() > budgets.max_seconds:
                raise _RunStop("budget_exceeded", str(exc)) from None
            refused["n"] += 1
            if refused["n"] > 1:
                raise _RunStop("budget_exceeded", str(exc))
            return {"error": str(exc), "budget": session.budget().to_dict()}

        def load_case(case_id: str) -> dict[str, Any]:
            """Load the support case: contact reason, reason path, specialist notes, transcript, its as_of
            reference date and the budget left."""
            try:
                loaded = session.load_case(case_id)
            except BudgetExceeded as exc:
                raise _RunStop("budget_exceeded", str(exc)) from None
            except SkillragError as exc:
                return {"error": str(exc)}
            return case_json(loaded, session.budget())

        def retrieve(
            query: str = "",
            k: int | None = None,
            tags: list[str] | None = None,
            title_prefix: list[str] | None = None,
            title_contains: list[str] | None = None,
            id_prefix: list[str] | None = None,
            category: list[str] | None = None,
            customer_type: list[str] | None = None,
            detail: str | None = None,
            page: str | None = None,
        ) -> dict[str, Any]:
            """Search the knowledge base. Returns ranked hits (article_id, title, relevance 0-1, section,
            preview: the start of the best-matching passage, category, customer_type, tools: the tool names
            the article gives, when any; ranks and page_ids with detail='pages'; detail='tools': a tool
            search, the tool names the best-matching articles give, each with its article) and, over the
            wiki backend, ranked navigation pages, each with its best-matching articles (shown of; cut_by says
            what left the others out). Filters (lists): tags, title_prefix, title_contains, id_prefix, category,
            customer_type. detail='pages' gives every page whole. page=PAGE_ID reads one navigation page whole
            instead of searching. Spends one query."""
            try:
                if page is not None:
                    if query.strip():
                        return {"error": "give either a query or page, not both"}
                    return page_json(session.read_page(page))
                filters = {"source_tags": tags, "title_prefixes": title_prefix, "title_contains": title_contains,
                           "id_prefixes": id_prefix, "categories": category, "customer_types": customer_type}
                return retrieve_json(session.search(query, k, filters=filters, detail=detail))
            except BudgetExceeded as exc:
                return over_budget(exc)
            except SkillragError as exc:
                return {"error": str(exc)}

        def get_article(article_id: str, section: str | None = None, summary: bool = False) -> dict[str, Any]:
            """Read a source article by id: id, title, parent, numbered sections with character offsets and
            the raw body (quote from this); or one section (its number, path 'A > B' or heading); or a short
            summary (not for quoting). Spends one fetch."""
            try:
                view = session.get_article(article_id, section=section, summary=summary)
            except BudgetExceeded as exc:
                return over_budget(exc)
            except SkillragError as exc:
                return {"error": str(exc)}
            return article_json(view)

        def save_output(output: OutputArg, check: bool = False) -> dict[str, Any]:
            """Validate the output against the evidence contract and save it; rejected outputs come
            back with every reason. check=true validates and reports (offsets, warnings) without saving."""
            data = self._complete(output, case, session)
            try:
                saved = session.save(data, out_path, check=check)
            except BudgetExceeded as exc:
                raise _RunStop("budget_exceeded", str(exc)) from None
            except ContractViolation as exc:
                left = session.saves_left
                if not check and left <= 0:
                    raise _RunStop("failed", f"save rejected {session.record.retries} times: {exc}") from None
                head = "save_output --check: the output would be rejected" if check else \
                    "save_output rejected the output"
                raise ModelRetry(
                    f"{head}:\n" + "\n".join(f"- {r}" for r in exc.reasons)
                    + f"\nFix these and call save_output again ({left} save attempt(s) left)."
                ) from None
            report = save_json(saved)
            if check:
                raise ModelRetry(
                    "save_output --check: the output would be accepted (nothing saved yet). "
                    + json.dumps({k: report[k] for k in ("evidence", "warnings", "budget")}, ensure_ascii=False)
                    + "\nFix any warning you can, then call save_output without check to save."
                )
            return {"status": "accepted", **report}

        model = _RecordingModel(self.model, session, self.model_name)
        agent = make_agent(
            model,
            instructions=instructions,
            tools=[load_case, retrieve, get_article],
            output_type=ToolOutput(
                save_output,
                name="save_output",
                description="Validate and save the output (the JSON object of the output contract); "
                "check=true only validates and reports.",
            ),
            retries={"tools": max(1, budgets.max_save_retries),
                     "output": budgets.max_save_retries + MAX_CHECKS},
            model_settings=self._settings_for(session),
            defer_model_check=True,
        )
        limits = UsageLimits(
            total_tokens_limit=budgets.max_tokens,
            request_limit=budgets.max_queries + budgets.max_fetches + budgets.max_save_retries + MAX_CHECKS + 8,
        )
        remaining = max(0.001, budgets.max_seconds - session.elapsed_s())

        def spent(usage: Any) -> None:  # the run's tokens, however it ends (a budget stopping it too)
            session.record.input_tokens += int(usage.input_tokens or 0)
            session.record.output_tokens += int(usage.output_tokens or 0)

        with counted_usage(spent) as usage:
            agent.run_sync(
                render_prompt("llm_task", case_id=case.case_id), usage=usage, usage_limits=limits, timeout=remaining
            )
        if session.last_saved is None:  # pragma: no cover - the output tool only returns after a save
            raise ContractViolation(["the model ended without an accepted save_output"])
        return session.last_saved

    def _settings_for(self, session: Session) -> Any:
        """Per-request model settings: the fixed ones, plus in guided mode a forced ``tool_choice``."""
        if not self.guided:
            return self.model_settings

        def per_request(ctx: Any) -> dict[str, Any]:
            return {**(self.model_settings or {}), "tool_choice": [self.next_tool(session)]}

        return per_request

    @staticmethod
    def _complete(output: OutputArg, case: Case, session: Session) -> dict[str, Any]:
        """The output as the contract wants it: the run's case_id, n_snippets and missing titles filled in;
        ``articles_consulted`` also lists every article the run actually read."""
        data = output.model_dump(exclude_none=True, by_alias=True)
        data["case_id"] = case.case_id  # the harness knows which case it runs; the model cannot redirect it
        snippets = []
        for s in data.get("snippets", []):
            s = dict(s)
            if not s.get("source_title") and s.get("source_article"):
                s["source_title"] = _title(session, s["source_article"])
            snippets.append(s)
        data["snippets"] = snippets
        data.setdefault("n_snippets", len(snippets))
        consulted = [a for a in data.get("articles_consulted", []) if isinstance(a, str)]
        data["articles_consulted"] = list(dict.fromkeys(consulted + session.record.fetches))
        return data


def _title(session: Session, article_id: str) -> str:
    try:
        return session.tools.store.get(article_id).title
    except SkillragError:
        return ""
