"""Test doubles and real local servers for the service, so its tests never touch the network.

- ``StaticCatalog``: skills as ``SkillView`` values.
- ``MemoryKnowledge``: articles in memory (``corpus.Article``, made by ``memory_article``), searched by key-term overlap (deterministic), scoped by the
  same ``corpus.SourceScope.allows`` the workspace store uses.
- ``StaticSearchProvider``: a ``WebSearchProvider`` answering from a fixed ``site -> [url]`` map.
- ``VirtualHostServer``: a real ``http.server`` on 127.0.0.1 serving different pages per ``Host`` header
  (pages, redirects, raw ``Location`` headers, slow-drip bodies), like several web sites behind one port.
- ``LoopbackTransport``: an httpx transport that sends requests for chosen host names to 127.0.0.1
  (like ``curl --resolve``): the URL, the ``Host`` header and therefore every allowlist check still see
  the real host name; only the TCP connection goes to the local port. Unmapped hosts fail to connect.
- ``serve_app``: run an ASGI app under a real uvicorn server on a free port in a thread.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import httpx

from skillrag.corpus import Article, SourceScope, content_hash
from skillrag.errors import ArticleNotFound
from skillrag.search import Hit
from skillrag.service.knowledge import stems
from skillrag.service.skills import ViewCatalog
from skillrag.service.web import WebResult

__all__ = [
    "LoopbackTransport",
    "MemoryKnowledge",
    "Page",
    "StaticCatalog",
    "StaticSearchProvider",
    "VirtualHostServer",
    "free_port",
    "memory_article",
    "serve_app",
]


#: A ``SkillCatalog`` over the given views.
StaticCatalog = ViewCatalog


def memory_article(id: str, title: str, body: str, source_tag: str = "", *, url: str | None = None,
                   skill: str | None = None) -> Article:
    """A ``corpus.Article`` for ``MemoryKnowledge``, as the store would hold it: ``content_hash`` the body's
    sha256, ``source_path`` ``<id>.md``; ``skill`` set = that skill's reference note, ``url`` its canonical page."""
    return Article(id=id, title=title, body=body, content_hash=content_hash(body), source_path=f"{id}.md",
                   source_tag=source_tag, url=url, skill=skill)


class MemoryKnowledge:
    """``Knowledge`` over in-memory articles: score = shared key stems (title + body), ties by id.

    ``calls`` records every search as ``(query, allowed_sources)``; ``search`` is the one ranking
    every scoped view uses (a test may wrap it).
    """

    def __init__(self, articles: list[Article]) -> None:
        self.articles = {a.id: a for a in articles}
        self._stems = {a.id: stems(a.title + "\n" + a.body) for a in articles}
        self.calls: list[tuple[str, list[str] | None]] = []
        self._lock = threading.Lock()

    def scoped(self, scope: SourceScope) -> _MemoryScoped:
        return _MemoryScoped(self, scope)

    def search(self, query: str, *, k: int, scope: SourceScope) -> list[Hit]:
        """The ``k`` in-scope articles sharing the most key stems with ``query``."""
        with self._lock:
            self.calls.append((query, list(scope.allowed_sources) if scope.allowed_sources is not None else None))
        want = stems(query)
        scored = []
        for a in self.articles.values():
            if not scope.allows(a):
                continue
            s = len(want & self._stems[a.id])
            if s:
                scored.append((-s, a.id))
        scored.sort()
        return [Hit(aid, float(-s), self.articles[aid].title, preview="") for s, aid in scored[:k]]

    def article(self, article_id: str) -> Article:
        try:
            return self.articles[article_id]
        except KeyError:
            raise ArticleNotFound(f"no article with id {article_id!r}") from None


class _MemoryScoped:
    def __init__(self, parent: MemoryKnowledge, scope: SourceScope) -> None:
        self._parent = parent
        self.scope = scope

    def search(self, query: str, *, k: int, backend: str | None = None, mode: str | None = None) -> list[Hit]:
        return self._parent.search(query, k=k, scope=self.scope)

    def article(self, article_id: str) -> Article:
        art = self._parent.article(article_id)
        if not self.scope.allows(art):
            raise ArticleNotFound(f"article {article_id!r} is outside this skill's allowed sources")
        return art


class StaticSearchProvider:
    """A ``WebSearchProvider`` returning ``results[site]`` for any query; ``queries`` records
    ``(query, site)`` pairs so a test can see the search was restricted per host."""

    def __init__(self, results: Mapping[str, list[str]]) -> None:
        self.results = {k: list(v) for k, v in results.items()}
        self.queries: list[tuple[str, str]] = []

    async def search(self, query: str, *, site: str, k: int) -> list[WebResult]:
        self.queries.append((query, site))
        return [WebResult(url=u, title=u) for u in self.results.get(site, [])[:k]]


@dataclass(frozen=True)
class Page:
    """What ``VirtualHostServer`` answers for one ``(host, path)``: a body, or a redirect when ``location``
    (sent byte for byte as given, so a test can send a malformed one). ``drip_s`` > 0 sends the body
    one byte at a time, ``drip_s`` seconds apart (a slow-drip host)."""

    body: str = ""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    location: str | None = None
    drip_s: float = 0.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VirtualHostServer:
    """A real HTTP server on 127.0.0.1 that answers by ``Host`` header and path (``pages``).

    Use as a context manager; ``port`` is the bound port; ``hits`` lists ``(host, path)`` served.
    Unknown ``(host, path)`` pairs get 404.
    """

    def __init__(self, pages: Mapping[tuple[str, str], Page]) -> None:
        self.pages = dict(pages)
        self.hits: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                outer.hits.append((host, self.path))
                page = outer.pages.get((host, self.path), Page(body="not found", status=404,
                                                               content_type="text/plain"))
                data = page.body.encode("utf-8")
                self.send_response(page.status)
                if page.location:
                    # raw bytes: http.server would refuse a non-Latin-1 header, and a test may want one
                    self._headers_buffer.append(b"Location: " + page.location.encode("utf-8") + b"\r\n")
                self.send_header("Content-Type", page.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    if page.drip_s <= 0:
                        self.wfile.write(data)
                        return
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(page.drip_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a fetch deadline): that is the point of a slow page

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class LoopbackTransport(httpx.AsyncBaseTransport):
    """Connects requests for the host names in ``hosts`` to ``127.0.0.1:port`` and refuses all others.

    The request keeps its URL and ``Host`` header (so the server and the allowlist see the real
    name); only the socket goes to the loopback port. Other hosts raise ``httpx.ConnectError``.
    """

    def __init__(self, hosts: Mapping[str, int]) -> None:
        self.hosts = {h.lower(): p for h, p in hosts.items()}
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host.lower()
        if host not in self.hosts:
            raise httpx.ConnectError(f"{host} is not mapped to 127.0.0.1 in this test", request=request)
        routed = httpx.Request(
            request.method,
            request.url.copy_with(scheme="http", host="127.0.0.1", port=self.hosts[host]),
            headers=request.headers,  # keeps Host: <real name>
            stream=request.stream,
            extensions=request.extensions,
        )
        return await self._inner.handle_async_request(routed)

    async def aclose(self) -> None:
        await self._inner.aclose()


@contextmanager
def serve_app(app: Any, *, port: int | None = None) -> Iterator[str]:
    """Run ``app`` under uvicorn on ``127.0.0.1:port`` (a free one by default) in a thread; yields the
    base URL and stops the server on exit."""
    import uvicorn

    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
