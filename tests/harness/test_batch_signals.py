"""run-batch under real signals and a second writer: real subprocesses of the CLI
(``tests/slow_cli.py`` holds each case until the test releases it), real SIGINTs, the real workspace
lock. Every step waits for an event (a log line, a notice, a released gate), never for a duration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillrag.search import build_index
from skillrag.skill import CaseFile, CaseRecord, write_cases
from skillrag.workspace import Workspace
from skillrag.workspace.config import dump_config

SLOW_CLI = Path(__file__).resolve().parents[1] / "slow_cli.py"
N_CASES = 8


@pytest.fixture
def batch_ws(ws: Workspace, cases_path: Path) -> Workspace:
    # signals and the write lock are the subject here, not retrieval: the direct backend, said explicitly,
    # needs no navigation layer and is the quickest index to build
    cfg = ws.config.model_copy(deep=True)
    cfg.search.embedder, cfg.search.backend = "hash", "direct"
    ws.config_path.write_text(dump_config(cfg), encoding="utf-8")
    ws = Workspace.open(ws.root)
    assert (ws.config.search.embedder, ws.config.search.backend) == ("hash", "direct")
    build_index(ws)
    base = CaseFile(cases_path)
    recs = []
    for i in range(N_CASES):
        c = base.load(base.ids()[i % 2])
        recs.append(CaseRecord(case_id=f"c{i}", contact_reason=c.contact_reason, case_notes=c.case_notes))
    write_cases(ws.root / "cases.jsonl", recs)
    return ws


def _start(ws: Workspace, log: Path, *args: str, gate: Path | None = None) -> tuple[subprocess.Popen, Path]:
    """run-batch whose cases wait at ``gate`` (created by the test to release them; None: not held)."""
    err = log.with_suffix(f".{time.monotonic_ns()}.err")
    env = {**os.environ, "SLOW_LOG": str(log), "SLOW_CASES": "1"}
    if gate is not None:
        env["SLOW_GATE"] = str(gate)
    proc = subprocess.Popen(
        [sys.executable, str(SLOW_CLI), "run-batch", "-w", str(ws.root), *args],
        stdout=subprocess.PIPE,
        stderr=err.open("w"),
        env=env,
        text=True,
    )
    return proc, err


def _lines(path: Path, prefix: str) -> list[str]:
    if not path.exists():
        return []
    return [ln.split()[1] for ln in path.read_text().splitlines() if ln.startswith(prefix + " ")]


def _wait_for(cond, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def test_first_ctrl_c_stops_scheduling_and_lets_running_cases_finish(batch_ws, tmp_path):
    log, gate = tmp_path / "log", tmp_path / "release"
    proc, err = _start(batch_ws, log, "-j", "2", gate=gate)
    _wait_for(lambda: len(_lines(log, "start")) == 2)
    proc.send_signal(signal.SIGINT)
    _wait_for(lambda: "interrupt: no new cases" in err.read_text())
    gate.touch()  # the two running cases may finish now
    out, _ = proc.communicate(timeout=120)
    stderr = err.read_text()
    assert proc.returncode == 130, stderr
    started, ended = _lines(log, "start"), _lines(log, "end")
    assert sorted(started) == sorted(ended) and len(started) == 2  # the running two finished, no new one
    notices = [ln for ln in stderr.splitlines() if ln.startswith("interrupt: ")]
    assert notices == [
        (
            "interrupt: no new cases will start; waiting for 2 running case(s) to finish "
            "(Ctrl-C again to abandon them)"
        )
    ]
    assert f"interrupted: {N_CASES - 2} case(s) not started" in stderr
    assert "Traceback" not in stderr
    for cid in started:
        assert json.loads((batch_ws.runs_dir / cid / "record.json").read_text())["status"] == "accepted"
    assert sorted(p.name for p in batch_ws.runs_dir.iterdir()) == sorted(started)
    assert "not_started" in out
    # the next run resumes: it runs only the cases that never started
    again = subprocess.run(
        [sys.executable, str(SLOW_CLI), "run-batch", "-w", str(batch_ws.root), "--json"],
        check=False, capture_output=True, text=True, timeout=120, env={**os.environ, "SLOW_LOG": str(log)},
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["counts"] == {"accepted": N_CASES - 2, "skipped": 2}


def test_second_ctrl_c_abandons_running_cases_and_exits_at_once(batch_ws, tmp_path):
    log = tmp_path / "log"
    proc, err = _start(batch_ws, log, "-j", "2", gate=tmp_path / "never")  # the running cases never finish
    _wait_for(lambda: len(_lines(log, "start")) == 2)
    proc.send_signal(signal.SIGINT)
    _wait_for(lambda: "interrupt: no new cases" in err.read_text())
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)  # returns only because the held cases were abandoned
    stderr = err.read_text()
    assert proc.returncode == 130, stderr  # not -SIGABRT, not a traceback
    started = sorted(_lines(log, "start"))
    assert f"interrupted again: abandoned 2 running case(s) ({', '.join(started)})" in stderr
    assert _lines(log, "end") == [] and "Traceback" not in stderr
    # abandoned cases left no output: they simply run next time
    assert not any((batch_ws.runs_dir / cid / "output.json").exists() for cid in started)


def test_two_batches_on_one_workspace_never_run_a_case_twice(batch_ws, tmp_path):
    log, gate = tmp_path / "log", tmp_path / "release"
    first, err1 = _start(batch_ws, log, "-j", "2", gate=gate)
    _wait_for(lambda: len(_lines(log, "start")) >= 1)
    second = subprocess.run(
        [sys.executable, str(SLOW_CLI), "run-batch", "-w", str(batch_ws.root), "-j", "2"],
        check=False, capture_output=True, text=True, timeout=120,
        env={**os.environ, "SLOW_LOG": str(log), "SLOW_CASES": "1", "SLOW_GATE": str(gate)},
    )
    assert first.poll() is None  # the first batch is held at the gate all along
    gate.touch()
    assert second.returncode == 2, second.stderr
    (line,) = second.stderr.strip().splitlines()
    assert line.startswith("error: ") and "busy: `skillrag run-batch` (pid " in line
    assert f"pid {first.pid}," in line
    first.communicate(timeout=120)
    assert first.returncode == 0, err1.read_text()
    started = _lines(log, "start")
    assert sorted(started) == sorted(f"c{i}" for i in range(N_CASES))  # each case exactly once


@pytest.mark.parametrize(
    "command",
    [["index", "--backend", "direct"], ["wiki", "build"], ["ingest", "{src}"]],
    ids=["index", "wiki-build", "ingest"],
)
def test_other_writers_fail_with_one_line_while_a_batch_runs(batch_ws, tmp_path, command):
    log, gate = tmp_path / "log", tmp_path / "release"
    batch, err = _start(batch_ws, log, "-j", "1", gate=gate)
    _wait_for(lambda: len(_lines(log, "start")) >= 1)
    args = [a.replace("{src}", str(tmp_path / "src")) for a in command]
    other = subprocess.run(
        [sys.executable, "-m", "skillrag.cli.main", *args, "-w", str(batch_ws.root)],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert batch.poll() is None  # the batch held the lock all along
    batch.send_signal(signal.SIGINT)
    _wait_for(lambda: "interrupt: no new cases" in err.read_text())
    gate.touch()
    batch.communicate(timeout=120)
    assert other.returncode == 2, other.stderr
    (line,) = other.stderr.strip().splitlines()
    assert line.startswith("error: ") and "busy: `skillrag run-batch`" in line
