"""The main job on the demo help center, end to end, with the embedded defaults (no model, no network).

``run_demo`` is what ``make demo`` runs: create a workspace, ingest the packaged Harbor & Pine help
center, install the built-in skills, build the extractive navigation layer and audit it, build the
search index for both backends, then run one support case through the extractive harness, whose
output the evidence contract must accept. Every step is idempotent, so running it twice reuses
what the first run built.

The demo builds only into a new (or empty) folder or its own workspace: one it created (marked by
``.skillrag/demo.json``) or one that holds nothing but the demo's articles. Any other workspace is
refused, so the demo never mixes its 37 articles into someone's corpus.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from skillrag.corpus import ingest
from skillrag.demo_data import CASES, HELP_CENTER
from skillrag.errors import SkillragError, UserError
from skillrag.workspace import Workspace, atomic_write_text

__all__ = ["DEFAULT_CASE", "DemoReport", "demo_article_ids", "run_demo"]

#: Marker file (under the workspace's ``.skillrag/``) of a workspace the demo created.
DEMO_MARKER = "demo.json"

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


def demo_article_ids() -> set[str]:
    """Ids of the packaged help center's articles (their front matter ``id``)."""
    import frontmatter

    return {str(frontmatter.load(f).get("id") or f.stem) for f in sorted(HELP_CENTER.glob("*.md"))}


def check_demo_dir(directory: str | Path) -> None:
    """Refuse (``UserError``) a ``directory`` the demo must not build into: an existing file, a
    folder with files that is not a workspace, or a workspace that is not the demo's (module doc)."""
    from skillrag.corpus import ArticleStore
    from skillrag.workspace._workspace import CONFIG_NAME

    d = Path(directory)
    if not d.exists():
        return
    if not d.is_dir():
        raise UserError(f"{d}: exists and is not a folder; pass --dir with a new folder")
    if not (d / CONFIG_NAME).is_file():
        if any(d.iterdir()):
            raise UserError(f"{d}: a folder with files that is not a skillrag workspace; "
                            "the demo builds only into a new folder or its own workspace (pass --dir NEWDIR)")
        return
    ws = Workspace.open(d)
    if (ws.state_dir / DEMO_MARKER).is_file():
        return
    ids = set(ArticleStore(ws).hashes())
    if ids and ids <= demo_article_ids():
        return  # a demo workspace made before the marker existed
    own = len(ids - demo_article_ids())
    raise UserError(f"{d}: a workspace that is not the demo's ({own} article(s) of its own); the demo does not "
                    "add its articles to it: pass --dir with a new folder")


def run_demo(
    directory: str | Path,
    *,
    case_id: str = DEFAULT_CASE,
    on_step: Callable[[str, str, float], None] | None = None,
) -> DemoReport:
    """Run the pipeline on the demo corpus in ``directory`` (created if needed).

    Raises ``SkillragError`` subclasses from any stage (``UserError`` first for a ``directory`` that
    ``check_demo_dir`` refuses, ``WorkspaceError`` when another command is writing to it);
    ``report.status`` is the harness status (``accepted`` when the evidence contract accepted the output).
    """
    from skillrag.harness import run_case
    from skillrag.search import build_index
    from skillrag.skill import CaseFile, install_builtin_skills
    from skillrag.wiki import audit_structure, build_wiki

    check_demo_dir(directory)
    report = DemoReport(workspace=Path(directory))
    lock = ExitStack()

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
        lock.enter_context(ws.write_lock("demo"))
        marker = ws.state_dir / DEMO_MARKER
        if not marker.is_file():
            atomic_write_text(marker, json.dumps({"demo": "Harbor & Pine help center"}) + "\n")
        copied = install_builtin_skills(ws)
        return f"{ws.root} (skills installed: {', '.join(copied) or 'already there'})"

    def _ingest() -> str:
        ws = ws_box[0]
        rep = ingest(ws, [HELP_CENTER])
        cases_path = ws.default_cases  # the default case file of `skillrag run`
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

    with lock:
        step("workspace", _init)
        step("ingest", _ingest)
        step("wiki build", _wiki)
        step("index", _index)
        step("run", _run)
    return report
