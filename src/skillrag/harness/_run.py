"""``run_case``: one case in, a validated output and its run record out."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from opentelemetry.trace import Status, StatusCode

from skillrag._version import __version__
from skillrag.errors import (
    BudgetExceeded,
    CaseNotFound,
    ContractViolation,
    EmptyInputError,
    SkillragError,
    UserError,
)
from skillrag.harness._records import Budgets, RunRecord, RunResult
from skillrag.harness._session import Session
from skillrag.skill import Case, CaseFile, SavedOutput, Skill, SkillRegistry, SkillTools
from skillrag.tracing import current_trace_id, set_attributes, span
from skillrag.workspace import RunFolder, Workspace, atomic_write_text
from skillrag.workspace.config import BudgetOverrides
from skillrag.workspace.runs import check_output_target

__all__ = ["HARNESSES", "Harness", "make_harness", "output_paths", "run_case"]

#: Harness names the CLI offers, with one line each.
HARNESSES: dict[str, str] = {
    "extractive": "deterministic, no model: case-derived queries, BM25-ranked passages, numbered guidance",
    "llm": "a chat model runs SKILL.md with the four tools (needs --model or models.default)",
}


class Harness(Protocol):
    """Who reasons: runs one case through a ``Session`` and returns the accepted output."""

    name: str

    def run(
        self, session: Session, case: Case, skill: Skill, out_path: Path | None = None
    ) -> SavedOutput: ...


class _OneCase:
    """A case source holding one in-memory case, for ``load_case`` when no case file is given."""

    def __init__(self, case: Case) -> None:
        self._case = case

    def load(self, case_id: str) -> Case:
        if case_id != self._case.case_id:
            raise CaseNotFound(f"no case with id {case_id!r} (this run is for {self._case.case_id!r})")
        return self._case

    def ids(self) -> list[str]:
        return [self._case.case_id]

    def __contains__(self, case_id: object) -> bool:
        return case_id == self._case.case_id


def make_harness(ws: Workspace, name: str, model: Any = None, *, guided: bool | None = None) -> Harness:
    """The harness called ``name`` (see ``HARNESSES``). The ``llm`` harness takes ``model`` (an id or a
    pydantic-ai ``Model``), else the workspace's ``models.default`` (``UserError`` when there is none), and
    ``guided`` (default: the workspace's ``harness.guided``). A ``model`` with the extractive harness is a
    ``UserError`` (it calls none)."""
    if name == "extractive":
        if model is not None:  # found by a new user: `run --model X` ran the extractive harness, 0 model calls
            raise UserError(f"--model {model} needs --harness llm: the extractive harness calls no model")
        from skillrag.harness.extractive import ExtractiveHarness

        return ExtractiveHarness()
    if name == "llm":
        from skillrag.harness.llm import LLMHarness

        chosen = model if model is not None else ws.config.models.default
        if chosen is None:
            raise UserError(
                "the llm harness needs a model: pass --model provider:model or set models.default"
            )
        return LLMHarness(
            chosen, settings=ws.config.models, guided=ws.config.harness.guided if guided is None else guided
        )
    raise UserError(f"unknown harness {name!r} (known: {', '.join(HARNESSES)})")


def output_paths(ws: Workspace, case_id: str, out_path: str | Path | None = None) -> tuple[Path, Path]:
    """``(output, record)`` paths: ``runs/<case_id>/output.json`` and ``record.json`` beside it, or
    ``OUT.json`` and ``OUT.record.json`` for an explicit ``out_path`` (``record.json`` when the output is
    named ``output.json``). ``InvalidIdError`` if ``case_id`` is not a plain id (it names a folder),
    ``UserError`` if ``out_path`` is an existing folder, or an existing file that is not a saved output."""
    if out_path is None:
        run = ws.run_folder(case_id)
        return run.output, run.record
    out = Path(out_path)
    check_output_target(out, "--out", case_id + ".json")
    return out, RunFolder(out).record


def _search_setting(retriever: Any, name: str, skill_value: str | None, ws_value: str) -> str | None:
    """What ``retrieve`` will use for ``name`` (backend or mode): the given retriever's own setting,
    None for one that has none (a test double), else the skill's, else the workspace's."""
    if retriever is not None:
        value = getattr(retriever, name, None)
        return value if isinstance(value, str) else None
    return skill_value or ws_value


def run_case(
    ws: Workspace,
    case: Case,
    *,
    harness: str | Harness = "extractive",
    model: Any = None,
    skill: str | Skill = "cs-guidance",
    budgets: Budgets | BudgetOverrides | dict[str, Any] | None = None,
    cases: CaseFile | None = None,
    out_path: str | Path | None = None,
    retriever: Any = None,
) -> RunResult:
    """Run ``case`` with ``harness`` and write the validated output plus its ``RunRecord``, and the
    agent-facing ``case`` itself as ``case.json`` beside the record (``RunFolder.case``).

    ``status`` is ``accepted`` (output written), ``failed`` (no accepted save: rejected after the
    retries, the model gave up or misbehaved, nothing to quote) or ``budget_exceeded``. A junk
    output is never a crash. ``budgets`` overrides the skill's and the workspace's. ``retriever``
    replaces the one ``retrieve`` would open (tests, shared batch retrievers).

    Raises ``SkillNotFound``/``ConfigError``/``UserError`` for bad arguments and ``ModelError`` for a
    provider failure (unreachable, unauthenticated), ``IndexStateError`` without a search index;
    the run record is written first in those run-time cases.
    """
    skill_obj = skill if isinstance(skill, Skill) else SkillRegistry(ws).get(skill)
    plan = Budgets.resolve(ws.config.harness, skill_obj.config.budgets, budgets)
    runner = harness if not isinstance(harness, str) else make_harness(ws, harness, model)
    source: Any = cases if cases is not None and case.case_id in cases else _OneCase(case)
    tools = SkillTools(ws, skill_obj, cases=source, retriever=retriever)
    out, record_path = output_paths(ws, case.case_id, out_path)
    record = RunRecord(
        case_id=case.case_id,
        harness=runner.name,
        skill=skill_obj.name,
        model=getattr(runner, "model_name", None),
        guided=bool(getattr(runner, "guided", False)),
        search_backend=_search_setting(retriever, "backend", skill_obj.config.backend, ws.config.search.backend),
        search_mode=_search_setting(retriever, "mode", skill_obj.config.mode, ws.config.search.mode),
        budgets=plan,
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        skillrag_version=__version__,
    )
    attrs = {"skillrag.case_id": case.case_id, "skillrag.harness": record.harness, "skillrag.skill": record.skill,
             "skillrag.model": record.model, "skillrag.retrieve.backend": record.search_backend,
             "skillrag.retrieve.mode": record.search_mode}
    with span("skillrag.run", attrs) as current:  # every tool and model call of the run is a child
        record.trace_id = current_trace_id()
        session = Session(tools, case, plan, record)
        t0 = time.perf_counter()
        saved: SavedOutput | None = None
        raise_after: BaseException | None = None
        try:
            saved = runner.run(session, case, skill_obj, out)
            record.status, record.error = "accepted", None
        except BudgetExceeded as exc:
            record.status, record.error = "budget_exceeded", str(exc)
        except ContractViolation as exc:
            record.status, record.error = "failed", str(exc)
            record.reasons = list(exc.reasons)
        except EmptyInputError as exc:
            record.status, record.error = "failed", str(exc)
        except SkillragError as exc:
            record.status, record.error = "failed", str(exc)
            raise_after = exc
        except Exception as exc:  # noqa: BLE001 - agent-loop outcomes from pydantic-ai, provider failures; re-raised unless known
            status, message, error = _classify(exc, record.model or "model")
            record.status, record.error = status, message
            raise_after = error
        finally:
            record.wall_ms = (time.perf_counter() - t0) * 1000
            atomic_write_text(
                record_path, json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
            )
            # the case exactly as the agent saw it (agent-facing fields only), for the review page and export
            atomic_write_text(
                RunFolder(out).case, json.dumps(case.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
            )
        _note_run(current, record)
    if raise_after is not None:
        raise raise_after
    return RunResult(
        status=record.status,
        output=saved.output if saved is not None else None,
        record=record,
        output_path=saved.path if saved is not None else None,
        record_path=record_path,
    )


def _note_run(current: Any, record: RunRecord) -> None:
    """The run's outcome on its span: status, budgets spent, tokens; a run that did not end accepted
    sets the span's status to error with the record's one-line reason."""
    set_attributes(current, {
        "skillrag.run.status": record.status, "skillrag.run.error": record.error,
        "skillrag.run.queries": len(record.queries), "skillrag.run.fetches": len(record.fetches),
        "skillrag.run.saves": record.saves, "skillrag.run.retries": record.retries,
        "skillrag.run.model_calls": record.model_calls, "gen_ai.usage.input_tokens": record.input_tokens,
        "gen_ai.usage.output_tokens": record.output_tokens, "skillrag.run.wall_ms": round(record.wall_ms, 3),
    })
    if record.status != "accepted" and current.is_recording():
        current.set_status(Status(StatusCode.ERROR, (record.error or record.status)[:300]))


def _classify(exc: BaseException, model: str) -> tuple[str, str, BaseException | None]:
    """(status, one-line message, error to re-raise or None) for an exception out of a harness."""
    from pydantic_ai import exceptions as pe

    from skillrag.harness.llm import _RunStop
    from skillrag.models import as_model_error

    if isinstance(exc, _RunStop):
        return exc.status, str(exc), None
    if isinstance(exc, pe.UsageLimitExceeded):
        return "budget_exceeded", f"model budget spent: {_line(exc)}", None
    if isinstance(exc, pe.ModelContextWindowExceededError):
        return "budget_exceeded", f"model context window spent: {_line(exc)}", None
    if isinstance(exc, pe.RunCancelled | TimeoutError):
        return "budget_exceeded", f"time budget spent: {_line(exc)}", None
    translated = as_model_error(exc, model=model)
    if translated is not None:
        return "failed", str(translated), translated
    if isinstance(exc, pe.UnexpectedModelBehavior):
        return "failed", f"model gave up: {_line(exc)}", None
    return "failed", f"{type(exc).__name__}: {_line(exc)}", exc


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
