"""``skillrag eval``: run arms over cases, write the report, compare result files, list metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from skillrag.cli._common import JsonOpt, WorkspaceOpt, console, err_console, open_workspace, print_json

__all__ = ["register"]

eval_app = typer.Typer(help="Evaluate: arms over cases, metrics, judges, paired statistics, report.",
                       no_args_is_help=True)


def _table(rows: list[dict[str, str]], title: str) -> Table:
    table = Table(title=title)
    for col in rows[0] if rows else []:
        table.add_column(col)
    for row in rows:
        table.add_row(*row.values())
    return table


def _write(out: Path, reference: str | None, name: str, json_out: bool) -> None:
    import json

    from skillrag.evaluation.report import load_results, summarize, summary_table, write_report

    specs, judge_model = {}, None
    cfg_path = out / "eval-config.json"
    if cfg_path.exists():
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        specs = {a["name"]: a for a in cfg.get("arms", [])}
        reference = reference or cfg.get("reference_arm")
        name = cfg.get("name", name)
        judge_model = (cfg.get("judge") or {}).get("model")
    results = load_results(out)
    judged = any(r.judges for res in results.values() for r in res.values())
    report = summarize(results, name=name, reference_arm=reference, specs=specs,
                       judge_model=(judge_model or "configured") if judged else None)
    paths = write_report(report, out)
    if json_out:
        print_json({"report": {k: str(v) for k, v in paths.items()}, "summary": summary_table(report)})
        return
    console.print(_table(summary_table(report), f"{report.name}: reference arm {report.reference_arm}"))
    for arm, rows in report.paired.items():
        for metric in ("tools_grounded_all", "judge:snippets_sufficient"):
            if metric in rows:
                c = rows[metric]
                console.print(f"{arm} vs {report.reference_arm} on {metric}: delta {c.delta_pp:+.1f} pp, "
                              f"b={c.test.b} c={c.test.c}, exact McNemar p={c.test.p_value:.3f}")
    for note in report.notes:
        console.print(note)
    console.print(f"report: {paths['md']}  {paths['html']}")


@eval_app.command("run")
def run_cmd(
    config: Annotated[Path, typer.Argument(help="Evaluation config (YAML).")],
    workspace: WorkspaceOpt = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder (default: runs/eval/NAME).")] = None,
    arm: Annotated[list[str] | None, typer.Option("--arm", help="Run only this arm (repeatable).")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, max=64, help="Cases at once per arm.")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="Judge model id (`provider:model`).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run every arm over the cases (resumable), then write results JSONL + report (Markdown, HTML, PNG)."""
    from skillrag.evaluation.arms import run_evaluation
    from skillrag.evaluation.config import load_eval_config

    cfg = load_eval_config(config)
    ws = open_workspace(workspace)
    out_dir = out or ws.runs_dir / "eval" / cfg.name
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=json_out) as progress:
        tasks: dict[str, int] = {}

        def on_progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total)
            progress.update(tasks[name], completed=done)

        rep = run_evaluation(ws, cfg, out_dir, arms=arm, workers=workers, judge_model=judge_model,
                             on_progress=on_progress)
    for name, stats in rep.arms.items():
        if stats["errors"]:
            err_console.print(f"{name}: {stats['errors']} case(s) raised; see results/{name}.jsonl (rerun to retry)")
    _write(out_dir, cfg.reference, cfg.name, json_out)


@eval_app.command("report")
def report_cmd(
    out: Annotated[Path, typer.Argument(help="Output folder of `eval run` (holds results/).")],
    reference: Annotated[str | None, typer.Option("--reference", help="Reference arm (default: config's).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Re-render the report from existing results."""
    _write(out, reference, out.name, json_out)


@eval_app.command("compare")
def compare_cmd(
    a: Annotated[Path, typer.Argument(help="Reference results file (results/ARM.jsonl).")],
    b: Annotated[Path, typer.Argument(help="Results file compared against A.")],
    metric: Annotated[list[str] | None, typer.Option("--metric", help="Rate metric or judge:NAME.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Paired comparison of B against A: rates with Wilson intervals, delta, exact McNemar p."""
    from skillrag.evaluation.report import compare_files

    rows = compare_files(a, b, metric)
    if json_out:
        print_json({m: c.model_dump() for m, c in rows.items()})
        return
    table = Table(title=f"{b.stem} vs {a.stem}")
    for col in ("metric", "n", a.stem, b.stem, "delta pp", "b", "c", "exact p"):
        table.add_column(col)
    for m, c in rows.items():
        table.add_row(m, str(c.n_paired), c.reference.format(), c.arm.format(), f"{c.delta_pp:+.1f}",
                      str(c.test.b), str(c.test.c), f"{c.test.p_value:.3f}")
    console.print(table)


@eval_app.command("metrics")
def metrics_cmd(json_out: JsonOpt = False) -> None:
    """List the registered metrics and judges."""
    from skillrag.evaluation.judges import JUDGES
    from skillrag.evaluation.metrics import METRICS

    rows = [{"name": m.name, "kind": m.kind, "side": m.side, "description": m.description} for m in METRICS.values()]
    rows += [{"name": f"judge:{j.name}", "kind": "rate", "side": j.side, "description": j.description}
             for j in JUDGES.values()]
    if json_out:
        print_json(rows)
        return
    console.print(_table(rows, "metrics"))


@eval_app.command("benchmarks")
def benchmarks_cmd(json_out: JsonOpt = False) -> None:
    """List the registered benchmarks (config: `benchmark: {name: NAME, source: PATH}`)."""
    from skillrag.evaluation.benchmarks import BENCHMARKS

    rows = [{"name": b.name, "needs source": "yes" if b.needs_source else "no", "description": b.description}
            for b in BENCHMARKS.values()]
    if json_out:
        print_json(rows)
        return
    console.print(_table(rows, "benchmarks"))


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
