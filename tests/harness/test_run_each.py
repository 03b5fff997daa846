"""``run_each``: the one batch loop under ``run_batch`` and the evaluation arms."""

from __future__ import annotations

import threading
import time

import pytest

from skillrag.harness import run_each


@pytest.mark.parametrize("workers", [1, 3])
def test_every_id_once_in_the_result_and_on_result_in_the_caller_thread(workers):
    seen: list[tuple[str, str, int]] = []
    caller = threading.get_ident()
    out = run_each([f"c{i}" for i in range(7)], lambda cid: int(cid[1:]) * 10, workers=workers,
                   on_result=lambda cid, v: seen.append((cid, "main" if threading.get_ident() == caller else "other", v)))
    assert out == {f"c{i}": i * 10 for i in range(7)}
    assert sorted(seen) == sorted((f"c{i}", "main", i * 10) for i in range(7))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stop_lets_running_calls_finish_and_starts_nothing_more(workers):
    stop, started = threading.Event(), []

    def fn(cid: str) -> str:
        started.append(cid)
        if cid == "b":
            stop.set()
        time.sleep(0.05)
        return cid

    out = run_each(list("abcdef"), fn, workers=workers, stop=stop)
    assert "b" in out and set(out) == set(started)
    assert len(started) <= 1 + workers  # nothing beyond what was running when b set the stop


def test_an_exception_propagates_and_no_further_id_starts():
    started: list[str] = []

    def fn(cid: str) -> str:
        started.append(cid)
        if cid == "b":
            raise RuntimeError("boom")
        time.sleep(0.02)
        return cid

    with pytest.raises(RuntimeError, match="boom"):
        run_each(list("abcdefgh"), fn, workers=2)
    assert len(started) < 8
