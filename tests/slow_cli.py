"""The real ``skillrag`` CLI with work that waits for the test, for tests that send real signals to a
real process (``python tests/slow_cli.py ARGS...``).

Only timing changes, and it is decided by the test, never by a race against the clock:

- ``SLOW_GATE=PATH``: a held unit of work waits until the file ``PATH`` exists (the test creates it to
  release the work; it never has to guess how long a loaded machine needs).
- Extractive cases (``SLOW_CASES=1``): each case appends ``start ID`` to ``$SLOW_LOG``, is held at the
  gate, runs, then appends ``end ID``.
- Embedding (``SLOW_EMBED_HOLD=N``): batches of ``SLOW_EMBED_BATCH`` passages (default 1); each appends
  ``embed N`` to ``$SLOW_LOG`` once done, and every batch after the first ``N`` is held at the gate.

Everything else (the CLI, the harness, the index, the signal handling) is the package's own. A held
unit polls for the gate in short sleeps, so a SIGINT reaches the process at once.
"""

from __future__ import annotations

import os
import signal
import sys
import time

# A process started from a non-interactive shell's background job inherits SIGINT as ignored, and Python
# keeps it so: the test's Ctrl-C then did nothing and the test hung (seen under `nohup make test &`). The
# test sends SIGINT as a terminal would, so the process handles it as one started from a terminal does.
signal.signal(signal.SIGINT, signal.default_int_handler)


def _log(line: str) -> None:
    with open(os.environ["SLOW_LOG"], "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _hold() -> None:
    gate = os.environ.get("SLOW_GATE")
    while gate and not os.path.exists(gate):
        time.sleep(0.02)


if os.environ.get("SLOW_CASES"):
    from skillrag.harness.extractive import ExtractiveHarness

    _run = ExtractiveHarness.run

    def _slow_run(self, session, case, skill, out_path=None):
        _log(f"start {case.case_id}")
        _hold()
        out = _run(self, session, case, skill, out_path)
        _log(f"end {case.case_id}")
        return out

    ExtractiveHarness.run = _slow_run

if os.environ.get("SLOW_EMBED_HOLD"):
    import skillrag.search.index as _index
    from skillrag.search.testing import HashEmbedder

    _embed_missing = _index._embed_missing

    def _small_batches(store, embedder, todo, batch, *args, **kwargs):
        return _embed_missing(store, embedder, todo, int(os.environ.get("SLOW_EMBED_BATCH", "1")), *args, **kwargs)

    _index._embed_missing = _small_batches
    _embed = HashEmbedder.embed
    _done = [0]

    def _slow_embed(self, texts):
        if _done[0] >= int(os.environ["SLOW_EMBED_HOLD"]):
            _hold()
        out = _embed(self, texts)
        _done[0] += 1
        _log(f"embed {len(texts)}")
        return out

    HashEmbedder.embed = _slow_embed

if __name__ == "__main__":
    from skillrag.cli.main import main

    sys.exit(main(sys.argv[1:]))
