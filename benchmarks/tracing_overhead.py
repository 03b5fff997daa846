"""What tracing costs when it is off: the shipped code (spans through the OpenTelemetry API, no SDK set
up) against the same code with every span stripped, and, for scale, with tracing on.

    .venv/bin/python benchmarks/tracing_overhead.py [--runs 40] [--work build/bench-tracing]
                                                    [--out benchmarks/results/tracing_overhead.md]

Workload: extractive runs (``run_case``, no model) of the packaged demo help center's cases with the
term-overlap retriever double, so tool calls (each a span) are a large share of the work and an
overhead would show. Three arms take turns run by run in one process (the order rotating):

- ``off``      the code as shipped, no tracer provider (the default: ``OTEL_TRACES_EXPORTER`` unset);
- ``stripped`` the same runs with the span code replaced by nothing (``tracing.span`` a bare context,
               the tool span's attribute hooks no-ops): the code as it would be without tracing;
- ``on``       an SDK tracer provider with a ``SimpleSpanProcessor`` into an in-memory exporter.

Printed: the median wall time per run of each arm, off / stripped (1.00 = no overhead) and on / stripped,
the 95% interval of off / stripped from a bootstrap over the paired runs (seeded), and the spans
recorded: none while off, one per run and tool call while on. Because whole runs are noisy on a shared
machine, the cost of one span while off is also timed directly (``tracing.span`` with attributes against
a bare context manager, 200,000 times each) and scaled by the spans a run opens.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _workspace(root: Path) -> tuple[Any, Any]:
    from skillrag.corpus import ingest
    from skillrag.demo_data import CASES, HELP_CENTER
    from skillrag.skill import CaseFile
    from skillrag.workspace import Workspace

    if root.exists():
        shutil.rmtree(root)
    ws = Workspace.init(root)
    ingest(ws, [HELP_CENTER])
    return ws, CaseFile(CASES)


@contextlib.contextmanager
def _stripped():
    """Every span of a run replaced by nothing: the harness's and the tool spans' code paths."""
    from opentelemetry.trace import INVALID_SPAN

    import skillrag.harness._run as run_mod
    import skillrag.skill.tools as tools_mod

    @contextlib.contextmanager
    def nothing(*args: Any, **kwargs: Any):
        yield INVALID_SPAN

    saved = (run_mod.span, run_mod.current_trace_id, run_mod._note_run, tools_mod.tool_span,
             tools_mod.note_result, tools_mod.note_failure)
    run_mod.span, run_mod.current_trace_id, run_mod._note_run = nothing, lambda: None, lambda *a: None
    tools_mod.tool_span, tools_mod.note_result, tools_mod.note_failure = nothing, lambda *a: None, lambda *a: None
    try:
        yield
    finally:
        (run_mod.span, run_mod.current_trace_id, run_mod._note_run, tools_mod.tool_span,
         tools_mod.note_result, tools_mod.note_failure) = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40, help="runs per arm (each arm runs every case in turn)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-tracing")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "tracing_overhead.md")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    from skillrag.harness import run_case
    from skillrag.skill.testing import FakeRetriever
    from skillrag.tracing import tracing_on
    from skillrag.tracing.testing import record_spans

    ws, cases = _workspace(args.work / "ws")
    ids = list(cases.ids())
    retriever = FakeRetriever(ws)
    assert not tracing_on(), "run without OTEL_TRACES_EXPORTER: the off arm needs the default no-op tracer"

    traced_off = 0  # off runs whose record names a trace (a span was recorded): must stay 0

    def one(i: int) -> float:
        nonlocal traced_off
        case = cases.load(ids[i % len(ids)])
        t0 = time.perf_counter()
        res = run_case(ws, case, harness="extractive", cases=cases, retriever=retriever)
        ms = (time.perf_counter() - t0) * 1000
        traced_off += int(res.record.trace_id is not None and not tracing_on())
        return ms

    for i in range(len(ids)):  # warm-up: imports, the store, the page cache
        one(i)
    times: dict[str, list[float]] = {"off": [], "stripped": [], "on": []}
    spans_on = 0
    arms = ["off", "stripped", "on"]
    for i in range(args.runs):
        for arm in arms[i % 3:] + arms[: i % 3]:  # the order rotates, so no arm always goes first
            if arm == "off":
                times["off"].append(one(i))
            elif arm == "stripped":
                with _stripped():
                    times["stripped"].append(one(i))
            else:
                with record_spans() as exporter:
                    times["on"].append(one(i))
                    spans_on += len(exporter.get_finished_spans())
    assert not tracing_on()

    from skillrag.tracing import span

    @contextlib.contextmanager
    def bare(*a: Any, **k: Any):
        yield None

    def per_span_us(fn: Any, n: int = 200_000) -> float:
        attrs = {"skillrag.case_id": "c1", "skillrag.skill": "cs-guidance"}
        t0 = time.perf_counter()
        for _ in range(n):
            with fn("skillrag.tool.retrieve", attrs) as cur:
                cur is not None and cur.is_recording()
        return (time.perf_counter() - t0) / n * 1e6

    span_off = statistics.median(per_span_us(span) for _ in range(3))
    span_bare = statistics.median(per_span_us(bare) for _ in range(3))
    med = {k: statistics.median(v) for k, v in times.items()}
    rng = random.Random(args.seed)
    pairs = list(zip(times["off"], times["stripped"], strict=True))
    boot = []
    for _ in range(2000):
        sample = [rng.choice(pairs) for _ in pairs]
        boot.append(statistics.median(a for a, _ in sample) / statistics.median(b for _, b in sample))
    boot.sort()
    lo, hi = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
    lines = [
        "# Tracing overhead (benchmarks/tracing_overhead.py)",
        "",
        (f"{args.runs} extractive runs per arm over the demo help center's {len(ids)} cases, arms interleaved; "
        f"Python {sys.version.split()[0]}."),
        "",
        "| arm | median ms per run | ratio to stripped |",
        "|---|---:|---:|",
        *(f"| {k} | {med[k]:.2f} | {med[k] / med['stripped']:.3f} |" for k in ("stripped", "off", "on")),
        "",
        (f"off / stripped: {med['off'] / med['stripped']:.3f} (95% bootstrap interval {lo:.3f} to {hi:.3f}); "
        f"runs traced while off: {traced_off} (no tracer provider, so no span is recorded); spans while on: "
        f"{spans_on / args.runs:.1f} per run."),
        "",
        (f"One span while off: {span_off:.2f} µs (a bare context manager: {span_bare:.2f} µs); at "
        f"{spans_on / args.runs:.0f} spans a run that is {(span_off - span_bare) * spans_on / args.runs / 1000:.3f} ms, "
        f"{(span_off - span_bare) * spans_on / args.runs / 10 / med['stripped']:.4f}% of a run."),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
