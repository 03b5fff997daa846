"""A real workspace with three accepted extractive runs (demo help center), copied fresh per test."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from skillrag.review.testing import demo_review_workspace
from skillrag.workspace import Workspace


@pytest.fixture(scope="session")
def built_review_ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("review-base") / "ws"
    demo_review_workspace(root)
    return root


@pytest.fixture
def ws(built_review_ws, tmp_path) -> Workspace:
    dest = tmp_path / "ws"
    shutil.copytree(built_review_ws, dest)
    return Workspace.open(dest)


def output_path(ws: Workspace, case_id: str) -> Path:
    return ws.runs_dir / case_id / "output.json"


def read_output(ws: Workspace, case_id: str) -> dict:
    return json.loads(output_path(ws, case_id).read_text(encoding="utf-8"))


def write_output(ws: Workspace, case_id: str, data: dict) -> str:
    """Write ``data`` as the run's output.json; returns the new file's SHA-256."""
    raw = json.dumps(data, indent=2, ensure_ascii=False).encode()
    output_path(ws, case_id).write_bytes(raw)
    return hashlib.sha256(raw).hexdigest()


def sha_of(ws: Workspace, case_id: str) -> str:
    return hashlib.sha256(output_path(ws, case_id).read_bytes()).hexdigest()
