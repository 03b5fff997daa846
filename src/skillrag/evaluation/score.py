"""``eval score``: score runs that any harness saved, with the same metrics, judges and report as ``eval run``.

``score_runs`` reads each arm's ``RUNS_DIR/<case_id>/output.json`` (``collect.collect_runs``), checks it
again against the evidence contract over the workspace's articles (``SkillTools.check_output``, and the
stored offsets of its ``audit`` block when it has one), and scores it through ``arms.score_case``, the
path ``eval run`` uses: the metrics registry, the tool gaps, and the judges (a judge model, or external
verdicts read back by ``packets.read_votes``). What a case turns into:

==========================================  ==========  ===========================================
what RUNS_DIR holds for the case            status      scored as
==========================================  ==========  ===========================================
output.json the contract accepts            accepted    the output
output.json the contract rejects            failed      no output (every outcome metric fails);
                                                        the reasons are in ``error``
output.json that is not a JSON object       failed      no output
record.json with status failed/budget_...   that status no output (a later failed run; an older
                                                        output.json beside it is not used)
nothing (no folder, no output, no record)   missing     no output: counted as failed, and listed
==========================================  ==========  ===========================================

Every case of the case file is scored (or the ``case_ids`` given); ``only_ran`` keeps the cases that some
arm left a folder for, so a 10-case harness run is not diluted by the 36 cases it never attempted,
while an arm that skipped one of those 10 still fails it. A case that is not accepted is not sent to a
judge (``judges.not_judged``: a reject), so model and external judges see the same items.
"""

from __future__ import annotations

import re
import statistics as pystats
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrag.errors import EmptyInputError, UserError
from skillrag.evaluation.arms import CaseResult, score_case
from skillrag.evaluation.collect import CollectedRun, collect_runs, read_tool_log
from skillrag.evaluation.judges import JUDGES, JudgeResult, decide, judge_inputs, not_judged
from skillrag.evaluation.metrics import METRICS, Reference, ToolLocator
from skillrag.evaluation.packets import PacketEntry, VoteSet, prompt_sha256
from skillrag.evaluation.report import Report, summarize
from skillrag.workspace.runs import RunFolder, tool_log_path

