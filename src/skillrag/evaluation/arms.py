"""Run every arm of an evaluation over the same cases, with N workers and resume.

Each arm writes ``OUT/results/ARM.jsonl``: one ``CaseResult`` per line (the output, the run record, the
deterministic metrics, the judge verdicts). A rerun skips the cases an arm already finished (a line whose
status is not ``error``), so an interrupted evaluation resumes where it stopped.

An arm runs in its own view of the workspace: the same folder with ``search.backend`` / ``search.mode``
set for the arm (an in-memory config, nothing written). An arm whose navigation-layer variant differs
from the workspace's layer runs in a variant workspace under ``OUT/variants/VARIANT/`` (a copy of the
article store and skills, with the layer rebuilt for that variant and indexed), built once and reused.

The harness is reached through a ``CaseRunner`` (``harness_runner`` calls ``skillrag.harness.run_case``);
tests pass ``skillrag.evaluation.testing.fake_run_case``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillrag.errors import EmptyInputError, IndexStateError, SkillragError, UserError
from skillrag.evaluation.config import ArmSpec, EvalConfig
from skillrag.evaluation.judges import JudgeResult, judge_inputs, not_judged, run_judge
from skillrag.evaluation.metrics import Reference, ScoredCase, ToolLocator, compute_metrics, tool_gaps
from skillrag.workspace import RunFolder, Workspace
from skillrag.workspace.config import BudgetOverrides

__all__ = [
    "ArmPreparer",
    "CaseResult",
    "CaseRunner",
    "EvalRunReport",
    "ResultsFile",
    "arm_workspace",
    "harness_runner",
    "run_evaluation",
    "score_case",
    "select_case_ids",
]


class CaseResult(BaseModel):
    """One case of one arm: what the run produced and how it scored."""

    model_config = ConfigDict(extra="ignore")

    arm: str
    case_id: str
    status: str = Field(description="accepted | failed | budget_exceeded | error (the runner raised) | "
                                    "missing (eval score: no output for the case).")
    error: str | None = None
    output: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    metrics: dict[str, bool | float | None] = Field(default_factory=dict)
    judges: dict[str, JudgeResult] = Field(default_factory=dict)
    tool_gaps: dict[str, int] | None = Field(
        None, description="Expected tools by where they stand (see metrics.tool_gaps); None = no tools expected."
    )
    seconds: float = Field(0.0, description="Wall time of run + scoring, seconds.")
    finished_at: str = ""


class ResultsFile:
    """``results/ARM.jsonl``: append-only, one ``CaseResult`` per line, the last line per case wins."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.bad_lines = 0

    def load(self) -> dict[str, CaseResult]:
        """Results by case id. A line that does not parse (e.g. cut by a crash) is skipped and counted."""
        out: dict[str, CaseResult] = {}
        self.bad_lines = 0
        if not self.path.exists():
            return out
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                res = CaseResult.model_validate_json(line)
            except ValidationError:
                self.bad_lines += 1
                continue
            out[res.case_id] = res
        return out

    def append(self, result: CaseResult) -> None:
        line = result.model_dump_json() + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()


class CaseRunner(Protocol):
    """Runs one case for one arm; returns an object with ``status``, ``output`` and ``record``."""

    def __call__(self, ws: Workspace, case: Any, arm: ArmSpec, budget: BudgetOverrides) -> Any: ...


#: Builds the workspace an arm runs in: ``(ws, arm, out_dir) -> Workspace``.
ArmPreparer = Callable[[Workspace, ArmSpec, Path], Workspace]


def _open_arm_retriever(ws: Workspace, arm: ArmSpec) -> Any:
    from skillrag.search import open_retriever

    return open_retriever(ws, backend=arm.backend, mode=arm.mode)


