"""The front door: ``skillrag`` exports the handful of entry points a library user needs (pinned here,
as httpx pins its ``__all__``), each the subpackage's own object, and imports none of them eagerly."""

from __future__ import annotations

import subprocess
import sys

import pytest

import skillrag

FRONT_DOOR = ["__version__", "Workspace", "ingest", "build_wiki", "build_index", "open_retriever", "SearchFilters",
              "Hit", "Case", "CaseFile", "validate_output", "run_case", "RunResult", "SkillragError"]


def test_the_exports_are_pinned():
    assert sorted(skillrag.__all__) == sorted(FRONT_DOOR)
    assert sorted(skillrag._EXPORTS) == sorted(FRONT_DOOR[1:])  # every name has its module
    assert sorted(dir(skillrag)) == sorted(FRONT_DOOR)


def test_each_export_is_the_subpackages_own_object():
    from skillrag.harness import run_case
    from skillrag.search import open_retriever
    from skillrag.workspace import Workspace

    assert skillrag.Workspace is Workspace and skillrag.run_case is run_case
    assert skillrag.open_retriever is open_retriever
    for name in FRONT_DOOR:
        assert getattr(skillrag, name) is not None


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = skillrag.nope  # type: ignore[attr-defined]


def test_import_skillrag_loads_no_subpackage():
    code = "import sys, skillrag; print(sorted(m for m in sys.modules if m.startswith('skillrag.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['skillrag._version']"
