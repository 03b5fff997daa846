"""The evaluation report: per-arm rates with Wilson intervals, paired McNemar tests against the reference
arm, the guidance-vs-evidence gap, latency and cost, and plots; written as Markdown and HTML (jinja2).

``summarize(results, ...)`` turns result files into a ``Report`` (plain data, JSON-serialisable);
``write_report(report, out_dir)`` renders ``report.md``, ``report.html``, ``report.json`` and PNG plots.
``compare_files(a, b)`` is the paired comparison of two results files (``skillrag eval compare``).

The investment localiser (the paper's two-metric reading): for each arm, the gap between a guidance-side
rate and its evidence-side counterpart. Cases in the gap have guidance that names the procedure but no
cited evidence for it; they are split by whether retrieval had consulted every required document
(then the shortfall is in quoting or in the corpus text) or not (then retrieval missed articles).
"""

from __future__ import annotations

import json
import statistics as pystats
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from pydantic import BaseModel, Field

from skillrag.errors import EmptyInputError, UserError
from skillrag.evaluation.arms import CaseResult, ResultsFile
from skillrag.evaluation.judges import JUDGES
from skillrag.evaluation.metrics import GAP_PAIRS, METRICS, TOOL_GAP_KINDS
from skillrag.evaluation.statistics import (
    PairedComparison,
    PairedDelta,
    RateInterval,
    paired_comparison,
    paired_delta,
    wilson_interval,
)
from skillrag.workspace import atomic_write_text

__all__ = [
    "ArmSummary",
    "GapSummary",
    "JudgeSummary",
    "Report",
    "compare_files",
    "load_results",
    "outcomes",
    "render_template",
    "summarize",
    "write_report",
]

NOT_MEASURED = "not measured (no judge model)"


class JudgeSummary(BaseModel):
    """One judge over one arm: decisions, failures and single-call disagreement."""

    rate: RateInterval = Field(description="Accepted / judged cases (a failed decision counts as not accepted).")
    failed_decisions: int = Field(description="Cases with no majority (unparseable or failed calls).")
    split_cases: int = Field(description="Cases whose parseable votes disagreed.")
    calls: int
    dissenting_calls: int = Field(description="Calls that differ from the case's decision.")

    @property
    def disagreement(self) -> float | None:
        """Single-call disagreement: dissenting calls / calls."""
        return None if not self.calls else self.dissenting_calls / self.calls


class GapSummary(BaseModel):
    """Guidance-side pass rate minus evidence-side pass rate over the same cases (investment localiser)."""

    guidance_metric: str
    evidence_metric: str
    guidance: RateInterval
    evidence: RateInterval
    gap_pp: float | None = Field(description="Guidance rate minus evidence rate, percentage points.")
    gap_cases: int = Field(description="Cases passing the guidance metric but failing the evidence metric.")
    gap_docs_consulted: int = Field(description="Gap cases where every required document was consulted.")
    gap_docs_missed: int = Field(description="Gap cases where retrieval missed a required document.")


class ArmSummary(BaseModel):
    name: str
    spec: dict[str, Any] = Field(default_factory=dict)
    n_cases: int
    statuses: dict[str, int]
    rates: dict[str, RateInterval]
    means: dict[str, float | None] = Field(description="Mean of fraction/score metrics over defined cases.")
    medians: dict[str, float | None] = Field(description="Median of cost metrics (counts, seconds).")
    totals: dict[str, float | None] = Field(description="Sum of cost metrics over cases.")
    judges: dict[str, JudgeSummary] = Field(default_factory=dict)
    gaps: list[GapSummary] = Field(default_factory=list)
    tool_gaps: dict[str, int] | None = Field(
        None, description="Expected tool uses by where they stand (grounded / in a consulted article / "
                          "in another article / not in the corpus), summed over cases."
    )


class Report(BaseModel):
    name: str
    reference_arm: str
    n_cases: int = Field(description="Distinct cases over all arms.")
    arms: list[ArmSummary]
    paired: dict[str, dict[str, PairedComparison]] = Field(
        description="arm → metric → comparison with the reference arm (rate metrics and judges)."
    )
    paired_scores: dict[str, dict[str, PairedDelta]] = Field(
        default_factory=dict, description="arm → fraction metric → mean paired delta + Wilcoxon test."
    )
    rate_metrics: list[str]
    judge_names: list[str] = Field(description="Judges with results; empty = not measured.")
    judge_model: str | None = None
    notes: list[str] = Field(default_factory=list)