def harness_runner(
    case_file: Any,
    runs_dir: Path | None = None,
    *,
    retriever_factory: Callable[[Workspace, ArmSpec], Any] | None = _open_arm_retriever,
) -> CaseRunner:
    """A ``CaseRunner`` over ``skillrag.harness.run_case`` (imported lazily: owned by the harness issue).

    Outputs go to ``runs_dir/ARM/CASE.json`` (and ``CASE.record.json``). ``retriever_factory(ws, arm)``
    is called once per arm and its retriever serves every case of the arm, so the index and the
    embedder load once (default: ``skillrag.search.open_retriever`` with the arm's backend and mode;
    None lets each run open its own).
    """
    retrievers: dict[str, Any] = {}
    lock = threading.Lock()

    def retriever_for(ws: Workspace, arm: ArmSpec) -> Any:
        if retriever_factory is None:
            return None
        with lock:
            if arm.name not in retrievers:
                retrievers[arm.name] = retriever_factory(ws, arm)
            return retrievers[arm.name]

    def run(ws: Workspace, case: Any, arm: ArmSpec, budget: BudgetOverrides) -> Any:
        from skillrag.harness import run_case

        out_path = RunFolder.flat(runs_dir / arm.name, case.case_id).output if runs_dir else None
        return run_case(
            ws, case, harness=arm.harness, model=arm.model, skill=arm.skill, budgets=budget,
            cases=case_file, out_path=out_path, retriever=retriever_for(ws, arm),
        )

    return run


def _layer_variant(ws: Workspace) -> str | None:
    """The variant the workspace's current layer was built with (None = no layer)."""
    try:
        from skillrag.wiki import Layer
    except ImportError:  # pragma: no cover - sibling package not there yet
        return ws.config.wiki.variant
    layer = Layer(ws)
    if not layer.exists():
        return None
    manifest = layer.manifest()
    return getattr(manifest, "variant", None) or ws.config.wiki.variant


def _copy_store(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def variant_workspace(ws: Workspace, variant: str, root: Path, *, log: Callable[[str], None] | None = None) -> Workspace:
    """A workspace at ``root`` holding ``ws``'s articles and skills with the layer built for ``variant``.

    The layer is built with the same builder (and, for ``extractive``, the same parameters) as ``ws``'s
    layer (``skillrag.wiki.build_wiki``; rebuilt when its parameters or library version differ) and
    indexed (``skillrag.search.build_index``, backend ``wiki``). Both are incremental, so a second call
    over an unchanged corpus reuses the folder. The article store is copied with SQLite's backup API
    (the embedding cache travels with it).
    """
    from skillrag.search import build_index
    from skillrag.wiki import Layer, build_wiki

    man = Layer(ws).manifest()
    builder = man.builder if man is not None else ws.config.wiki.builder
    cfg = ws.config.model_copy(deep=True)
    cfg.wiki.variant = variant  # type: ignore[assignment]
    cfg.wiki.builder = builder  # type: ignore[assignment]
    cfg.search.backend = "wiki"
    fresh = not (root / "skillrag.yaml").exists()
    vws = Workspace.init(root, config=cfg)
    vws = Workspace(root=vws.root, config=cfg)
    if fresh or ws.store_path.stat().st_mtime > vws.store_path.stat().st_mtime:
        if log:
            log(f"copying the article store into {root}")
        _copy_store(ws.store_path, vws.store_path)
    if ws.skills_dir.exists():
        shutil.copytree(ws.skills_dir, vws.skills_dir, dirs_exist_ok=True)
    if log:
        log(f"building the {variant} layer ({builder}) in {root}")
    kwargs: dict[str, Any] = {}
    rebuild = False
    if builder == "extractive" and man is not None:
        # same grouping as the source layer; a layer built by other code or parameters is rebuilt
        if isinstance(man.params.get("max_group"), int):
            kwargs["max_group"] = man.params["max_group"]
        vman = Layer(vws).manifest()
        rebuild = vman is not None and (vman.params != man.params or vman.library_version != man.library_version)
    build_wiki(vws, builder=builder, variant=variant, model=man.model if man is not None else None,
               rebuild=rebuild, **kwargs)
    build_index(vws, backend="wiki")
    return vws


def arm_workspace(ws: Workspace, arm: ArmSpec, out_dir: Path) -> Workspace:
    """The default ``ArmPreparer``: the workspace with the arm's retrieval settings (in memory), in a
    variant workspace when the arm's layer variant differs from the one built in ``ws``."""
    base = ws
    if arm.backend == "wiki":
        current = _layer_variant(ws)
        if current is not None and current != arm.variant:
            base = variant_workspace(ws, arm.variant, out_dir / "variants" / arm.variant)
    cfg = base.config.model_copy(deep=True)
    cfg.search.backend = arm.backend
    cfg.search.mode = arm.mode
    cfg.harness.harness = arm.harness
    return Workspace(root=base.root, config=cfg)


def select_case_ids(case_file: Any, config: EvalConfig) -> list[str]:
    """The case ids to run: ``case_ids`` (checked against the file) or all, then ``limit``."""
    ids = list(case_file.ids())
    if config.case_ids is not None:
        missing = [c for c in config.case_ids if c not in set(ids)]
        if missing:
            raise UserError(f"case_ids not in the case file: {', '.join(missing[:5])}")
        ids = list(config.case_ids)
    if config.limit is not None:
        ids = ids[: config.limit]
    if not ids:
        raise EmptyInputError("no cases to evaluate")
    return ids


class EvalRunReport(BaseModel):
    """What ``run_evaluation`` did, per arm: ``{arm: {"ran": n, "resumed": n, "errors": n}}``."""

    out_dir: Path
    n_cases: int
    arms: dict[str, dict[str, int]]
    judge_model: str | None


def _dump(obj: Any) -> dict[str, Any] | None:
    if obj is None:
        return None
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return json.loads(json.dumps(obj, default=str))
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "__dataclass_fields__"):
        from dataclasses import asdict

        return json.loads(json.dumps(asdict(obj), default=str))
    raise UserError(f"cannot serialise run {type(obj).__name__}")


