"""The real ``skillrag`` CLI with slowed-down work, for tests that send real signals to a real
process (``python tests/slow_cli.py ARGS...``).

Only timing changes: with ``SLOW_CASE_S`` each extractive case sleeps that long before it runs
(and appends ``start ID`` / ``end ID`` lines to ``$SLOW_LOG``); with ``SLOW_EMBED_S`` each
embedding batch (of ``SLOW_EMBED_BATCH`` passages) sleeps that long and appends ``embed N``.
Everything else — the CLI, the harness, the index, the signal handling — is the package's own.
"""

from __future__ import annotations

import os
import sys
import time


def _log(line: str) -> None:
    with open(os.environ["SLOW_LOG"], "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


if os.environ.get("SLOW_CASE_S"):
    from skillrag.harness.extractive import ExtractiveHarness

    _run = ExtractiveHarness.run

    def _slow_run(self, session, case, skill, out_path=None):
        _log(f"start {case.case_id}")
        time.sleep(float(os.environ["SLOW_CASE_S"]))
        out = _run(self, session, case, skill, out_path)
        _log(f"end {case.case_id}")
        return out

    ExtractiveHarness.run = _slow_run

if os.environ.get("SLOW_EMBED_S"):
    import skillrag.search.index as _index
    from skillrag.search.testing import HashEmbedder

    _embed_missing = _index._embed_missing

    def _small_batches(store, embedder, todo, batch, *args, **kwargs):
        return _embed_missing(store, embedder, todo, int(os.environ.get("SLOW_EMBED_BATCH", "1")), *args, **kwargs)

    _index._embed_missing = _small_batches
    _embed = HashEmbedder.embed

    def _slow_embed(self, texts):
        time.sleep(float(os.environ["SLOW_EMBED_S"]))
        out = _embed(self, texts)
        _log(f"embed {len(texts)}")
        return out

    HashEmbedder.embed = _slow_embed

if __name__ == "__main__":
    from skillrag.cli.main import main

    sys.exit(main(sys.argv[1:]))