def load_results(out_dir: Path) -> dict[str, dict[str, CaseResult]]:
    """``{arm: {case_id: CaseResult}}`` from ``out_dir/results/*.jsonl`` (config order when known)."""
    res_dir = Path(out_dir) / "results"
    files = sorted(res_dir.glob("*.jsonl")) if res_dir.is_dir() else []
    if not files:
        raise EmptyInputError(f"{out_dir}: no results/*.jsonl (run `skillrag eval run` first)")
    order: list[str] = []
    cfg_path = Path(out_dir) / "eval-config.json"
    if cfg_path.exists():
        order = [a["name"] for a in json.loads(cfg_path.read_text(encoding="utf-8")).get("arms", [])]
    by_arm = {f.stem: ResultsFile(f).load() for f in files}
    ranked = [a for a in order if a in by_arm] + [a for a in by_arm if a not in order]
    return {a: by_arm[a] for a in ranked}


def outcomes(results: Mapping[str, CaseResult], metric: str) -> dict[str, bool]:
    """Per-case pass/fail for a rate metric or a judge (``judge:NAME``); undefined cases are left out.

    A judge that reached no decision counts as a fail (an unparseable verdict is a failure).
    """
    out: dict[str, bool] = {}
    for cid, r in results.items():
        if metric.startswith("judge:"):
            j = r.judges.get(metric.removeprefix("judge:"))
            if j is not None:
                out[cid] = bool(j.decision)
        else:
            v = r.metrics.get(metric)
            if v is not None:
                out[cid] = bool(v)
    return out


def _median(values: Sequence[float]) -> float | None:
    return float(pystats.median(values)) if values else None


def _gap(results: Mapping[str, CaseResult], g: str, e: str) -> GapSummary | None:
    go, eo = outcomes(results, g), outcomes(results, e)
    shared = sorted(set(go) & set(eo))
    if not shared:
        return None
    gap_ids = [c for c in shared if go[c] and not eo[c]]
    consulted = outcomes(results, "docs_consulted_all")
    in_docs = sum(1 for c in gap_ids if consulted.get(c) is True)
    gi = wilson_interval(sum(go[c] for c in shared), len(shared))
    ei = wilson_interval(sum(eo[c] for c in shared), len(shared))
    return GapSummary(
        guidance_metric=g, evidence_metric=e, guidance=gi, evidence=ei,
        gap_pp=None if gi.rate is None or ei.rate is None else 100 * (gi.rate - ei.rate),
        gap_cases=len(gap_ids), gap_docs_consulted=in_docs, gap_docs_missed=len(gap_ids) - in_docs,
    )


def _summarize_arm(name: str, results: Mapping[str, CaseResult], spec: dict[str, Any],
                   judge_names: list[str]) -> ArmSummary:
    statuses: dict[str, int] = {}
    for r in results.values():
        statuses[r.status] = statuses.get(r.status, 0) + 1
    rates, means, medians, totals = {}, {}, {}, {}
    for m in METRICS.values():
        vals = [r.metrics[m.name] for r in results.values() if r.metrics.get(m.name) is not None]
        if m.kind == "rate":
            if any(m.name in r.metrics for r in results.values()):
                rates[m.name] = wilson_interval(sum(bool(v) for v in vals), len(vals))
        elif m.kind in ("fraction", "score"):
            means[m.name] = float(pystats.fmean(vals)) if vals else None
        else:
            nums = [float(v) for v in vals]
            medians[m.name] = _median(nums)
            totals[m.name] = float(sum(nums)) if nums else None
    judges: dict[str, JudgeSummary] = {}
    for j in judge_names:
        verdicts = [r.judges[j] for r in results.values() if j in r.judges]
        if not verdicts:
            continue
        judges[j] = JudgeSummary(
            rate=wilson_interval(sum(1 for v in verdicts if v.decision), len(verdicts)),
            failed_decisions=sum(1 for v in verdicts if v.decision is None),
            split_cases=sum(1 for v in verdicts if v.split),
            calls=sum(len(v.votes) for v in verdicts),
            dissenting_calls=sum(v.dissenting for v in verdicts),
        )
    pairs = list(GAP_PAIRS)
    if {"guidance_match", "snippets_sufficient"} <= set(judges):
        pairs.append(("judge:guidance_match", "judge:snippets_sufficient"))
    gaps = [gs for g, e in pairs if (gs := _gap(results, g, e)) is not None]
    tg = [r.tool_gaps for r in results.values() if r.tool_gaps]
    tool_gap_totals = {k: sum(g.get(k, 0) for g in tg) for k in TOOL_GAP_KINDS} if tg else None
    return ArmSummary(name=name, spec=spec, n_cases=len(results), statuses=statuses, rates=rates, means=means,
                      medians=medians, totals=totals, judges=judges, gaps=gaps, tool_gaps=tool_gap_totals)


