"""skillrag: grounded, auditable guidance from operational documents, as a portable agent skill.

The front door: the handful of entry points a library user needs, from documents to a checked answer
(``docs/library.md`` walks through them). Everything else lives in the subpackages
(``skillrag.corpus``, ``skillrag.wiki``, ``skillrag.search``, ``skillrag.skill``, ``skillrag.harness``,
``skillrag.evaluation`` …). The names are imported on first use, so ``import skillrag`` stays cheap.

    >>> import skillrag
    >>> ws = skillrag.Workspace.init("my-workspace")                # doctest: +SKIP
    >>> skillrag.ingest(ws, ["docs/"])                              # doctest: +SKIP
    >>> skillrag.build_wiki(ws); skillrag.build_index(ws)           # doctest: +SKIP
    >>> hits = skillrag.open_retriever(ws).search("lost card", k=5)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from skillrag._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from skillrag.corpus import ingest
    from skillrag.corpus.filters import SearchFilters
    from skillrag.errors import SkillragError
    from skillrag.harness import RunResult, run_case
    from skillrag.search import Hit, build_index, open_retriever
    from skillrag.skill import Case, CaseFile, validate_output
    from skillrag.wiki import build_wiki
    from skillrag.workspace import Workspace

#: name -> the module that defines it (the order of the data flow).
_EXPORTS = {
    "Workspace": "skillrag.workspace",
    "ingest": "skillrag.corpus",
    "build_wiki": "skillrag.wiki",
    "build_index": "skillrag.search",
    "open_retriever": "skillrag.search",
    "SearchFilters": "skillrag.corpus.filters",
    "Hit": "skillrag.search",
    "Case": "skillrag.skill",
    "CaseFile": "skillrag.skill",
    "validate_output": "skillrag.skill",
    "run_case": "skillrag.harness",
    "RunResult": "skillrag.harness",
    "SkillragError": "skillrag.errors",
}

__all__ = [
    "Case",
    "CaseFile",
    "Hit",
    "RunResult",
    "SearchFilters",
    "SkillragError",
    "Workspace",
    "__version__",
    "build_index",
    "build_wiki",
    "ingest",
    "open_retriever",
    "run_case",
    "validate_output",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
