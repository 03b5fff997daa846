"""Read the runs any harness left on disk: ``RUNS_DIR/<case_id>/output.json`` and what it cost.

Layout read (the one ``save_output`` and ``skillrag run`` / ``run-batch`` write)::

    RUNS_DIR/<case_id>/output.json     the saved output (any harness: built-in, exported scripts, MCP, HTTP)
    RUNS_DIR/<case_id>/record.json     the run record (built-in harnesses only): status, queries, fetches, ms
    RUNS_DIR/tool_calls.jsonl          the tool log the `skillrag tool` commands and the MCP server append to

What a case cost comes from, in this order (``CollectedRun.cost_source``):

1. ``record.json`` (``skillrag.harness.RunRecord``), written by the built-in harnesses;
2. the tool log: one JSON line per call (``{"skill", "tool", "args", "ms", "ok", "error", "at"}``), split
   into cases by ``attribute_calls`` (below);
3. the output's own ``audit.tool_calls`` (a harness that kept one ``SkillTools`` per case), split the
   same way;
4. nothing: the cost metrics are undefined for the case (None), never guessed.

A call log holds no case id on ``retrieve`` / ``get_article``: only ``load_case`` and ``save_output`` name
the case. ``attribute_calls`` gives a case the calls from its first marker (a load or save naming it)
to the first marker of the next case, *only* when no other case's markers fall inside its span. Two
harnesses writing one log at the same time (or a case re-run after others) interleave their calls; the
cases involved are listed as ambiguous and get no cost from that log, rather than another case's calls.
Queries and fetches count the calls that succeeded (as ``RunRecord.queries`` / ``fetches`` do); the wall
time runs from the start of the case's first call to the end of its last (agent thinking included);
search time is the time in ``retrieve`` calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from skillrag.workspace.files import read_text_file
from skillrag.workspace.runs import RunFolder

__all__ = ["CallLog", "CollectedRun", "attribute_calls", "collect_runs", "read_tool_log", "record_from_calls"]

_MARKERS = ("load_case", "save_output")


@dataclass
class CallLog:
    """A tool log read from disk: ``calls`` in file order, ``bad_lines`` that did not parse (a crash
    can cut the last line; they are skipped and counted)."""

    path: Path
    calls: list[dict[str, Any]]
    bad_lines: int = 0


def read_tool_log(path: str | Path, *, skill: str | None = None) -> CallLog:
    """Read a tool log (JSONL, one call per line). Lines of another skill are dropped when ``skill``
    is given and the line names one. Raises ``MalformedSourceError`` when the file cannot be read."""
    p = Path(path)
    text = read_text_file(p, "tool log")
    calls: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            call = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            bad += 1
            continue
        if skill is not None and isinstance(call.get("skill"), str) and call["skill"] != skill:
            continue
        calls.append(call)
    return CallLog(p, calls, bad)


def _marker(call: Mapping[str, Any]) -> str | None:
    if call.get("tool") not in _MARKERS:
        return None
    args = call.get("args")
    cid = args.get("case_id") if isinstance(args, Mapping) else None
    return cid if isinstance(cid, str) and cid else None


def attribute_calls(calls: Sequence[Mapping[str, Any]]) -> tuple[dict[str, list[Mapping[str, Any]]], set[str]]:
    """Split a call log into cases: ``({case_id: calls}, ambiguous case ids)``.

    Calls that name their case (the ``case_id`` field every call of a per-case tool session carries)
    go to that case exactly, however harnesses interleave. A log with no such field (older logs, or calls
    made outside a case session) is split by spans: a case's span runs from its first marker
    (``load_case`` / ``save_output`` naming it) to its last. A case whose span overlaps another case's
    span is ambiguous (interleaved harnesses, or a case re-run after others) and gets no calls. A clean
    case gets every call from its first marker up to the first marker of the next case in the log (or the
    end), so the calls of a run that never saved count too.
    """
    named = [c for c in calls if isinstance(c.get("case_id"), str) and c["case_id"]]
    if named:
        by_case: dict[str, list[Mapping[str, Any]]] = {}
        for call in named:
            by_case.setdefault(call["case_id"], []).append(call)
        return by_case, set()
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, call in enumerate(calls):
        cid = _marker(call)
        if cid is None:
            continue
        first.setdefault(cid, i)
        last[cid] = i
    order = sorted(first, key=first.__getitem__)
    ambiguous: set[str] = set()
    # spans sorted by start: one overlaps another when an earlier span ends at or after its start, or
    # the next span starts at or before its end
    reach = -1
    for n, cid in enumerate(order):
        if first[cid] <= reach or (n + 1 < len(order) and first[order[n + 1]] <= last[cid]):
            ambiguous.add(cid)
        reach = max(reach, last[cid])
    segments: dict[str, list[Mapping[str, Any]]] = {}
    for n, cid in enumerate(order):
        if cid in ambiguous:
            continue
        end = first[order[n + 1]] if n + 1 < len(order) else len(calls)
        segments[cid] = list(calls[first[cid]:end])
    return segments, ambiguous


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _at(call: Mapping[str, Any]) -> datetime | None:
    raw = call.get("at")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


def record_from_calls(case_id: str, calls: Sequence[Mapping[str, Any]], source: str) -> dict[str, Any]:
    """A run-record dict (the fields ``metrics.RunCost.from_record`` reads) from one case's tool calls.

    ``queries`` / ``fetches``: the retrieve queries and fetched article ids of the calls that
    succeeded; ``saves`` / ``retries``: save attempts and rejected saves; ``wall_ms``: from the start of
    the first call to the end of the last (None without timestamps); ``search_ms``: time in retrieve
    calls; ``steps``: the calls themselves. ``source`` says where they came from.
    """
    steps = [{"tool": c.get("tool"), "ms": _num(c.get("ms")) or 0.0, "ok": c.get("ok") is not False,
              "args": c.get("args") if isinstance(c.get("args"), Mapping) else {}, "error": c.get("error"),
              "at": c.get("at")} for c in calls]
    queries = [str(s["args"].get("query", "")) for s in steps if s["tool"] == "retrieve" and s["ok"]]
    fetches = [str(s["args"].get("article_id", "")) for s in steps if s["tool"] == "get_article" and s["ok"]]
    saves = [s for s in steps if s["tool"] == "save_output"]
    stamps = [(t, s["ms"]) for s in steps if (t := _at(s)) is not None]
    wall_ms = None
    if stamps:
        start = min(t for t, _ in stamps)
        end = max(t.timestamp() * 1000 + ms for t, ms in stamps)
        wall_ms = max(0.0, end - start.timestamp() * 1000)
    record: dict[str, Any] = {
        "case_id": case_id, "source": source, "queries": queries, "fetches": fetches,
        "saves": len(saves), "retries": sum(1 for s in saves if not s["ok"]),
        "search_ms": sum(s["ms"] for s in steps if s["tool"] == "retrieve"), "steps": steps,
    }
    if wall_ms is not None:
        record["wall_ms"] = wall_ms
    return record


@dataclass
class CollectedRun:
    """What RUNS_DIR holds for one case.

    ``output`` is ``output.json`` parsed (not yet validated; None when absent or unreadable, with
    ``output_error`` saying why when it was there); ``record`` is the cost record (see the module doc)
    and ``cost_source`` where it came from; ``record_status`` / ``record_error`` are the status and error
    a built-in harness wrote in ``record.json`` (None otherwise).
    """

    case_id: str
    folder: Path
    output: dict[str, Any] | None = None
    output_error: str | None = None
    record: dict[str, Any] | None = None
    cost_source: str | None = None
    record_status: str | None = None
    record_error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def present(self) -> bool:
        """The harness left something for this case (an output, or a run record of a failed run)."""
        return RunFolder.at(self.folder).present


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path.name}: cannot read ({exc})"
    except json.JSONDecodeError as exc:
        return None, f"{path.name}: not JSON ({exc.msg} at line {exc.lineno})"


def _audit_calls(output: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    audit = output.get("audit") if isinstance(output, Mapping) else None
    calls = audit.get("tool_calls") if isinstance(audit, Mapping) else None
    return [c for c in calls if isinstance(c, Mapping) and isinstance(c.get("tool"), str)] if isinstance(
        calls, list) else []


def collect_runs(
    runs_dir: str | Path,
    case_ids: Iterable[str],
    *,
    tool_logs: Sequence[CallLog] = (),
) -> dict[str, CollectedRun]:
    """``{case_id: CollectedRun}`` for every id in ``case_ids`` (present or not) from ``runs_dir``.

    ``tool_logs`` are read with ``read_tool_log`` (by default the caller passes
    ``RUNS_DIR/tool_calls.jsonl`` when it exists). Never raises for a bad file inside ``runs_dir``: an
    unreadable output is recorded in ``output_error``.
    """
    root = Path(runs_dir)
    segments: dict[str, list[Mapping[str, Any]]] = {}
    seg_source: dict[str, str] = {}
    ambiguous: dict[str, str] = {}
    for log in tool_logs:
        segs, amb = attribute_calls(log.calls)
        for cid in amb:
            ambiguous[cid] = f"{log.path.name}: its calls interleave with another case's (no cost taken from it)"
        for cid, seg in segs.items():
            if cid in segments:
                ambiguous[cid] = f"the case appears in more than one tool log ({seg_source[cid]}, {log.path.name})"
                continue
            segments[cid], seg_source[cid] = seg, log.path.name
    out: dict[str, CollectedRun] = {}
    for cid in case_ids:
        run = CollectedRun(cid, root / cid)
        files = RunFolder.at(run.folder)
        out_path, rec_path = files.output, files.record
        if out_path.is_file():
            data, err = _read_json(out_path)
            if err is None and not isinstance(data, dict):
                err = f"output.json: expected a JSON object, got {type(data).__name__}"
            run.output, run.output_error = (data if err is None else None), err
        if rec_path.is_file():
            rec, err = _read_json(rec_path)
            if err is None and isinstance(rec, dict):
                run.record, run.cost_source = rec, rec_path.name
                st = rec.get("status")
                run.record_status = st if isinstance(st, str) else None
                run.record_error = rec.get("error") if isinstance(rec.get("error"), str) else None
            else:
                run.notes.append(err or "record.json: not a JSON object (ignored)")
        if run.record is None:
            if cid in segments and cid not in ambiguous:
                run.record = record_from_calls(cid, segments[cid], f"tool log {seg_source[cid]}")
                run.cost_source = "tool_log"
            else:
                if cid in ambiguous:
                    run.notes.append(ambiguous[cid])
                audit_segs, audit_amb = attribute_calls(_audit_calls(run.output))
                if cid in audit_segs:
                    run.record = record_from_calls(cid, audit_segs[cid], "output.json audit.tool_calls")
                    run.cost_source = "audit"
                elif cid in audit_amb:
                    run.notes.append("audit.tool_calls: holds several cases' calls interleaved (ignored)")
        out[cid] = run
    return out