def summarize(
    results: Mapping[str, Mapping[str, CaseResult]],
    *,
    name: str = "eval",
    reference_arm: str | None = None,
    specs: Mapping[str, dict[str, Any]] | None = None,
    judge_model: str | None = None,
) -> Report:
    """Summarise ``{arm: {case_id: CaseResult}}``; paired tests run on the cases both arms scored.

    Raises ``EmptyInputError`` when there are no results and ``UserError`` for an unknown reference arm.
    """
    if not results or not any(results.values()):
        raise EmptyInputError("no results to report")
    arms = list(results)
    ref = reference_arm or arms[0]
    if ref not in results:
        raise UserError(f"reference arm {ref!r} has no results (arms: {', '.join(arms)})")
    judge_names = [j for j in JUDGES if any(j in r.judges for res in results.values() for r in res.values())]
    summaries = [_summarize_arm(a, results[a], dict((specs or {}).get(a, {})), judge_names) for a in arms]
    rate_metrics = [m.name for m in METRICS.values() if m.kind == "rate"
                    and any(m.name in s.rates for s in summaries)]
    paired: dict[str, dict[str, PairedComparison]] = {}
    for a in arms:
        if a == ref:
            continue
        paired[a] = {}
        for m in [*rate_metrics, *(f"judge:{j}" for j in judge_names)]:
            ro, ao = outcomes(results[ref], m), outcomes(results[a], m)
            if set(ro) & set(ao):
                paired[a][m] = paired_comparison(ro, ao)
    paired_scores: dict[str, dict[str, PairedDelta]] = {}
    fractions = [m.name for m in METRICS.values() if m.kind == "fraction"]
    for a in arms:
        if a == ref:
            continue
        paired_scores[a] = {}
        for m in fractions:
            rs = {c: float(v) for c, r in results[ref].items() if (v := r.metrics.get(m)) is not None}
            as_ = {c: float(v) for c, r in results[a].items() if (v := r.metrics.get(m)) is not None}
            if set(rs) & set(as_):
                paired_scores[a][m] = paired_delta(rs, as_)
    notes = []
    if not judge_names:
        notes.append(f"LLM-judge metrics (Guidance-Match, Snippets-Sufficient, correctness): {NOT_MEASURED}.")
    all_ids = {cid for res in results.values() for cid in res}
    return Report(name=name, reference_arm=ref, n_cases=len(all_ids), arms=summaries, paired=paired,
                  paired_scores=paired_scores,
                  rate_metrics=rate_metrics, judge_names=judge_names, judge_model=judge_model, notes=notes)


# --- rendering -----------------------------------------------------------------------------------


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.{digits}f}"


def _p(x: float) -> str:
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def _label(metric: str) -> str:
    if metric.startswith("judge:"):
        return {"guidance_match": "Guidance-Match", "snippets_sufficient": "Snippets-Sufficient",
                "correctness": "Correctness (reference-free)"}.get(metric[6:], metric[6:])
    return metric


