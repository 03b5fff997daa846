"""Scores of served answers and saved runs: the judges of ``judges.py``, applied after the answer is out.

Live traffic has no reference guidance, so only the **reference-free** judges can score it
(``LIVE_JUDGES``: ``correctness``); the judges that need a reference (``guidance_match``,
``snippets_sufficient``) and every deterministic metric are computed offline against a golden set by
``skillrag eval score RUNS_DIR --cases GOLDEN.jsonl`` (``--save-scores`` writes them beside each run, in
the same file as the live ones). Nothing here is a second judge: ``judge_inputs``, ``run_judge`` and its
majority rule are the evaluation's own.

- ``judge_answer(question, answer, citations, ...)``: a chat answer as a judge sees a case: the question is
  the contact reason, the answer the candidate guidance, each verified citation a snippet.
- ``judge_output(case, output, ...)``: a saved run's output, as ``eval score`` would judge it.
- ``write_scores(folder, ...)`` / ``read_scores(folder)``: ``RUN/scores.json``, beside ``output.json``:
  ``{"source", "scored_at", "judge_model", "output_sha256", "trace_id", "judges": {NAME: JudgeResult},
  "error"}``. ``output_sha256`` is the hash of the ``output.json`` bytes that were judged, so a later run
  that replaced the output is not shown with the old scores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillrag.errors import ConfigError
from skillrag.evaluation.judges import JUDGES, JudgeResult, judge_inputs, run_judge
from skillrag.evaluation.metrics import Reference
from skillrag.workspace import RunFolder, atomic_write_text

__all__ = ["LIVE_JUDGES", "check_live_judges", "judge_answer", "judge_output", "output_sha256",
           "read_scores", "write_scores"]

#: Judges that need no reference, so they can score live traffic.
LIVE_JUDGES = tuple(name for name, spec in JUDGES.items() if not spec.needs_reference)


def check_live_judges(names: Sequence[str], where: str = "service.judges") -> list[str]:
    """``names`` when each is a reference-free judge; ``ConfigError`` (one line) otherwise."""
    bad = [n for n in names if n not in LIVE_JUDGES]
    if bad:
        need = [n for n in bad if n in JUDGES]
        why = (f"{', '.join(need)} need(s) a reference: score them offline against a golden set with "
               "`skillrag eval score RUNS_DIR --cases GOLDEN.jsonl`" if need else "unknown judge(s)")
        raise ConfigError(f"{where}: {', '.join(bad)}: {why} (live judges: {', '.join(LIVE_JUDGES)})")
    return list(names)


def _judge(inputs: Any, judges: Sequence[str], model: Any, calls: int, temperature: float | None
           ) -> dict[str, JudgeResult]:
    return {name: run_judge(name, inputs, model, calls=calls, temperature=temperature) for name in judges}


def judge_answer(question: str, answer: str, citations: Sequence[Mapping[str, Any]], *, model: Any,
                 judges: Sequence[str] = LIVE_JUDGES, calls: int = 1, temperature: float | None = 0.0
                 ) -> dict[str, JudgeResult]:
    """The ``judges`` (reference-free) decisions on one served chat answer. ``citations`` are the
    answer's verified quotes (``{"source", "snippet"}``). Provider failures are failed votes
    (``run_judge``); anything else raises."""
    case = {"contact_reason": question, "case_notes": [], "case_messages": []}
    output = {"guidance": answer,
              "snippets": [{"source_article": c.get("source", "?"), "text": c.get("snippet", "")} for c in citations]}
    inputs = judge_inputs(case, output, Reference(case_id="live"))
    return _judge(inputs, check_live_judges(judges), model, calls, temperature)


def judge_output(case: Any, output: Mapping[str, Any], *, model: Any, judges: Sequence[str] = LIVE_JUDGES,
                 calls: int = 1, temperature: float | None = 0.0) -> dict[str, JudgeResult]:
    """The ``judges`` (reference-free) decisions on a saved run's accepted ``output`` for ``case``."""
    inputs = judge_inputs(case, output, Reference(case_id=str(output.get("case_id", "live"))))
    return _judge(inputs, check_live_judges(judges), model, calls, temperature)


def output_sha256(folder: Path) -> str | None:
    """sha256 of ``folder/output.json``'s bytes (the review page's output hash), None without one."""
    try:
        return hashlib.sha256(RunFolder.at(folder).output.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def write_scores(folder: Path, judged: Mapping[str, JudgeResult], *, source: str, judge_model: str | None,
                 output_sha256: str | None, trace_id: str | None = None, error: str | None = None,
                 extra: Mapping[str, Any] | None = None) -> Path:
    """Write ``folder/scores.json`` atomically (the module doc's shape) and return its path."""
    data = {"source": source, "scored_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "judge_model": judge_model, "output_sha256": output_sha256, "trace_id": trace_id,
            "judges": {k: v.model_dump(mode="json") for k, v in judged.items()}, "error": error,
            **dict(extra or {})}
    path = RunFolder.at(folder).scores
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def read_scores(folder: Path) -> dict[str, Any] | None:
    """``folder/scores.json`` as written by ``write_scores``; None when absent or not a JSON object."""
    try:
        data = json.loads(RunFolder.at(folder).scores.read_text(encoding="utf-8"))
    except (FileNotFoundError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
