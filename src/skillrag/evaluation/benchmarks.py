"""Benchmarks declared as data: where a benchmark's cases (with ground truth) and its corpus come from.

``BENCHMARKS`` is the registry an evaluation config names (``benchmark: {name: ..., source: ...}``):

- ``demo``             the packaged Harbor & Pine help center and its support cases with reference
                       guidance (``skillrag.demo_data``); no source needed.
- ``tau2-banking-dev`` the τ²-bench banking knowledge base: ``SOURCE/documents/*.json`` (articles) and
                       ``SOURCE/tasks_dev.json`` (tasks), adapted to cases + ground truth by
                       ``skillrag.skill.tau2.import_tau2`` (required documents, expected tools, actions).
- ``jsonl``            any case file in the ``CaseFile`` format (``source`` = the file); no corpus.

``prepare(out_dir)`` returns the case-file path (writing the adapted JSONL under ``out_dir`` when the
benchmark needs conversion); ``corpus`` is the folder to ingest, or None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillrag.errors import UserError

__all__ = ["BENCHMARKS", "Benchmark", "PreparedBenchmark", "prepare_benchmark"]


@dataclass(frozen=True)
class PreparedBenchmark:
    """A benchmark ready to run: its case file and the corpus folder to ingest (None = already there)."""

    name: str
    cases: Path
    corpus: Path | None


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    needs_source: bool
    prepare: Callable[[Path | None, Path], PreparedBenchmark]


def _demo(source: Path | None, out_dir: Path) -> PreparedBenchmark:
    from skillrag import demo_data

    return PreparedBenchmark("demo", demo_data.CASES, demo_data.HELP_CENTER)


def _tau2(source: Path | None, out_dir: Path) -> PreparedBenchmark:
    from skillrag.skill.cases import write_cases
    from skillrag.skill.tau2 import import_tau2

    if source is None:
        raise UserError("benchmark tau2-banking-dev needs source: the tau2-banking folder")
    tasks = source / "tasks_dev.json"
    if not tasks.is_file() or not (source / "documents").is_dir():
        raise UserError(f"{source}: not a tau2-banking folder (needs tasks_dev.json and documents/)")
    cases = out_dir / "tau2_banking_dev_cases.jsonl"
    write_cases(cases, import_tau2(tasks))
    return PreparedBenchmark("tau2-banking-dev", cases, source / "documents")


def _jsonl(source: Path | None, out_dir: Path) -> PreparedBenchmark:
    if source is None or not source.is_file():
        raise UserError(f"{source}: no such case file")
    return PreparedBenchmark("jsonl", source, None)


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in [
        Benchmark("demo", "Packaged demo help center + 14 cases with reference guidance.", False, _demo),
        Benchmark("tau2-banking-dev", "τ²-bench banking knowledge base, 46 dev tasks (SOURCE = the folder).",
                  True, _tau2),
        Benchmark("jsonl", "Any CaseFile JSONL with ground truth (SOURCE = the file).", True, _jsonl),
    ]
}


def prepare_benchmark(name: str, out_dir: Path, source: str | Path | None = None) -> PreparedBenchmark:
    """Resolve benchmark ``name``: ``UserError`` for an unknown name or a missing/invalid ``source``."""
    bench = BENCHMARKS.get(name)
    if bench is None:
        raise UserError(f"unknown benchmark {name!r} (choose from: {', '.join(BENCHMARKS)})")
    if bench.needs_source and source is None:
        raise UserError(f"benchmark {name!r} needs a source (see `skillrag eval benchmarks`)")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return bench.prepare(Path(source) if source is not None else None, Path(out_dir))
