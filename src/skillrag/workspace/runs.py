"""The run-folder layout, in one place: where a run's output, record, case and scores sit.

A run of case ``C`` in a workspace lives in ``runs/C/``::

    runs/C/output.json     the accepted output (the evidence contract's JSON object)
    runs/C/record.json     the run record (``skillrag.harness.RunRecord``), also for a failed run
    runs/C/case.json       the agent-facing case the run saw
    runs/C/scores.json     judges' decisions on the output (``skillrag.evaluation.online``)
    runs/tool_calls.jsonl  the tools' call log, every case of the folder together

An output written elsewhere (``run --out OUT.json``, an evaluation arm's ``RUNS/ARM/C.json``) keeps its
companions beside it as ``OUT.record.json``, ``OUT.case.json`` and ``OUT.scores.json``. Every package
asks ``RunFolder`` for these paths rather than naming the files itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from skillrag.errors import UserError
from skillrag.workspace.ids import check_id

__all__ = ["OUTPUT_FILE", "TOOL_LOG_FILE", "RunFolder", "check_output_target", "is_saved_output", "tool_log_path"]

#: The output's file name inside a run folder.
OUTPUT_FILE = "output.json"
#: The tools' call log of a runs folder (one JSON object a line).
TOOL_LOG_FILE = "tool_calls.jsonl"


def is_saved_output(path: Path) -> bool:
    """True when ``path`` holds an output a run or a save wrote (a JSON object with ``case_id`` and
    ``guidance``): the only kind of existing file an explicit output path may replace."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and "case_id" in data and "guidance" in data


def check_output_target(path: Path, option: str, example: str = "OUT.json") -> None:
    """Refuse, with one ``UserError`` line, an explicit output path (``run --out``, ``save-output --to``)
    that is a folder, or an existing file that is not a saved output (a case file, a source article,
    the workspace's config or store): writing there would destroy it. Found by new users: ``run -o
    cases.jsonl`` replaced the case file, ``save-output --to skillrag.yaml`` the config."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{p}: is a folder; {option} takes the output file's path (e.g. {p / example})")
    if p.exists() and not is_saved_output(p):
        raise UserError(f"{p}: exists and is not a saved output (a JSON object with case_id and guidance); "
                        f"{option} would overwrite it: give a new path")


def tool_log_path(runs_dir: Path) -> Path:
    """``RUNS_DIR/tool_calls.jsonl``: where the tools log their calls for the runs in ``runs_dir``."""
    return Path(runs_dir) / TOOL_LOG_FILE


@dataclass(frozen=True)
class RunFolder:
    """The files of one run, named from its ``output`` path (module doc): ``runs/C/output.json`` has
    ``record.json``, ``case.json`` and ``scores.json`` beside it; any other ``OUT.json`` has
    ``OUT.record.json``, ``OUT.case.json`` and ``OUT.scores.json``."""

    output: Path

    @classmethod
    def of(cls, runs_dir: Path, case_id: str) -> RunFolder:
        """``runs_dir/<case_id>/``; ``InvalidIdError`` when ``case_id`` is not a plain case id (it names
        a folder, so ``a/../b`` or a trailing newline is refused)."""
        return cls(Path(runs_dir) / check_id(case_id, "case") / OUTPUT_FILE)

    @classmethod
    def flat(cls, folder: Path, case_id: str) -> RunFolder:
        """``folder/<case_id>.json``, its companions beside it (an evaluation arm's ``RUNS/ARM/C.json``);
        ``InvalidIdError`` as in ``of``."""
        return cls(Path(folder) / f"{check_id(case_id, 'case')}.json")

    @classmethod
    def at(cls, folder: Path) -> RunFolder:
        """The run folder ``folder`` itself (``runs/C``), whatever its name."""
        return cls(Path(folder) / OUTPUT_FILE)

    @classmethod
    def beside(cls, path: Path) -> RunFolder:
        """The run a companion file belongs to: ``record.json`` → ``output.json``; ``OUT.record.json``
        (or ``OUT.case.json``, ``OUT.scores.json``) → ``OUT.json``; an output path → itself."""
        p = Path(path)
        for kind in ("record", "case", "scores"):
            if p.name == f"{kind}.json":
                return cls(p.with_name(OUTPUT_FILE))
            if p.name.endswith(f".{kind}.json"):
                return cls(p.with_name(p.name.removesuffix(f".{kind}.json") + ".json"))
        return cls(p)

    @property
    def folder(self) -> Path:
        return self.output.parent

    @property
    def case_id(self) -> str:
        """The case the layout names: the folder's name, or ``C`` of ``C.json``."""
        return self.folder.name if self.output.name == OUTPUT_FILE else self.output.stem

    def _companion(self, kind: str) -> Path:
        if self.output.name == OUTPUT_FILE:
            return self.output.with_name(f"{kind}.json")
        return self.output.with_name(f"{self.output.stem}.{kind}.json")

    @property
    def record(self) -> Path:
        """The run record (``skillrag.harness.RunRecord``) beside the output."""
        return self._companion("record")

    @property
    def case(self) -> Path:
        """The agent-facing case the run saw, beside the record."""
        return self._companion("case")

    @property
    def scores(self) -> Path:
        """The judges' decisions on the output (``skillrag.evaluation.online.write_scores``)."""
        return self._companion("scores")

    @property
    def present(self) -> bool:
        """The run left something: an output, or the record of a failed run."""
        return self.output.is_file() or self.record.is_file()
