"""After-the-answer scoring: a judge scores each served answer and each saved run once the client has it.

The app hands a finished item to the scorer **after its response has gone out**: a ``/chat`` answer from a
background task that Starlette runs once the last event of the stream was sent, a ``/runs`` run once its
job has stored the result. ``submit_answer`` / ``submit_run`` only queue the item on the scorer's own
worker thread and return; they never raise. The judging happens there, in a trace of its own (a
``skillrag.judge`` span naming the judged answer's trace in ``skillrag.judge.trace_id``), with the
evaluation's judges (``evaluation.online``: the reference-free ones; the others run offline with
``skillrag eval score`` against a golden set). Whatever it raises, a provider outage or a broken judge,
is logged and stored as the score's ``error``: the answer, its stream and its stored turn are never
touched, and a slow judge holds nothing but its own thread.

Scores go beside what they judge: a chat turn's into the thread store (``ThreadStore.put_scores``), a
run's into ``runs/<case_id>/scores.json`` (``evaluation.online.write_scores``, with the sha256 of the
``output.json`` judged), which the review page shows. Pending items are dropped when the service stops.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from opentelemetry.trace import Status, StatusCode

from skillrag.service.threads import ThreadStore
from skillrag.tracing import set_attributes, span
from skillrag.workspace import RunFolder

__all__ = ["JudgeScorer", "SavedRun", "Scorer", "ServedAnswer"]

log = logging.getLogger("skillrag.service.scoring")


@dataclass(frozen=True)
class ServedAnswer:
    """A chat answer the client has received: turn ``turn`` of ``thread_key``, the question, the answer text,
    its verified ``citations`` (``{"source", "snippet", ...}``) and the turn's ``trace_id``."""

    thread_key: str
    turn: int
    question: str
    answer: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    trace_id: str | None = None


@dataclass(frozen=True)
class SavedRun:
    """A run whose accepted output sits in ``folder/output.json``; ``case`` is the agent-facing case."""

    folder: Path
    case: dict[str, Any]
    trace_id: str | None = None


class Scorer(Protocol):
    """What the app calls after a response went out. Neither method may raise or block."""

    def submit_answer(self, item: ServedAnswer) -> None: ...

    def submit_run(self, item: SavedRun) -> None: ...

    def close(self) -> None: ...


class JudgeScorer:
    """Scores with a judge model (an id or a pydantic-ai ``Model``) on one worker thread.

    ``judges`` (reference-free), ``calls`` per decision and ``temperature`` as in ``service.judges``,
    ``judge_calls``, ``judge_temperature``; ``model_name`` names the judge in the stored scores.
    ``on_done(item, scores)`` is called after each item's scores are stored (tests wait on it).
    """

    def __init__(self, model: Any, *, threads: ThreadStore, judges: Sequence[str] = ("correctness",),
                 calls: int = 1, temperature: float | None = 0.0, model_name: str | None = None,
                 on_done: Callable[[Any, dict[str, Any]], None] | None = None) -> None:
        from skillrag.evaluation.online import check_live_judges

        self.model = model
        self.threads = threads
        self.judges = check_live_judges(list(judges))
        self.calls = calls
        self.temperature = temperature
        self.model_name = model_name or (model if isinstance(model, str) else getattr(model, "model_name", None))
        self.on_done = on_done
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillrag-judge")

    # --- called by the app (never raise) ------------------------------------------------------
    def submit_answer(self, item: ServedAnswer) -> None:
        self._submit(self._score_answer, item)

    def submit_run(self, item: SavedRun) -> None:
        self._submit(self._score_run, item)

    def close(self) -> None:
        """Stop taking items; pending ones are dropped, the one being judged finishes on its thread."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _submit(self, fn: Callable[[Any], None], item: Any) -> None:
        try:
            self._pool.submit(self._guarded, fn, item)
        except Exception:  # a closed pool or anything else: the answer is already out
            log.exception("could not queue %s for the judge", type(item).__name__)

    def _guarded(self, fn: Callable[[Any], None], item: Any) -> None:
        try:
            fn(item)
        except Exception:  # the judge's failure is its own, never the answer's
            log.exception("scoring %s failed", type(item).__name__)

    # --- on the judge's thread ------------------------------------------------------------------
    def _judge(self, attrs: dict[str, Any], judge: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
        """``(judge results as JSON, error)``: whatever the judge raises becomes the error line."""
        with span("skillrag.judge", attrs | {"skillrag.judge.model": self.model_name,
                                            "skillrag.judge.judges": self.judges}) as current:
            try:
                judged = judge()
            except Exception as exc:  # noqa: BLE001 - stored, never raised into the service
                log.warning("judge failed: %s: %s", type(exc).__name__, exc)
                set_attributes(current, {"skillrag.error.kind": type(exc).__name__})
                if current.is_recording():
                    current.record_exception(exc)
                    current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                return {}, f"{type(exc).__name__}: {str(exc)[:300]}"
            set_attributes(current, {f"skillrag.judge.{k}": v.decision for k, v in judged.items()})
            return judged, None

    def _score_answer(self, item: ServedAnswer) -> None:
        from skillrag.evaluation.online import judge_answer

        judged, error = self._judge(
            {"skillrag.judge.trace_id": item.trace_id, "skillrag.thread_key": item.thread_key,
             "skillrag.chat.turn": item.turn},
            lambda: judge_answer(item.question, item.answer, item.citations, model=self.model, judges=self.judges,
                                 calls=self.calls, temperature=self.temperature))
        data = {"source": "service", "scored_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "judge_model": self.model_name, "trace_id": item.trace_id,
                "judges": {k: v.model_dump(mode="json") for k, v in judged.items()}, "error": error}
        self.threads.put_scores(item.thread_key, item.turn, data)
        if self.on_done is not None:
            self.on_done(item, data)

    def _score_run(self, item: SavedRun) -> None:
        import hashlib

        from skillrag.evaluation.online import judge_output, read_scores, write_scores

        raw = RunFolder.at(item.folder).output.read_bytes()  # judge exactly these bytes, and name their hash
        output = json.loads(raw)
        judged, error = self._judge(
            {"skillrag.judge.trace_id": item.trace_id, "skillrag.case_id": item.case.get("case_id")},
            lambda: judge_output(item.case, output, model=self.model, judges=self.judges, calls=self.calls,
                                 temperature=self.temperature))
        write_scores(item.folder, judged, source="service", judge_model=self.model_name,
                     output_sha256=hashlib.sha256(raw).hexdigest(), trace_id=item.trace_id, error=error)
        if self.on_done is not None:
            self.on_done(item, read_scores(item.folder) or {})