__all__ = ["ArmRuns", "ScoreOutcome", "packet_entries", "parse_arm", "score_runs", "score_summary"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_MAX_REASONS = 5


@dataclass(frozen=True)
class ArmRuns:
    """One arm: a ``name`` (names ``results/NAME.jsonl``), its ``runs_dir``, and its tool logs
    (default: ``RUNS_DIR/tool_calls.jsonl`` when it exists)."""

    name: str
    runs_dir: Path
    tool_logs: tuple[Path, ...] | None = None


def parse_arm(spec: str) -> ArmRuns:
    """``NAME=DIR`` → ``ArmRuns``; ``UserError`` for a bad name or a missing ``=``."""
    name, sep, folder = spec.partition("=")
    if not sep or not folder:
        raise UserError(f"--arm {spec!r}: expected NAME=RUNS_DIR")
    if not _NAME.match(name):
        raise UserError(f"--arm {spec!r}: the name must be letters, digits, '_', '.', '-' (at most 64)")
    return ArmRuns(name, Path(folder))


@dataclass
class ScoreOutcome:
    """What ``score_runs`` found and scored.

    ``results[arm][case_id]`` are ``CaseResult``s (the ``eval run`` type); ``missing[arm]`` lists the
    cases with nothing in RUNS_DIR, ``failed[arm]`` the others that did not score as accepted, with
    why; ``extra[arm]`` the run folders whose name is no case of the case file; ``missing_votes`` the
    (arm, case, judge) items a packet was written for but no vote came back (left out of that judge's
    rate); ``cost_sources[arm][case]`` where each case's cost came from (``record.json``, ``tool_log``,
    ``audit`` or None).
    """

    case_ids: list[str]
    arms: list[ArmRuns]
    results: dict[str, dict[str, CaseResult]]
    missing: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, dict[str, str]] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)
    missing_votes: list[tuple[str, str, str]] = field(default_factory=list)
    cost_sources: dict[str, dict[str, str | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    judge_label: str | None = None

    def report(self, *, name: str = "score", reference_arm: str | None = None) -> Report:
        """The ``eval run`` report over these results (Wilson intervals, exact McNemar tests)."""
        specs = {a.name: _spec(a, self.results[a.name]) for a in self.arms}
        rep = summarize(self.results, name=name, reference_arm=reference_arm, specs=specs,
                        judge_model=self.judge_label)
        extra_notes = []
        for arm, ids in self.missing.items():
            if ids:
                extra_notes.append(f"{arm}: {len(ids)} case(s) with no output in {_dir(self, arm)}, counted as "
                                   f"failed: {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}")
        for arm, why in self.failed.items():
            if why:
                extra_notes.append(f"{arm}: {len(why)} output(s) not accepted on re-validation or failed runs: "
                                   f"{', '.join(list(why)[:20])}{' ...' if len(why) > 20 else ''}")
        if self.missing_votes:
            extra_notes.append(f"{len(self.missing_votes)} judge item(s) got no vote and are left out of that "
                               "judge's rate")
        return rep.model_copy(update={"notes": [*rep.notes, *extra_notes, *self.notes]})


def _dir(outcome: ScoreOutcome, arm: str) -> str:
    return next(str(a.runs_dir) for a in outcome.arms if a.name == arm)


def _spec(arm: ArmRuns, results: Mapping[str, CaseResult]) -> dict[str, Any]:
    """What the report's arm table shows: harness and model from the run records when they agree."""
    harnesses = {r.record.get("harness") for r in results.values() if r.record and r.record.get("harness")}
    models = {r.record.get("model") for r in results.values() if r.record and r.record.get("model")}
    return {"harness": harnesses.pop() if len(harnesses) == 1 else "external",
            "model": models.pop() if len(models) == 1 else None, "runs": str(arm.runs_dir)}


def _validate(run: CollectedRun, tools: Any) -> tuple[str, dict[str, Any] | None, str | None, list[str]]:
    """``(status, output or None, error, notes)`` for one collected run (see the module table)."""
    if run.record_status is not None and run.record_status != "accepted":
        err = run.record_error or f"record.json: status {run.record_status}"
        if run.output is not None:
            err += " (the output.json beside it is from an earlier run and is not scored)"
        return run.record_status, None, err, []
    if run.output_error is not None:
        return "failed", None, run.output_error, []
    if run.output is None:
        if run.record_status == "accepted":
            return "failed", None, "record.json says accepted but output.json is missing", []
        if run.present:
            return "failed", None, "no output.json", []
        return "missing", None, "no output.json", []
    reasons = list(tools.check_output(run.output))
    if run.output.get("case_id") != run.case_id:
        reasons.insert(0, f"case_id: {run.output.get('case_id')!r} in the output of run folder {run.case_id!r}")
    audit_reasons, notes = tools.check_audit(run.output)
    reasons += audit_reasons
    if reasons:
        more = f" (+{len(reasons) - _MAX_REASONS} more)" if len(reasons) > _MAX_REASONS else ""
        return "failed", None, "evidence contract: " + "; ".join(reasons[:_MAX_REASONS]) + more, notes
    return "accepted", run.output, None, notes


def _extra_folders(runs_dir: Path, known: set[str]) -> list[str]:
    return sorted(p.name for p in runs_dir.iterdir() if p.is_dir() and p.name not in known
                  and RunFolder.at(p).present)


def _external(judge: str, key: tuple[str, str, str], votes: VoteSet, prompt: str,
              votes_per_item: int | None) -> tuple[JudgeResult | None, str | None]:
    """The decision from external votes for one item, or ``(None, why)`` when it cannot be used."""
    if key not in votes.votes:
        return None, None
    want = votes.hashes.get(key)
    if want is not None and want != prompt_sha256(prompt):
        return None, (f"{key[0]}/{key[1]} {judge}: the candidate changed since its packet was written; "
                      "its votes are not counted")
    return decide(judge, votes.votes[key], votes_per_item), None


def score_runs(
    ws: Any,
    case_file: Any,
    arms: Sequence[ArmRuns],
    *,
    skill: str = "cs-guidance",
    case_ids: Sequence[str] | None = None,
    only_ran: bool = False,
    metric_names: list[str] | None = None,
    judge_model: Any = None,
    judge_cfg: Any = None,
    votes: VoteSet | None = None,
    votes_per_item: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ScoreOutcome:
    """Score every arm's saved runs against ``case_file``'s ground truth (see the module doc).

    ``ws`` is the workspace whose articles the outputs are checked against, ``skill`` the skill whose
    snippet limits and allowed sources apply. ``judge_model`` + ``judge_cfg`` (``JudgeSettings``) run
    the judges with a model; ``votes`` (``packets.read_votes``) use external verdicts instead, a strict
    majority of each item's votes (of ``votes_per_item`` when given). ``on_progress(arm, done, total)``
    is called after each case. Raises ``UserError`` for an arm folder that does not exist, duplicate
    arm names, unknown case ids, both a judge model and votes, and ``EmptyInputError`` when nothing is
    left to score.
    """
    from skillrag.corpus import ArticleStore
    from skillrag.skill import SkillRegistry, SkillTools

    if not arms:
        raise UserError("no runs to score: give RUNS_DIR or --arm NAME=RUNS_DIR")
    names = [a.name for a in arms]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"arm name(s) given twice: {', '.join(dupes)}")
    if judge_model is not None and votes is not None:
        raise UserError("give a judge model or external verdicts, not both")
    for a in arms:
        if not a.runs_dir.is_dir():
            raise UserError(f"{a.runs_dir}: no such runs folder")
    all_ids = list(case_file.ids())
    if case_ids is not None:
        unknown = [c for c in case_ids if c not in case_file]
        if unknown:
            raise UserError(f"case id(s) not in {case_file.path.name}: {', '.join(unknown[:5])}")
        ids = list(dict.fromkeys(case_ids))
    else:
        ids = all_ids
    collected: dict[str, dict[str, CollectedRun]] = {}
    notes: list[str] = []
    for a in arms:
        logs = a.tool_logs if a.tool_logs is not None else tuple(
            p for p in [tool_log_path(a.runs_dir)] if p.is_file())
        read = [read_tool_log(p, skill=skill) for p in logs]
        for log in read:
            if log.bad_lines:
                notes.append(f"{a.name}: {log.path}: {log.bad_lines} line(s) that do not parse were skipped")
        collected[a.name] = collect_runs(a.runs_dir, ids, tool_logs=read)
    if only_ran:
        ids = [c for c in ids if any(collected[a.name][c].present for a in arms)]
        if not ids:
            raise EmptyInputError("no case of the case file has a run folder in any arm (nothing to score)")
    sk = SkillRegistry(ws).get(skill)
    tools = SkillTools(ws, sk)
    cases = {cid: case_file.load(cid) for cid in ids}
    refs = {cid: Reference.from_ground_truth(case_file.ground_truth(cid)) for cid in ids}
    locator = None
    if any(r.expected_tools for r in refs.values()):
        locator = ToolLocator({x.id: f"{x.title}\n{x.body}" for x in ArticleStore(ws).list()})
    vote_judges = votes.judges if votes is not None else []
    outcome = ScoreOutcome(case_ids=ids, arms=list(arms), results={}, notes=notes)
    seen_vote_keys: set[tuple[str, str, str]] = set()
    for a in arms:
        res: dict[str, CaseResult] = {}
        outcome.missing[a.name], outcome.failed[a.name] = [], {}
        outcome.cost_sources[a.name] = {}
        for n, cid in enumerate(ids, 1):
            run = collected[a.name][cid]
            status, output, error, case_notes = _validate(run, tools)
            for note in [*run.notes, *case_notes]:
                notes.append(f"{a.name}/{cid}: {note}")
            if status == "missing":
                outcome.missing[a.name].append(cid)
            elif status != "accepted":
                outcome.failed[a.name][cid] = error or status
            outcome.cost_sources[a.name][cid] = run.cost_source
            judged: dict[str, JudgeResult] = {}
            if votes is not None:
                inputs = judge_inputs(cases[cid], output, refs[cid]) if status == "accepted" else None
                for j in vote_judges:
                    key = (a.name, cid, j)
                    if inputs is None:
                        judged[j] = not_judged(j)
                        seen_vote_keys.add(key)
                        continue
                    decision, why = _external(j, key, votes, inputs.render(j), votes_per_item)
                    if why:
                        notes.append(why)
                    if decision is not None:
                        judged[j] = decision
                        seen_vote_keys.add(key)
                    else:
                        outcome.missing_votes.append(key)
            res[cid] = score_case(a.name, cases[cid], refs[cid], status, output, run.record,
                                  metric_names=metric_names, locator=locator, judge_model=judge_model,
                                  judge_cfg=judge_cfg, judges=judged or None, error=error)
            if on_progress:
                on_progress(a.name, n, len(ids))
        outcome.results[a.name] = res
        outcome.extra[a.name] = _extra_folders(a.runs_dir, set(all_ids))
    if votes is not None:
        stray = sorted(k for k in votes.votes if k not in seen_vote_keys and (k[0] not in names or k[1] not in ids))
        if stray:
            notes.append(f"{len(stray)} voted item(s) are outside the scored arms/cases and were ignored: "
                         + ", ".join("/".join(k) for k in stray[:10]))
        outcome.judge_label = f"external verdicts ({Path(votes.source).name})"
    elif judge_model is not None:
        outcome.judge_label = judge_model if isinstance(judge_model, str) else getattr(
            judge_model, "model_name", type(judge_model).__name__)
    return outcome


def packet_entries(outcome: ScoreOutcome, case_file: Any, judges: Sequence[str]) -> list[PacketEntry]:
    """One ``PacketEntry`` per accepted (arm, case) and judge: what an external judge is asked about."""
    unknown = [j for j in judges if j not in JUDGES]
    if unknown:
        raise UserError(f"unknown judge(s) {', '.join(unknown)} (choose from: {', '.join(JUDGES)})")
    out = []
    for arm, res in outcome.results.items():
        for cid, r in res.items():
            if r.status != "accepted" or r.output is None:
                continue
            ref = Reference.from_ground_truth(case_file.ground_truth(cid))
            for j in judges:
                out.append(PacketEntry(arm, case_file.load(cid), ref, r.output, j))
    return out


# --- the --json shape ----------------------------------------------------------------------------------


def _arm_metrics(report: Report, arm: str, results: Mapping[str, CaseResult]) -> dict[str, dict[str, Any]]:
    summary = next(a for a in report.arms if a.name == arm)
    out: dict[str, dict[str, Any]] = {}
    for m in METRICS.values():
        vals = [float(v) for r in results.values() if (v := r.metrics.get(m.name)) is not None]
        if m.kind == "rate":
            ri = summary.rates.get(m.name)
            if ri is None:
                continue
            out[m.name] = {"kind": "rate", "mean": ri.rate, "k": ri.k, "n": ri.n, "low": ri.low, "high": ri.high}
        elif m.kind in ("fraction", "score"):
            out[m.name] = {"kind": m.kind, "mean": summary.means.get(m.name), "n": len(vals)}
        else:
            out[m.name] = {"kind": "cost", "mean": pystats.fmean(vals) if vals else None,
                           "median": summary.medians.get(m.name), "total": summary.totals.get(m.name),
                           "n": len(vals)}
    for j, js in summary.judges.items():
        ri = js.rate
        out[f"judge:{j}"] = {"kind": "rate", "mean": ri.rate, "k": ri.k, "n": ri.n, "low": ri.low,
                             "high": ri.high, "failed_decisions": js.failed_decisions,
                             "split_cases": js.split_cases, "calls": js.calls}
    return out


def _case_row(r: CaseResult, cost_source: str | None) -> dict[str, Any]:
    return {"case_id": r.case_id, "status": r.status, "error": r.error, "cost_source": cost_source,
            "metrics": r.metrics,
            "judges": {j: {"decision": v.decision, "votes": [x.verdict for x in v.votes], "split": v.split,
                           "failure": v.failure} for j, v in r.judges.items()}}


def score_summary(outcome: ScoreOutcome, report: Report) -> dict[str, Any]:
    """The ``--json`` object: ``{"n", "metrics": {name: {"mean", ...}}, "cases": [...], ...}`` for one arm;
    for several, ``{"n", "reference_arm", "arms": {ARM: {...}}, "paired": {...}}``.

    Rates carry ``k``, ``n`` and the 95% Wilson ``low``/``high``; fractions and scores their ``mean`` over
    the cases where they are defined; costs ``mean``, ``median`` and ``total``. Judges appear as
    ``judge:NAME`` rates.
    """
    arms: dict[str, Any] = {}
    for a in outcome.arms:
        res = outcome.results[a.name]
        arms[a.name] = {
            "runs_dir": str(a.runs_dir),
            "n": len(res),
            "metrics": _arm_metrics(report, a.name, res),
            "cases": [_case_row(r, outcome.cost_sources[a.name].get(cid)) for cid, r in res.items()],
            "missing": outcome.missing.get(a.name, []),
            "failed": outcome.failed.get(a.name, {}),
            "extra_folders": outcome.extra.get(a.name, []),
        }
    common = {"judge": outcome.judge_label, "missing_votes": ["/".join(k) for k in outcome.missing_votes],
              "notes": report.notes}
    if len(arms) == 1:
        name, only = next(iter(arms.items()))
        return {"n": only["n"], "arm": name, **only, **common}
    paired = {arm: {m: {"n_paired": c.n_paired, "reference": c.reference.rate, "arm": c.arm.rate,
                        "delta": c.delta, "b": c.test.b, "c": c.test.c, "p_value": c.test.p_value}
                    for m, c in rows.items()} for arm, rows in report.paired.items()}
    return {"n": len(outcome.case_ids), "reference_arm": report.reference_arm, "arms": arms, "paired": paired,
            **common}
