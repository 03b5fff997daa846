"""A real Milvus server for tests and benchmarks: Milvus Lite's server binary on 127.0.0.1.

``lite_server(db_path)`` starts the ``milvus`` binary shipped in the ``milvus-lite`` package (the
server ``milvus-lite`` runs in process for a ``.db`` path) as a separate process serving gRPC on
``127.0.0.1:PORT`` and yields ``http://127.0.0.1:PORT``: the same client–server path as a Milvus
standalone server, with no network beyond the loopback. Milvus Lite's own server binds every
interface with no authentication unless told an address, so the address is always given here and
checked after start. Needs the ``milvus`` extra.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from skillrag.errors import EngineError, MissingExtraError

__all__ = ["free_port", "listening_addresses", "lite_server"]

STARTUP_S = 60.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening_addresses(port: int) -> set[str]:
    """Local addresses (as hex, from ``/proc/net/tcp*``) with a socket listening on ``port`` (Linux)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                addr, hex_port = fields[1].rsplit(":", 1)
                if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    found.add(addr)
    return found


_LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


@contextlib.contextmanager
def lite_server(db_path: Path, port: int | None = None) -> Iterator[str]:
    """Run Milvus Lite's server on ``127.0.0.1:port`` (a free one by default) over ``db_path``.

    Yields the URI; stops the server on exit. Raises ``MissingExtraError`` without the extra,
    ``EngineError`` when it does not start within ``STARTUP_S`` seconds or listens beyond loopback.
    """
    try:
        from milvus_lite.server import Server
        from pymilvus import MilvusClient
    except ImportError:
        raise MissingExtraError("milvus-lite", "milvus") from None
    port = port or free_port()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    server = Server(str(db_path), address=f"127.0.0.1:{port}")
    if not server.init() or not server.start():
        raise EngineError(f"Milvus Lite server did not start over {db_path}")
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                client = MilvusClient(uri=uri, timeout=2.0)
                client.list_collections()
                client.close()
                break
            except Exception as exc:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline:
                    raise EngineError(f"Milvus Lite server on {uri} did not answer in {STARTUP_S:.0f} s ({exc})") from None
                time.sleep(0.2)
        outside = listening_addresses(port) - _LOOPBACK
        if outside:
            raise EngineError(f"Milvus Lite server listens beyond loopback on port {port}: {sorted(outside)}")
        yield uri
    finally:
        proc = getattr(server, "_p", None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
        server.stop()
