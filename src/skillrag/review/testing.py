"""A real workspace with real runs for review tests (no model, no network, about a second).

``demo_review_workspace(root)`` ingests the packaged Harbor & Pine help center, builds a BM25 index
(hash embedder, so no model file is read), installs the built-in skills, copies the demo case file to
``cases.jsonl`` and runs the given cases through the extractive harness, so ``runs/<id>/`` holds an
accepted ``output.json`` (with its audit block), ``record.json`` and ``case.json``.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from skillrag.workspace import Workspace

__all__ = ["DEMO_CASES", "demo_review_workspace"]

#: The demo cases the helper runs by default.
DEMO_CASES = ("hp-001", "hp-002", "hp-003")


def demo_review_workspace(root: str | Path, case_ids: Sequence[str] = DEMO_CASES) -> Workspace:
    """Build the workspace at ``root`` (module doc) and return it. Raises if a run is not accepted."""
    from skillrag import demo_data
    from skillrag.corpus import ingest
    from skillrag.harness import run_case
    from skillrag.search import build_index
    from skillrag.skill import CaseFile, install_builtin_skills
    from skillrag.workspace import WorkspaceConfig

    cfg = WorkspaceConfig.model_validate({
        "name": "review-test",
        "search": {"backend": "direct", "mode": "bm25", "embedder": "hash"},
    })
    ws = Workspace.init(root, config=cfg)
    ingest(ws, [demo_data.HELP_CENTER])
    build_index(ws)
    install_builtin_skills(ws)
    shutil.copyfile(demo_data.CASES, ws.root / "cases.jsonl")
    cases = CaseFile(ws.root / "cases.jsonl")
    for cid in case_ids:
        res = run_case(ws, cases.load(cid), cases=cases)
        if not res.accepted:
            raise RuntimeError(f"demo case {cid} ended {res.status}: {res.record.error}")
    return ws
