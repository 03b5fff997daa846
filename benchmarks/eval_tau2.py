"""τ²-bench banking dev set: the extractive harness over every retrieval arm, with the evaluation report.

    .venv/bin/python benchmarks/eval_tau2.py [--shared ../shared] [--work build/bench-eval-tau2]
                                             [--variants] [--workers 2] [--limit N]
                                             [--arms hybrid-wiki,...] [--fresh]

Steps: ingest the 698 knowledge articles into a scratch workspace, import the 46 dev tasks as a case
file (ground truth kept for evaluation only), build the direct index and the extractive navigation
layer + its index, then run the extractive harness (no model) for every arm:
{hybrid, bm25, dense} × {wiki, direct}, and with ``--variants`` the layer ablations (no-merge,
no-intent, pooled-links) on hybrid. Every arm runs the same cases; the reference arm is hybrid over
the wiki. The report (Markdown, HTML, PNG, JSON: aggregates only) goes to
``benchmarks/results/eval_tau2/``, and ``benchmarks/results/eval_tau2.md`` gets the summary.

The per-case results (which quote article text) stay in the scratch folder, never in the repository.
No LLM judge runs here (none is reachable offline): the report says "not measured (no judge model)".
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
console = Console()


def corpus_ceiling(ws, cases_path: Path, limit: int | None) -> dict[str, int]:
    """Expected tools (distinct per case) named in the required documents / anywhere in the corpus."""
    from skillrag.corpus import ArticleStore
    from skillrag.evaluation.metrics import _words
    from skillrag.skill.cases import CaseFile

    texts = {a.id: _words(a.title + "\n" + a.body) for a in ArticleStore(ws).list()}
    cf = CaseFile(cases_path)
    out = {"tools": 0, "in_required": 0, "in_corpus": 0}
    for cid in cf.ids()[:limit]:
        gt = cf.ground_truth(cid)
        for tool in dict.fromkeys(gt.expected_tools):
            needle = _words(tool)
            out["tools"] += 1
            out["in_required"] += any(needle in texts.get(d, "") for d in gt.required_documents)
            out["in_corpus"] += any(needle in t for t in texts.values())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="folder holding data/tau2-banking")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-eval-tau2", help="scratch folder")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results", help="report folder")
    ap.add_argument("--variants", action="store_true", help="also run the layer ablations (hybrid, wiki)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="first N cases only (smoke runs)")
    ap.add_argument("--fresh", action="store_true", help="delete earlier per-case results first")
    ap.add_argument("--arms", default=None,
                    help="comma-separated arm names to run (e.g. hybrid-wiki while iterating; default: all)")
    args = ap.parse_args(argv)

    from skillrag.corpus import ingest
    from skillrag.evaluation import EvalConfig, load_results, run_evaluation, summarize, write_report
    from skillrag.evaluation.report import summary_table
    from skillrag.search import build_index
    from skillrag.skill.cases import write_cases
    from skillrag.skill.tau2 import import_tau2
    from skillrag.wiki import build_wiki
    from skillrag.workspace import Workspace, atomic_write_text
    from skillrag.workspace.config import WorkspaceConfig, dump_config

    tau2 = args.shared / "data" / "tau2-banking"
    if not (tau2 / "tasks_dev.json").is_file():
        console.print(f"error: {tau2} not found (pass --shared)")
        return 2
    t_start = time.perf_counter()
    # the library's default settings every run (an older skillrag.yaml in the scratch folder is replaced)
    ws_dir = args.work / "ws"
    ws_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(ws_dir / "skillrag.yaml", dump_config(WorkspaceConfig(name="tau2-banking")))
    ws = Workspace.init(ws_dir)
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    rep = ingest(ws, [tau2 / "documents"], tag="tau2-banking")
    cases_path = args.work / "tau2_dev_cases.jsonl"
    n_cases = write_cases(cases_path, import_tau2(tau2 / "tasks_dev.json"))
    timings["ingest + import"] = time.perf_counter() - t0
    console.print(f"ingest: {rep.counts()}; {n_cases} cases → {cases_path}")

    t0 = time.perf_counter()
    build_index(ws, backend="direct")
    timings["direct index"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_wiki(ws, builder="extractive", variant="full", rebuild=True)  # current builder code; vectors cached
    build_index(ws, backend="wiki")
    timings["wiki layer + index"] = time.perf_counter() - t0

    arms = [
        {"name": f"{mode}-{backend}", "backend": backend, "mode": mode}
        for backend in ("wiki", "direct")
        for mode in ("hybrid", "bm25", "dense")
    ]
    if args.variants:
        arms += [{"name": f"hybrid-wiki-{v}", "backend": "wiki", "mode": "hybrid", "variant": v}
                 for v in ("no-merge", "no-intent", "pooled-links")]
    if args.arms:
        wanted = [a.strip() for a in args.arms.split(",") if a.strip()]
        unknown = sorted(set(wanted) - {a["name"] for a in arms})
        if unknown:
            console.print(f"error: unknown arm(s) {', '.join(unknown)}; known: {', '.join(a['name'] for a in arms)}")
            return 2
        arms = [a for a in arms if a["name"] in wanted]
    reference = "hybrid-wiki" if any(a["name"] == "hybrid-wiki" for a in arms) else arms[0]["name"]
    cfg = EvalConfig.model_validate({
        "name": "tau2-banking-dev-extractive", "cases": str(cases_path), "reference_arm": reference,
        "workers": args.workers, "limit": args.limit, "arms": arms,
    })
    out_dir = args.work / "eval"
    if args.fresh and out_dir.exists():
        shutil.rmtree(out_dir)

    t0 = time.perf_counter()
    with Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        tasks: dict[str, int] = {}

        def on_progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total)
            progress.update(tasks[name], completed=done)

        run_rep = run_evaluation(ws, cfg, out_dir, on_progress=on_progress)
    timings["arms"] = time.perf_counter() - t0

    report = summarize(load_results(out_dir), name=cfg.name, reference_arm=cfg.reference,
                       specs={a.name: a.model_dump() for a in cfg.arms})
    report_dir = args.out / "eval_tau2"
    paths = write_report(report, report_dir)
    rows = summary_table(report, ["accepted", "docs_consulted_any", "tools_in_guidance_all", "tools_grounded_all"])
    ceiling = corpus_ceiling(ws, cases_path, args.limit)
    table = Table(title=f"{cfg.name}: {report.n_cases} cases, reference {report.reference_arm}")
    for col in rows[0]:
        table.add_column(col)
    for row in rows:
        table.add_row(*row.values())
    console.print(table)
    errors = {a: s["errors"] for a, s in run_rep.arms.items() if s["errors"]}
    timings["total"] = time.perf_counter() - t_start

    lines = [
        "# τ²-bench banking dev: extractive harness across retrieval arms",
        "",
        (f"Generated by `benchmarks/eval_tau2.py`{' --variants' if args.variants else ''} on "
        f"{platform.machine()} / Python {platform.python_version()}, {args.workers} workers. "
        f"{report.n_cases} dev cases, extractive harness (no model), reference arm `{report.reference_arm}`."),
        "Rates: k/n with 95% Wilson intervals. LLM-judge metrics: not measured (no judge model).",
        "",
        "| " + " | ".join(rows[0]) + " |",
        "|" + "---|" * len(rows[0]),
        *("| " + " | ".join(r.values()) + " |" for r in rows),
        "",
        ("Corpus ceiling for the tool metrics (how many expected tools any quote could ground): of "
        f"{ceiling['tools']} expected tool uses (distinct per case), {ceiling['in_required']} are named in the "
        f"case's required documents and {ceiling['in_corpus']} somewhere in the corpus."),
        "",
        ("Where the expected tools stand (tool uses; the investment localiser at tool level): grounded = a cited "
        "snippet names it; read = named in an article the run consulted but not quoted; not reached = named "
        "only in articles the run did not consult; absent = named in no article."),
        "",
        "| arm | grounded | read, not quoted | not reached | absent |",
        "|---|---|---|---|---|",
        *(f"| {a.name} | {a.tool_gaps['grounded']} | {a.tool_gaps['in_consulted_article']} | "
          f"{a.tool_gaps['in_other_article']} | {a.tool_gaps['not_in_corpus']} |" for a in report.arms if a.tool_gaps),
        "",
        "Paired exact McNemar tests against the reference arm on `tools_grounded_all` and `docs_consulted_any`:",
        "",
        "| arm | metric | delta (pp) | b | c | exact p |",
        "|---|---|---|---|---|---|",
    ]
    for arm, comps in report.paired.items():
        for metric in ("tools_grounded_all", "docs_consulted_any"):
            if metric in comps:
                c = comps[metric]
                lines.append(f"| {arm} | {metric} | {c.delta_pp:+.1f} | {c.test.b} | {c.test.c} | "
                             f"{c.test.p_value:.3f} |")
    results = load_results(out_dir)
    case_seconds = sum(r.seconds for res in results.values() for r in res.values())
    ran = sum(s["ran"] for s in run_rep.arms.values())
    resumed = sum(s["resumed"] for s in run_rep.arms.values())
    lines += ["", f"Per-case wall time summed over all arms and cases: {case_seconds:.0f} s "
              f"({sum(len(r) for r in results.values())} runs; the machine was shared, so times are indicative). "
              f"This invocation ran {ran} runs and resumed {resumed} from earlier results; its own wall time "
              "(seconds): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()) + ".",
              f"Errors (cases whose run raised): {errors or 'none'}.",
              "", "Full report: [eval_tau2/report.md](eval_tau2/report.md) (also HTML and PNG plots).", ""]
    (args.out / "eval_tau2.md").write_text("\n".join(lines), encoding="utf-8")
    console.print(f"wrote {args.out / 'eval_tau2.md'} and {paths['md']}")
    console.print("timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
