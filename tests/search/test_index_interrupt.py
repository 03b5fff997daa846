"""`skillrag index` under a real Ctrl-C (SIGINT to a real process): it says what it kept, and the
next run embeds only the rest. ``tests/slow_cli.py`` holds the embedding batches after the first few
until the test releases them, so no step races a loaded machine's clock."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

SLOW_CLI = Path(__file__).resolve().parents[1] / "slow_cli.py"


def test_ctrl_c_in_index_prints_what_it_kept_and_the_next_run_resumes(ws, tmp_path):
    log = tmp_path / "log"
    gate = tmp_path / "never"  # batches after the second wait for it: the index is interrupted at 2
    env = {**os.environ, "SLOW_LOG": str(log), "SLOW_EMBED_HOLD": "2", "SLOW_GATE": str(gate)}
    proc = subprocess.Popen(
        [sys.executable, str(SLOW_CLI), "index", "-w", str(ws.root), "--backend", "direct"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    end = time.monotonic() + 120
    while not (log.exists() and len(log.read_text().splitlines()) >= 2):
        assert time.monotonic() < end and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)  # a safety valve, not a wait
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    m = re.fullmatch(
        r"interrupted: index direct not written; kept (\d+) of (\d+) passage vectors in the vector store "
        r"\(store\.sqlite; backends finished: none\); run `skillrag index` again to resume",
        lines[0],
    )
    assert m, lines[0]
    kept, total = int(m.group(1)), int(m.group(2))
    assert kept == 2 and total == 5
    again = subprocess.run(
        [sys.executable, "-m", "skillrag.cli.main", "index", "-w", str(ws.root), "--backend", "direct", "--json"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0, again.stderr
    (rep,) = json.loads(again.stdout)["reports"]
    assert rep["reused"] >= kept and rep["reused"] + rep["embedded"] == total


def test_a_search_during_an_index_build_says_the_build_is_running(ws, tmp_path):
    """Found by a new user: while `index` ran, `search` advised "run `skillrag index`", which would only
    meet the busy lock. It now names the running build; once that is gone, the usual advice is back."""
    log = tmp_path / "log"
    gate = tmp_path / "never"  # the build holds after its first batch until it is interrupted
    env = {**os.environ, "SLOW_LOG": str(log), "SLOW_EMBED_HOLD": "1", "SLOW_GATE": str(gate)}
    proc = subprocess.Popen(
        [sys.executable, str(SLOW_CLI), "index", "-w", str(ws.root), "--backend", "direct"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    try:
        end = time.monotonic() + 120
        while not (log.exists() and log.read_text().splitlines()):
            assert time.monotonic() < end and proc.poll() is None
            time.sleep(0.05)
        during = subprocess.run(
            [sys.executable, "-m", "skillrag.cli.main", "search", "lost card", "-w", str(ws.root),
             "--backend", "direct"], check=False, capture_output=True, text=True, timeout=120,
        )
        assert during.returncode == 2 and len(during.stderr.strip().splitlines()) == 1, during.stderr
        assert f"but `skillrag index` (pid {proc.pid}, since" in during.stderr
        assert "is writing to this workspace now: wait for it to finish" in during.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)  # a safety valve, not a wait
    after = subprocess.run(
        [sys.executable, "-m", "skillrag.cli.main", "search", "lost card", "-w", str(ws.root), "--backend", "direct"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert after.returncode == 2 and "run `skillrag index" in after.stderr and "writing" not in after.stderr
