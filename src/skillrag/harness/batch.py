"""``run_batch``: many cases, N workers, resumable (a case whose accepted output exists is skipped)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrag.errors import SkillragError
from skillrag.harness._records import Budgets, RunResult
from skillrag.harness._run import Harness, make_harness, output_paths, run_case
from skillrag.skill import CaseFile, Skill, SkillRegistry
from skillrag.workspace import Workspace

__all__ = ["BatchItem", "BatchReport", "is_done", "run_batch"]


@dataclass
class BatchItem:
    """One case of a batch: ``status`` is a run status, ``skipped`` (already accepted) or ``error``
    (a ``SkillragError`` stopped it; ``error`` says which); ``seconds`` of wall time."""

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
    return output_paths(ws, case_id, None if out_dir is None else out_dir / case_id / "output.json")


def is_done(ws: Workspace, case_id: str, out_dir: Path | None = None) -> bool:
    """True when the case has an output file and a record whose status is ``accepted``."""
    out, rec = _paths(ws, case_id, out_dir)
    if not (out.is_file() and rec.is_file()):
        return False
    try:
        return json.loads(rec.read_text(encoding="utf-8")).get("status") == "accepted"
    except (OSError, ValueError):
        return False


def run_batch(
    ws: Workspace,
    cases: CaseFile,
    *,
    ids: Sequence[str] | None = None,
    harness: str | Harness = "extractive",
    model: Any = None,
    guided: bool | None = None,
    skill: str | Skill = "cs-guidance",
    budgets: Budgets | dict[str, Any] | None = None,
    workers: int = 1,
    out_dir: str | Path | None = None,
    retriever: Any = None,
    force: bool = False,
    on_done: Callable[[BatchItem], None] | None = None,
) -> BatchReport:
    """Run every case of ``cases`` (or ``ids``) with ``workers`` threads.

    ``harness`` is a name (a fresh harness per case, built with ``model`` and ``guided``) or a
    ``Harness`` instance shared by all cases.

    Outputs go to ``runs/<case_id>/`` (or ``out_dir/<case_id>/``). A case already accepted there is
    skipped unless ``force``, so an interrupted batch resumes where it stopped. A ``SkillragError``
    in one case (e.g. ``ModelError``) is recorded as ``error`` for that case and the batch goes on.
    ``on_done`` is called once per case (from worker threads) for progress display.
    """
    if workers < 1:
        raise SkillragError("workers must be at least 1")
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

    def runner() -> Harness:
        # a fresh harness per case when given by name: no model client is shared between worker threads
        return make_harness(ws, harness, model, guided=guided) if isinstance(harness, str) else harness

    def one(cid: str) -> BatchItem:
        if not force and is_done(ws, cid, base):
            item = BatchItem(cid, "skipped", output_path=str(_paths(ws, cid, base)[0]))
        else:
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
                    out_path=None if base is None else base / cid / "output.json",
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

    results: dict[str, BatchItem] = {}
    if workers == 1:
        for cid in todo:
            results[cid] = one(cid)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(one, cid): cid for cid in todo}
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
    return BatchReport([results[cid] for cid in todo])
