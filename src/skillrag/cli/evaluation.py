"""``skillrag eval``: run arms over cases, score runs any harness saved, write the report, compare result
files, list metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from skillrag.cli._common import JsonOpt, WorkspaceOpt, console, err_console, open_workspace, print_json
from skillrag.cli._progress import BarPerName, progress_bar

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
    with progress_bar(transient=json_out) as progress:
        rep = run_evaluation(ws, cfg, out_dir, arms=arm, workers=workers, judge_model=judge_model,
                             on_progress=BarPerName(progress))
    for name, stats in rep.arms.items():
        if stats["errors"]:
            err_console.print(f"{name}: {stats['errors']} case(s) raised; see results/{name}.jsonl (rerun to retry)")
    _write(out_dir, cfg.reference, cfg.name, json_out)


@eval_app.command("score")
def score_cmd(
    runs_dir: Annotated[Path | None, typer.Argument(
        metavar="[RUNS_DIR]", help="Folder of RUNS_DIR/<case_id>/output.json (one arm); or use --arm.")] = None,
    cases: Annotated[Path | None, typer.Option("--cases", help="Case file with ground truth (JSONL).")] = None,
    workspace: WorkspaceOpt = None,
    arm: Annotated[list[str] | None, typer.Option(
        "--arm", help="NAME=RUNS_DIR, repeatable: several arms in one report (the first is the reference).")] = None,
    reference: Annotated[str | None, typer.Option("--reference", help="Reference arm for the paired tests.")] = None,
    skill: Annotated[str, typer.Option("--skill", "-s", help="Skill whose snippet limits and allowed sources "
                                                             "the outputs are checked against.")] = "cs-guidance",
    case_id: Annotated[list[str] | None, typer.Option("--case-id", help="Only this case (repeatable).")] = None,
    only_ran: Annotated[bool, typer.Option(
        "--only-ran", help="Only the cases some arm has a run folder for (an arm missing one still fails it).")
    ] = False,
    tool_log: Annotated[list[str] | None, typer.Option(
        "--tool-log", help="[ARM=]FILE tool log (default: RUNS_DIR/tool_calls.jsonl when present); repeatable.")
    ] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="Judge model id (`provider:model`).")] = None,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge to run or packet (repeatable; "
                                                                   "default: all).")] = None,
    judge_calls: Annotated[int, typer.Option("--judge-calls", min=1, max=15,
                                             help="Calls per decision with --judge-model (odd).")] = 3,
    judge_packets: Annotated[Path | None, typer.Option(
        "--judge-packets", help="Write one judge packet per accepted case, arm and judge into this new folder.")
    ] = None,
    blind: Annotated[bool, typer.Option("--blind/--no-blind", help="Shuffled, random item ids; the mapping "
                                                                  "goes to a separate file.")] = True,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the blind shuffle (reproducible).")] = None,
    mapping: Annotated[Path | None, typer.Option(
        "--mapping", help="Item mapping file (default: PACKETS.mapping.json beside the packets folder).")] = None,
    with_documents: Annotated[bool, typer.Option(
        "--with-documents", help="Put each case's required articles into its packets.")] = False,
    verdicts: Annotated[Path | None, typer.Option(
        "--verdicts", help="Votes: a filled packets folder, a .jsonl (one vote per line) or a .json list.")] = None,
    votes: Annotated[int | None, typer.Option(
        "--votes", min=1, help="Votes expected per item; fewer count as failed votes (default: those cast).")
    ] = None,
    report: Annotated[Path | None, typer.Option(
        "--report", help="Write results/ARM.jsonl, score.json and the report (Markdown, HTML, PNG) here.")] = None,
    save_scores: Annotated[bool, typer.Option(
        "--save-scores", help="Write each judged case's decisions to RUNS_DIR/<case_id>/scores.json (the file "
        "the service's live judge writes and the review page shows), replacing what is there.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Score outputs any harness saved (built-in, exported scripts, MCP, HTTP) with the eval run metrics.

    Each output is checked again against the evidence contract; a rejected one counts as failed and a
    case with no output as failed (listed). Judges: a model (--judge-model), packets for external judges
    (--judge-packets), or their verdicts read back (--verdicts). With a golden set as --cases this is
    also the offline recomputation of the service's live scores (--save-scores).
    """
    import json

    from skillrag.errors import UserError
    from skillrag.evaluation.config import JudgeSettings
    from skillrag.evaluation.judges import JUDGES as JUDGE_NAMES
    from skillrag.evaluation.packets import load_mapping, read_votes, write_packets
    from skillrag.evaluation.report import summary_table, write_report
    from skillrag.evaluation.score import ArmRuns, packet_entries, parse_arm, score_runs, score_summary
    from skillrag.skill.cases import CaseFile
    from skillrag.workspace import Workspace, atomic_write_text

    if cases is None:
        raise UserError("--cases FILE is required (the case file with ground truth)")
    if (runs_dir is None) == (not arm):
        raise UserError("give RUNS_DIR or --arm NAME=RUNS_DIR (repeatable), not both")
    if sum(x is not None for x in (judge_model, judge_packets, verdicts)) > 1:
        raise UserError("give one of --judge-model, --judge-packets, --verdicts")
    if judge_model is not None and judge_calls % 2 == 0:
        raise UserError("--judge-calls must be odd, so a majority always exists")
    unknown = [j for j in judge or [] if j not in JUDGE_NAMES]
    if unknown:
        raise UserError(f"unknown judge(s) {', '.join(unknown)} (choose from: {', '.join(JUDGE_NAMES)})")
    if runs_dir is not None:
        arms = [parse_arm(f"{runs_dir.resolve().name}={runs_dir}")]
    else:
        arms = [parse_arm(a) for a in arm or []]
    logs: dict[str, list[Path]] = {}
    for spec in tool_log or []:
        name, sep, path = spec.rpartition("=")
        if not sep:
            if len(arms) != 1:
                raise UserError(f"--tool-log {spec!r}: with several arms write ARM=FILE")
            name = arms[0].name
        if name not in {a.name for a in arms}:
            raise UserError(f"--tool-log {spec!r}: no arm named {name!r}")
        logs.setdefault(name, []).append(Path(path))
    arms = [ArmRuns(a.name, a.runs_dir, tuple(logs[a.name]) if a.name in logs else None) for a in arms]
    if workspace is None and runs_dir is not None and (runs_dir / ".." / "skillrag.yaml").is_file():
        ws = Workspace.open(runs_dir.resolve().parent)
    else:
        ws = open_workspace(workspace)
    case_file = CaseFile(cases)
    vote_set = None
    if verdicts is not None:
        if mapping is None and verdicts.is_dir():
            guess = verdicts.parent / f"{verdicts.name}.mapping.json"
            mapping = guess if guess.is_file() else None
        vote_set = read_votes(verdicts, load_mapping(mapping) if mapping is not None else None)
    judge_cfg = JudgeSettings(model=judge_model, calls=judge_calls, judges=judge or list(JUDGE_NAMES)) \
        if judge_model is not None else None
    ref = reference or arms[0].name
    if ref not in {a.name for a in arms}:
        raise UserError(f"--reference {ref!r} is not an arm ({', '.join(a.name for a in arms)})")
    # started at the first scored case, so a setup error stays one clean line
    on_progress = BarPerName(progress_bar(), label="scoring {}")
    try:
        outcome = score_runs(ws, case_file, arms, skill=skill, case_ids=case_id, only_ran=only_ran,
                             judge_model=judge_model, judge_cfg=judge_cfg, votes=vote_set,
                             votes_per_item=votes, on_progress=on_progress)
    finally:
        on_progress.stop()
    rep = outcome.report(name=report.name if report is not None else "score", reference_arm=ref)
    summary = score_summary(outcome, rep)
    written: dict[str, str] = {}
    if save_scores:
        from skillrag.evaluation.online import output_sha256, write_scores

        if outcome.judge_label is None:
            raise UserError("--save-scores needs judges: --judge-model or --verdicts")
        n_saved = 0
        for a in arms:
            for cid, r in outcome.results[a.name].items():
                folder = a.runs_dir / cid
                if r.judges and folder.is_dir():
                    trace = (r.record or {}).get("trace_id") if isinstance(r.record, dict) else None
                    write_scores(folder, r.judges, source="eval score", judge_model=outcome.judge_label,
                                 output_sha256=output_sha256(folder), trace_id=trace,
                                 extra={"golden_set": str(cases), "status": r.status})
                    n_saved += 1
        written["scores"] = f"{n_saved} scores.json file(s)"
    if judge_packets is not None:
        from skillrag.corpus import ArticleStore

        entries = packet_entries(outcome, case_file, judge or list(JUDGE_NAMES))
        docs = None
        if with_documents:
            docs = {a.id: (a.title, a.body) for a in ArticleStore(ws).list()}
        mp, mpath = write_packets(judge_packets, entries, blind=blind, seed=seed, mapping_path=mapping,
                                  documents=docs)
        written.update({"packets": str(judge_packets), "mapping": str(mpath)})
        summary["packets"] = {"folder": str(judge_packets), "items": len(mp.items), "mapping": str(mpath),
                              "blind": blind}
    if report is not None:
        from skillrag.evaluation.arms import ResultsFile

        for a in arms:
            path = report / "results" / f"{a.name}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, "".join(r.model_dump_json() + "\n" for r in outcome.results[a.name].values()))
            ResultsFile(path)  # the eval run format: `eval report` / `eval compare` read it
        meta = {"name": rep.name, "source": "eval score", "reference_arm": ref, "cases": str(cases),
                "arms": [{"name": a.name, "runs": str(a.runs_dir)} for a in arms],
                "judge": {"model": outcome.judge_label} if outcome.judge_label else None}
        atomic_write_text(report / "eval-config.json", json.dumps(meta, indent=2) + "\n")
        atomic_write_text(report / "score.json", json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
        paths = write_report(rep, report)
        written.update({k: str(v) for k, v in paths.items()})
    if json_out:
        print_json(summary if not written else {**summary, "written": written})
        return
    console.print(_table(summary_table(rep), f"eval score: {len(outcome.case_ids)} cases, reference arm {ref}"))
    for a in arms:
        if outcome.missing[a.name]:
            console.print(f"{a.name}: no output (counted as failed): {', '.join(outcome.missing[a.name])}",
                          highlight=False)
        for cid, why in outcome.failed[a.name].items():
            console.print(f"{a.name}/{cid}: failed: {why}", highlight=False, markup=False)
    for arm_name, rows in rep.paired.items():
        for metric in ("tools_grounded_all", "judge:guidance_match", "judge:snippets_sufficient"):
            if metric in rows:
                c = rows[metric]
                console.print(f"{arm_name} vs {ref} on {metric}: delta {c.delta_pp:+.1f} pp, b={c.test.b} "
                              f"c={c.test.c}, exact McNemar p={c.test.p_value:.3f}")
    for note in rep.notes:
        console.print(note, highlight=False, markup=False)
    for key, path in written.items():
        console.print(f"{key}: {path}", highlight=False)


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
