"""The main job on the demo help center, end to end, with the embedded defaults (no model, no network).

``run_demo`` is what ``make demo`` runs: create a workspace, ingest the packaged Harbor & Pine help
center, install the built-in skills, build the extractive navigation layer and audit it, build the
search index for both backends, then run one support case through the extractive harness, whose
output the evidence contract must accept. Every step is idempotent, so running it twice reuses
what the first run built.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skillrag.corpus import ingest
from skillrag.demo_data import CASES, HELP_CENTER
from skillrag.errors import SkillragError
from skillrag.workspace import Workspace, atomic_write_text

__all__ = ["DemoReport", "run_demo", "DEFAULT_CASE"]

#: The case the demo runs unless told otherwise (a Plus member with a damaged delivery).
DEFAULT_CASE = "hp-001"


@dataclass
class DemoReport:
    """What the demo did: one ``(step, detail, seconds)`` row per step, and the run's output."""

    workspace: Path
    steps: list[tuple[str, str, float]] = field(default_factory=list)
    status: str = ""
    output: dict | None = None
    output_path: Path | None = None


def run_demo(
    directory: str | Path,
    *,
    case_id: str = DEFAULT_CASE,
    on_step: Callable[[str, str, float], None] | None = None,
) -> DemoReport:
    """Run the pipeline on the demo corpus in ``directory`` (created if needed).

    Raises ``SkillragError`` subclasses from any stage; ``report.status`` is the harness status
    (``accepted`` when the evidence contract accepted the output).
    """
    from skillrag.harness import run_case
    from skillrag.search import build_index
    from skillrag.skill import CaseFile, install_builtin_skills
    from skillrag.wiki import audit_structure, build_wiki

    report = DemoReport(workspace=Path(directory))

    def step(name: str, fn: Callable[[], str]) -> None:
        t0 = time.perf_counter()
        detail = fn()
        row = (name, detail, time.perf_counter() - t0)
        report.steps.append(row)
        if on_step:
            on_step(*row)

    ws_box: list[Workspace] = []

    def _init() -> str:
        ws = Workspace.init(directory)
        ws_box.append(ws)
        copied = install_builtin_skills(ws)
        return f"{ws.root} (skills installed: {', '.join(copied) or 'already there'})"

    def _ingest() -> str:
        ws = ws_box[0]
        rep = ingest(ws, [HELP_CENTER])
        cases_path = ws.root / "cases.jsonl"  # the default case file of `skillrag run`
        if not cases_path.exists() or cases_path.read_bytes() != CASES.read_bytes():
            atomic_write_text(cases_path, CASES.read_text(encoding="utf-8"))
        return ", ".join(f"{v} {k}" for k, v in rep.counts().items()) + f"; cases at {cases_path}"

    def _wiki() -> str:
        rep = build_wiki(ws_box[0], builder="extractive")
        audit = audit_structure(ws_box[0])
        return (f"{rep.pages} pages over {rep.articles} articles; structural audit "
                f"{'ok' if audit.ok else 'FAILED'}: {audit.referenced}/{audit.articles} articles referenced, "
                f"{len(audit.dangling)} dangling links")

    def _index() -> str:
        parts = []
        for backend in ("direct", "wiki"):
            r = build_index(ws_box[0], backend=backend)
            parts.append(f"{backend}: {r.items} items, {r.embedded} embedded, {r.reused} reused"
                         + (" (up to date)" if r.up_to_date else ""))
        return "; ".join(parts)

    def _run() -> str:
        ws = ws_box[0]
        cases = CaseFile(CASES)
        case = cases.load(case_id)
        result = run_case(ws, case, harness="extractive", cases=cases)
        report.status = result.status
        report.output = result.output
        report.output_path = result.output_path
        if not result.accepted:
            raise SkillragError(f"demo case {case_id} ended with status {result.status}")
        n = len(result.output["snippets"]) if result.output else 0
        return f"case {case_id}: {result.status}, {n} verbatim snippets -> {result.output_path}"

    step("workspace", _init)
    step("ingest", _ingest)
    step("wiki build", _wiki)
    step("index", _index)
    step("run", _run)
    return report