def score_case(
    arm: str,
    case: Any,
    reference: Reference,
    status: str,
    output: dict[str, Any] | None,
    record: dict[str, Any] | None,
    *,
    metric_names: list[str] | None = None,
    locator: ToolLocator | None = None,
    judge_model: Any = None,
    judge_cfg: Any = None,
    judges: dict[str, JudgeResult] | None = None,
    error: str | None = None,
    seconds: float = 0.0,
) -> CaseResult:
    """Score one case of one arm: the one path ``eval run`` and ``eval score`` share.

    Deterministic metrics (``compute_metrics``) and the tool gaps over the output and the run record;
    then, with ``judge_model`` and ``judge_cfg``, each configured judge (``run_judge``, majority of
    ``judge_cfg.calls``), or the ``judges`` decisions given (external verdicts). A case whose status is
    not ``accepted`` or that has no output is not sent to a judge (``not_judged``: a reject).
    """
    scored = ScoredCase(case.case_id, status, output, reference, record)
    metrics = compute_metrics(scored, metric_names)
    gaps = tool_gaps(scored, locator) if locator is not None else None
    decided: dict[str, JudgeResult] = dict(judges or {})
    if judge_model is not None and judge_cfg is not None:
        inputs = judge_inputs(case, output, reference) if output is not None and status == "accepted" else None
        for name in judge_cfg.judges:
            decided[name] = (not_judged(name) if inputs is None else run_judge(
                name, inputs, judge_model, calls=judge_cfg.calls, temperature=judge_cfg.temperature))
    return CaseResult(
        arm=arm, case_id=case.case_id, status=status, error=error, output=output, record=record, metrics=metrics,
        judges=decided, tool_gaps=gaps, seconds=seconds, finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def run_evaluation(
    ws: Workspace,
    config: EvalConfig,
    out_dir: Path,
    *,
    case_file: Any | None = None,
    runner: CaseRunner | None = None,
    preparer: ArmPreparer | None = None,
    judge_model: Any | None = None,
    arms: Iterable[str] | None = None,
    workers: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> EvalRunReport:
    """Run the arms of ``config`` over its cases into ``out_dir/results/ARM.jsonl`` (resumable).

    ``case_file`` defaults to ``skillrag.skill.CaseFile(config.cases)`` (or the prepared ``benchmark``); ``runner`` to
    ``harness_runner``; ``preparer`` to ``arm_workspace``. ``judge_model`` (a spec or a pydantic-ai
    ``Model``) overrides ``config.judge.model`` / the workspace's ``models.judge``; with none, judges are
    skipped. ``on_progress(arm, done, total)`` is called after each case. A case whose runner raises
    is recorded with status ``error`` (and retried by the next run), never lost.
    """
    if case_file is None:
        from skillrag.corpus import ArticleStore
        from skillrag.skill.cases import CaseFile

        cases_path = config.cases
        if config.benchmark is not None:
            from skillrag.evaluation.benchmarks import prepare_benchmark

            bench = prepare_benchmark(config.benchmark.name, out_dir / "benchmark", config.benchmark.source)
            cases_path = bench.cases
            if bench.corpus is not None and not ArticleStore(ws).list():
                raise UserError(f"the workspace has no articles: run `skillrag ingest {bench.corpus}` first")
        case_file = CaseFile(cases_path)
    ids = select_case_ids(case_file, config)
    runner = runner or harness_runner(case_file, out_dir / "runs")
    preparer = preparer or arm_workspace
    judge_cfg = config.judge
    if judge_model is None:
        judge_model = (judge_cfg.model if judge_cfg else None) or ws.config.models.judge
    if judge_model is not None and judge_cfg is None:
        from skillrag.evaluation.config import JudgeSettings

        judge_cfg = JudgeSettings()
    n_workers = workers or config.workers
    selected = list(arms) if arms is not None else [a.name for a in config.arms]
    for name in selected:
        config.arm(name)  # ConfigError for an unknown arm
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "eval-config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")
    cases = {cid: case_file.load(cid) for cid in ids}
    refs = {cid: Reference.from_ground_truth(case_file.ground_truth(cid)) for cid in ids}
    locator = None
    if any(r.expected_tools for r in refs.values()):
        from skillrag.corpus import ArticleStore

        locator = ToolLocator({a.id: f"{a.title}\n{a.body}" for a in ArticleStore(ws).list()})
    summary: dict[str, dict[str, int]] = {}
    for name in selected:
        arm = config.arm(name)
        results = ResultsFile(out_dir / "results" / f"{arm.name}.jsonl")
        done = {cid for cid, r in results.load().items() if r.status != "error"}
        todo = [cid for cid in ids if cid not in done]
        stats = {"ran": 0, "resumed": len(ids) - len(todo), "errors": 0}
        summary[arm.name] = stats
        if on_progress:
            on_progress(arm.name, stats["resumed"], len(ids))
        if not todo:
            continue
        arm_ws = preparer(ws, arm, out_dir)
        budget = config.budget_for(arm)

        def one(cid: str, arm: ArmSpec = arm, arm_ws: Workspace = arm_ws, budget: BudgetOverrides = budget) -> CaseResult:
            t0 = time.perf_counter()
            case = cases[cid]
            try:
                run = runner(arm_ws, case, arm, budget)
                return score_case(arm.name, case, refs[cid], str(getattr(run, "status", "failed")),
                                  _dump(getattr(run, "output", None)), _dump(getattr(run, "record", None)),
                                  metric_names=config.metrics, locator=locator, judge_model=judge_model,
                                  judge_cfg=judge_cfg, seconds=time.perf_counter() - t0)
            except IndexStateError:
                raise  # a missing or stale index is a setup error for the whole arm, not a case outcome
            except Exception as exc:  # noqa: BLE001 - recorded per case, retried on resume; the batch goes on
                kind = "" if isinstance(exc, SkillragError) else f"{type(exc).__name__}: "
                # scored as an empty output, so the case counts as a failure in every defined metric
                empty = compute_metrics(ScoredCase(cid, "error", None, refs[cid], None), config.metrics)
                return CaseResult(arm=arm.name, case_id=cid, status="error", error=f"{kind}{exc}"[:500],
                                  metrics=empty, seconds=time.perf_counter() - t0,
                                  finished_at=datetime.now(UTC).isoformat(timespec="seconds"))

        def record(cid: str, res: CaseResult, arm: ArmSpec = arm, results: ResultsFile = results,
                   stats: dict[str, int] = stats) -> None:
            results.append(res)
            stats["ran"] += 1
            stats["errors"] += res.status == "error"
            if on_progress:
                on_progress(arm.name, stats["resumed"] + stats["ran"], len(ids))

        # the one batch loop; an IndexStateError stops the arm: no further case starts, the running ones finish
        from skillrag.harness import run_each

        run_each(todo, one, workers=n_workers, on_result=record)
    model_name = None if judge_model is None else (judge_model if isinstance(judge_model, str) else
                                                   getattr(judge_model, "model_name", type(judge_model).__name__))
    return EvalRunReport(out_dir=out_dir, n_cases=len(ids), arms=summary, judge_model=model_name)
