"""``run_batch``: many cases, N workers, resumable (a case whose accepted output exists is skipped).

One batch at a time per workspace: ``run_batch`` holds the workspace's write lock
(``Workspace.write_lock``), so a second batch on the same workspace fails at once with
``WorkspaceError`` instead of running the same cases again. Setting the ``stop`` event stops
scheduling: cases already running finish, the rest are reported as ``not_started`` and run on the
next call (resume).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from skillrag.errors import SkillragError
from skillrag.harness._records import Budgets, RunResult
from skillrag.harness._run import Harness, make_harness, output_paths, run_case
from skillrag.skill import CaseFile, Skill, SkillRegistry
from skillrag.workspace import RunFolder, Workspace
from skillrag.workspace.config import BudgetOverrides

T = TypeVar("T")

__all__ = ["BatchItem", "BatchReport", "is_done", "run_batch", "run_each"]


@dataclass
class BatchItem:
    """One case of a batch: ``status`` is a run status, ``skipped`` (already accepted), ``error``
    (a ``SkillragError`` stopped it; ``error`` says which) or ``not_started`` (the batch was stopped
    before this case began); ``seconds`` of wall time."""

    case_id: str
    status: str
    seconds: float = 0.0
    error: str | None = None
    output_path: str | None = None


@dataclass
class BatchReport:
    """What ``run_batch`` did, case by case, in case-file order."""

    items: list[BatchItem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for it in self.items:
            out[it.status] = out.get(it.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts(), "items": [it.__dict__ for it in self.items]}


def _paths(ws: Workspace, case_id: str, out_dir: Path | None) -> tuple[Path, Path]:
    return output_paths(ws, case_id, None if out_dir is None else RunFolder.of(out_dir, case_id).output)


def is_done(ws: Workspace, case_id: str, out_dir: Path | None = None) -> bool:
    """True when the case has an output file and a record whose status is ``accepted``."""
    out, rec = _paths(ws, case_id, out_dir)
    if not (out.is_file() and rec.is_file()):
        return False
    try:
        return json.loads(rec.read_text(encoding="utf-8")).get("status") == "accepted"
    except (OSError, ValueError):
        return False


def run_each(
    ids: Sequence[str],
    fn: Callable[[str], T],
    *,
    workers: int = 1,
    stop: threading.Event | None = None,
    on_result: Callable[[str, T], None] | None = None,
) -> dict[str, T]:
    """The one batch loop: ``{id: fn(id)}`` for ``ids`` in order, ``workers`` at a time (``workers`` 1:
    in this thread; more: a thread pool). At most ``workers`` calls are submitted at once, so once
    ``stop`` is set no further id starts: running calls finish and the ids not begun are absent from the
    result. ``on_result(id, result)`` is called in this thread as each call ends. An exception ``fn``
    raises propagates once the calls already running have finished; the ids not begun never start."""
    results: dict[str, T] = {}

    def done(key: str, res: T) -> None:
        results[key] = res
        if on_result is not None:
            on_result(key, res)

    if workers == 1:
        for key in ids:
            if stop is not None and stop.is_set():
                break
            done(key, fn(key))
        return results
    queue = list(reversed(ids))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        running: dict[Future[T], str] = {}
        while queue or running:
            while queue and len(running) < workers and not (stop is not None and stop.is_set()):
                key = queue.pop()
                running[pool.submit(fn, key)] = key
            if not running:
                break
            finished, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                key = running.pop(fut)
                try:
                    res = fut.result()
                except BaseException:
                    queue.clear()  # nothing more starts; the pool waits for the running calls
                    raise
                done(key, res)
    return results


def run_batch(
    ws: Workspace,
    cases: CaseFile,
    *,
    ids: Sequence[str] | None = None,
    harness: str | Harness = "extractive",
    model: Any = None,
    guided: bool | None = None,
    skill: str | Skill = "cs-guidance",
    budgets: Budgets | BudgetOverrides | dict[str, Any] | None = None,
    workers: int = 1,
    out_dir: str | Path | None = None,
    retriever: Any = None,
    force: bool = False,
    on_done: Callable[[BatchItem], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> BatchReport:
    """Run every case of ``cases`` (or ``ids``) with ``workers`` threads.

    ``harness`` is a name (a fresh harness per case, built with ``model`` and ``guided``) or a
    ``Harness`` instance shared by all cases.

    Outputs go to ``runs/<case_id>/`` (or ``out_dir/<case_id>/``). A case already accepted there is
    skipped unless ``force``, so an interrupted batch resumes where it stopped. A ``SkillragError``
    in one case (e.g. ``ModelError``) is recorded as ``error`` for that case and the batch goes on.
    ``on_done`` is called once per case (from worker threads) for progress display, ``on_start``
    with the case id as a case begins. ``stop``: once set, no further case starts; running cases
    finish and every case not begun is reported as ``not_started`` (the CLI sets it on Ctrl-C).

    Holds the workspace's write lock for the whole batch: raises ``WorkspaceError`` at once when
    another writer (another batch, an ingest, an index or wiki build) holds it.
    """
    if workers < 1:
        raise SkillragError("workers must be at least 1")
    with ws.write_lock("run-batch"):
        return _run_batch(
            ws, cases, ids=ids, harness=harness, model=model, guided=guided, skill=skill, budgets=budgets,
            workers=workers, out_dir=out_dir, retriever=retriever, force=force, on_done=on_done,
            on_start=on_start, stop=stop or threading.Event(),
        )


def _run_batch(
    ws: Workspace,
    cases: CaseFile,
    *,
    ids: Sequence[str] | None,
    harness: str | Harness,
    model: Any,
    guided: bool | None,
    skill: str | Skill,
    budgets: Budgets | BudgetOverrides | dict[str, Any] | None,
    workers: int,
    out_dir: str | Path | None,
    retriever: Any,
    force: bool,
    on_done: Callable[[BatchItem], None] | None,
    on_start: Callable[[str], None] | None,
    stop: threading.Event,
) -> BatchReport:
    skill_obj = skill if isinstance(skill, Skill) else SkillRegistry(ws).get(skill)
    todo = list(ids) if ids is not None else cases.ids()
    for cid in todo:
        cases.load(cid)  # CaseNotFound before any work starts
    base = Path(out_dir) if out_dir is not None else None
    if retriever is None:
        try:
            from skillrag.search import open_retriever

            retriever = open_retriever(ws, backend=skill_obj.config.backend, mode=skill_obj.config.mode)
        except ImportError:  # pragma: no cover - search package absent
            retriever = None
    if isinstance(harness, str):
        make_harness(
            ws, harness, model, guided=guided
        )  # a bad name, model id or missing key fails once, up front

    def one(cid: str) -> BatchItem:
        if not force and is_done(ws, cid, base):
            item = BatchItem(cid, "skipped", output_path=str(_paths(ws, cid, base)[0]))
        else:
            if on_start is not None:
                on_start(cid)
            t0 = time.perf_counter()
            try:
                res: RunResult = run_case(
                    ws,
                    cases.load(cid),
                    harness=harness,
                    model=model,
                    skill=skill_obj,
                    budgets=budgets,
                    cases=cases,
                    out_path=None if base is None else RunFolder.of(base, cid).output,
                    retriever=retriever,
                )
                item = BatchItem(
                    cid,
                    res.status,
                    time.perf_counter() - t0,
                    res.record.error,
                    str(res.output_path) if res.output_path else None,
                )
            except SkillragError as exc:
                item = BatchItem(cid, "error", time.perf_counter() - t0, str(exc))
        if on_done is not None:
            on_done(item)
        return item

    results = run_each(todo, one, workers=workers, stop=stop)
    return BatchReport(
        [results.get(cid) or BatchItem(cid, "not_started", error="the batch was stopped first") for cid in todo]
    )
