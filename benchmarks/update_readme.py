"""Copy the tables of the latest benchmark results into README.md (the headline tables) and
docs/benchmarks.md (all of them), between the BENCH markers of each.

Run by `make bench` after the benchmarks; it only reads `benchmarks/results/*.md`, so both files
always show the figures of the last run that wrote them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
START, END = "<!-- BENCH-START -->", "<!-- BENCH-END -->"
#: Each file with BENCH markers and whether it gets every table (True) or the headline ones.
TARGETS = {ROOT / "README.md": False, ROOT / "docs" / "benchmarks.md": True}


def _tables(md: str) -> list[str]:
    """Markdown tables in ``md``, in order, each as its block of ``|`` lines."""
    return [m.group(0).strip() for m in re.finditer(r"(?:^\|.*\|[ \t]*\n?)+", md, re.MULTILINE)]


def _intro(md: str) -> str:
    """The first paragraph after the title (what was run, when, on what)."""
    paras = [p.strip() for p in md.split("\n\n") if p.strip() and not p.lstrip().startswith(("#", "|"))]
    return paras[0] if paras else ""


def _bullets(md: str) -> str:
    """The ``- `` lines after the last table (fitted figures under it)."""
    tail = md[md.rindex("|") :] if "|" in md else md
    return "\n".join(line for line in tail.splitlines() if line.startswith("- "))


def section(full: bool = True, base: str = "") -> str:
    """The figures section: every table (``full``) or the headline ones (retrieval, the extractive harness,
    the agent harness); ``base`` prefixes the links to ``benchmarks/results`` (``../`` from docs/)."""
    parts = []
    retrieval = RESULTS / "retrieval.md"
    if retrieval.exists():
        md = retrieval.read_text(encoding="utf-8")
        t = _tables(md)
        parts.append("### Retrieval (τ²-bench banking, 46 dev tasks; `benchmarks/retrieval.py`)\n\n" + _intro(md)
                     + "\n\n" + "\n\n".join(t[: 2 if full else 1]) + "\n\nFull table: [benchmarks/results/retrieval.md]"
                     "(benchmarks/results/retrieval.md).")
    engines = RESULTS / "engines.md"
    if engines.exists() and full:
        md = engines.read_text(encoding="utf-8")
        t = _tables(md)
        if len(t) >= 3:
            parts.append("### Search engines: embedded vs Milvus (`benchmarks/engines.py`)\n\n" + _intro(md)
                         + "\n\n" + t[0] + "\n\n" + t[2] + "\n\n" + _bullets(md)
                         + "\n\nEmbedding throughput and the build figures: [benchmarks/results/engines.md]"
                         "(benchmarks/results/engines.md).")
    nav = RESULTS / "navigation.md"
    if nav.exists() and full:
        md = nav.read_text(encoding="utf-8")
        t = _tables(md)
        parts.append("### Navigation: what one retrieve call reaches (`benchmarks/navigation.py`)\n\n" + _intro(md)
                     + "\n\n" + (t[0] if t else "") + "\n\nDefinitions: [benchmarks/results/navigation.md]"
                     "(benchmarks/results/navigation.md).")
    ev = RESULTS / "eval_tau2.md"
    if ev.exists():
        md = ev.read_text(encoding="utf-8")
        t = _tables(md)
        parts.append("### Extractive harness across retrieval arms (`benchmarks/eval_tau2.py`)\n\n" + _intro(md)
                     + "\n\n" + (t[0] if t else "") + "\n\nPaired McNemar tests, the tool-level investment "
                     "localiser and plots: [benchmarks/results/eval_tau2.md](benchmarks/results/eval_tau2.md).")
    agents = RESULTS / "agent_harness.md"
    if agents.exists():
        md = agents.read_text(encoding="utf-8")
        t = _tables(md)
        parts.append("### The skill in a capable agent harness, judged (`benchmarks/agent_harness.py`)\n\n"
                     + _intro(md) + "\n\n" + (t[0] if t else "") + "\n\nPaired tests, per-case votes, the protocol "
                     "and the friction the agents reported: [benchmarks/results/agent_harness.md]"
                     "(benchmarks/results/agent_harness.md), [benchmarks/results/agent_harness_runs.md]"
                     "(benchmarks/results/agent_harness_runs.md).")
    return "\n\n".join(parts).replace("](benchmarks/results/", f"]({base}benchmarks/results/")


def main() -> int:
    for path, full in TARGETS.items():
        text = path.read_text(encoding="utf-8")
        if START not in text or END not in text:
            print(f"error: {path} has no {START} … {END} markers", file=sys.stderr)
            return 2
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        base = "../" * len(path.parent.relative_to(ROOT).parts)
        path.write_text(f"{head}{START}\n{section(full, base)}\n{END}{tail}", encoding="utf-8")
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