def _plots(report: Report, out_dir: Path) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    files: dict[str, str] = {}
    metrics = [*report.rate_metrics, *(f"judge:{j}" for j in report.judge_names)]
    if metrics:
        width_in = min(13.0, max(6.0, 0.22 * len(metrics) * max(1, len(report.arms)) + 2.5))
        fig, ax = plt.subplots(figsize=(width_in, 4.5))
        width = 0.8 / max(1, len(report.arms))
        x = np.arange(len(metrics))
        for i, arm in enumerate(report.arms):
            rates, lo, hi = [], [], []
            for m in metrics:
                ri = arm.judges[m[6:]].rate if m.startswith("judge:") and m[6:] in arm.judges else arm.rates.get(m)
                if ri is None or ri.rate is None:
                    rates.append(np.nan), lo.append(0), hi.append(0)
                    continue
                rates.append(100 * ri.rate), lo.append(100 * (ri.rate - ri.low)), hi.append(100 * (ri.high - ri.rate))
            ax.bar(x + i * width, rates, width, yerr=[lo, hi], capsize=3, label=arm.name)
        ax.set_xticks(x + width * (len(report.arms) - 1) / 2)
        ax.set_xticklabels([_label(m) for m in metrics], rotation=25, ha="right", fontsize=8)
        ax.set_ylabel("pass rate, % (95% Wilson interval)")
        ax.set_ylim(0, 105)
        ax.legend(fontsize=7, ncols=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        fig.savefig(out_dir / "rates.png", dpi=110)
        plt.close(fig)
        files["rates"] = "rates.png"
    search = [a.medians.get("search_seconds") for a in report.arms]
    gen = [a.medians.get("generation_seconds") for a in report.arms]
    if any(v is not None for v in search + gen):
        fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(report.arms)), 3.5))
        names = [a.name for a in report.arms]
        s = [v or 0.0 for v in search]
        g = [v or 0.0 for v in gen]
        ax.bar(names, s, label="search")
        ax.bar(names, g, bottom=s, label="generation (rest of the run)")
        ax.set_ylabel("median seconds per case")
        ax.tick_params(axis="x", labelrotation=25, labelsize=8)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / "latency.png", dpi=110)
        plt.close(fig)
        files["latency"] = "latency.png"
    return files


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("skillrag.evaluation", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(pct=_pct, num=_num, p=_p, label=_label)
    return env


def render_template(name: str, **ctx: Any) -> str:
    """Render one of the package's templates (``skillrag/evaluation/templates/NAME``) with ``ctx``."""
    return _env().get_template(name).render(**ctx)


def write_report(report: Report, out_dir: Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``report.json`` and the PNG plots into ``out_dir``.

    Returns ``{"md": path, "html": path, "json": path, "rates": path, ...}``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _plots(report, out_dir)
    env = _env()
    ctx = {"r": report, "plots": plots, "not_measured": NOT_MEASURED, "label": _label}
    paths = {"md": out_dir / "report.md", "html": out_dir / "report.html", "json": out_dir / "report.json"}
    atomic_write_text(paths["md"], env.get_template("report.md.j2").render(**ctx))
    atomic_write_text(paths["html"], env.get_template("report.html.j2").render(**ctx))
    atomic_write_text(paths["json"], report.model_dump_json(indent=2))
    return {**paths, **{k: out_dir / v for k, v in plots.items()}}


def summary_table(report: Report, metrics: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Rows for a console/README table: arm, each rate with its interval, medians of cost."""
    cols = list(metrics or [m for m in ("accepted", "docs_consulted_all", "tools_in_guidance_all",
                                        "tools_grounded_all") if m in report.rate_metrics])
    rows = []
    for arm in report.arms:
        row = {"arm": arm.name}
        for m in cols:
            row[m] = arm.rates[m].format() if m in arm.rates else "n/a"
        for j in report.judge_names:
            row[_label(f"judge:{j}")] = arm.judges[j].rate.format() if j in arm.judges else "n/a"
        for m in ("docs_consulted_recall", "tools_grounded_recall"):
            row[m] = _pct(arm.means.get(m))
        row["median queries/fetches"] = f"{_num(arm.medians.get('queries'))}/{_num(arm.medians.get('fetches'))}"
        row["median s"] = _num(arm.medians.get("seconds"), 3)
        rows.append(row)
    return rows


def compare_files(a: Path, b: Path, metrics: Sequence[str] | None = None) -> dict[str, PairedComparison]:
    """Paired comparison of results file ``b`` against ``a`` (``results/ARM.jsonl`` or an output folder
    holding exactly one arm), on every rate metric and judge both score; ``b - a`` deltas.

    Raises ``UserError`` for a missing file and ``EmptyInputError`` when they share no case.
    """
    ra, rb = _load_one(a), _load_one(b)
    if not set(ra) & set(rb):
        raise EmptyInputError(f"{a} and {b} share no case")
    names = list(metrics) if metrics else [
        *(m.name for m in METRICS.values() if m.kind == "rate"), *(f"judge:{j}" for j in JUDGES)
    ]
    out: dict[str, PairedComparison] = {}
    for m in names:
        if not m.startswith("judge:") and m not in METRICS:
            raise UserError(f"unknown metric {m!r} (choose from: {', '.join(METRICS)})")
        oa, ob = outcomes(ra, m), outcomes(rb, m)
        if set(oa) & set(ob):
            out[m] = paired_comparison(oa, ob)
    return out


def _load_one(path: Path) -> dict[str, CaseResult]:
    p = Path(path)
    if p.is_dir():
        files = sorted((p / "results").glob("*.jsonl")) if (p / "results").is_dir() else sorted(p.glob("*.jsonl"))
        if len(files) != 1:
            raise UserError(f"{p}: expected one results file, found {len(files)} (name the .jsonl file)")
        p = files[0]
    if not p.is_file():
        raise UserError(f"{p}: no such results file")
    res = ResultsFile(p).load()
    if not res:
        raise EmptyInputError(f"{p}: no results")
    return res
