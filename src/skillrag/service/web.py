"""The web fallback: a pluggable search provider and a fetcher that enforces the host allowlist.

The allowlist is enforced three times on every lookup (``web_lookup``):

1. **on the query** – the user's text is stripped of search syntax (``plain_query``: no ``site:``,
   ``OR``, ``-x``, quotes, bangs), then the provider is asked once per allowlisted host, restricted to
   that host (``site:HOST``), so it only proposes candidates from those hosts;
2. **before the fetch** – each result URL's host must be an allowlisted host or a subdomain of one;
3. **after redirects** – redirects are followed by hand, one hop at a time, and every hop's target
   *and* the final URL are checked again. An allowlisted page that redirects off the list is dropped.

Hosts are compared exactly as the HTTP client connects to them (``allowlist.connect_host``).

**Resolve, check, connect to what was checked.** The fetcher's own client (``CheckedTransport``)
resolves each host once (``resolver``, default the system's ``getaddrinfo``), refuses the connection
when any address it resolves to is loopback, private, link-local or otherwise not public
(``allowlist.address_refusal``; ``service.web_allow_private`` lifts this) and connects to one of those
same checked addresses: there is no second lookup for a DNS-rebinding answer to slip into. The URL, the
``Host`` header and TLS (SNI and the certificate check) still use the host name. Every redirect hop is a
new request, so it is resolved and checked the same way. Such a page is dropped at stage ``address``.
The transport never uses a proxy from the environment (a proxy would resolve the name itself).
Dropped content is logged (logger ``skillrag.service.web``) and reported in ``WebLookup.dropped``;
a kept document carries its **final** URL, which is what a citation shows.

One bad page never ends a lookup: a malformed redirect (``Location: http:\\\\evil.net\\x``, a
``data:`` URL), a page slower than the fetch deadline (``deadline_s``, all hops and the body), a body
that cannot be converted, or any other failure of that one fetch drops that page and the lookup goes on.

The shipped provider (``SearxngProvider``) needs a SearXNG-compatible JSON endpoint and is off unless
``service.web_search_url`` is set in ``skillrag.yaml``.
"""

from __future__ import annotations

import logging
import math
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import anyio
import httpcore
import httpx
from markdownify import markdownify

from skillrag.errors import BackendError
from skillrag.service.allowlist import ALLOW_PRIVATE_SETTING, HostAllowlist, address_refusal

__all__ = [
    "AddressRefused",
    "CheckedNetworkBackend",
    "CheckedTransport",
    "Dropped",
    "Resolver",
    "SearxngProvider",
    "WebDocument",
    "WebFetcher",
    "WebLookup",
    "WebResult",
    "WebSearchProvider",
    "plain_query",
    "system_resolver",
    "web_lookup",
]

log = logging.getLogger("skillrag.service.web")

_REDIRECTS = {301, 302, 303, 307, 308}
_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's defaults
_TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_NOISE = re.compile(r"<(script|style|noscript|template)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
#: Boolean operators of web search engines (upper case, as the engines read them).
_OPERATORS = frozenset({"OR", "AND", "NOT", "AROUND"})
_TERM = re.compile(r"\w+(?:['\u2019.\-]\w+)*")


def plain_query(text: str) -> str:
    """``text`` as plain words for a web search engine: search syntax from the user removed.

    Dropped: any token with a ``:`` (``site:evil.net``, ``inurl:x``, SearXNG's ``:en``), bang commands
    (``!g``), the operators ``OR AND NOT AROUND``; quotes, parentheses, ``|``, ``*`` and leading
    ``-``/``+`` are removed from the words that remain. ``"fee OR site:evil.net"`` -> ``"fee"``.
    """
    words: list[str] = []
    for tok in (text or "").split():
        if ":" in tok or tok.startswith("!") or tok in _OPERATORS:
            continue
        words.extend(_TERM.findall(tok))
    return " ".join(words)


@dataclass(frozen=True)
class WebResult:
    """One search result: a candidate URL (not yet fetched or trusted)."""

    url: str
    title: str = ""
    snippet: str = ""


@dataclass(frozen=True)
class WebDocument:
    """A fetched page that passed all three checks. ``url`` is the final URL after redirects."""

    url: str
    requested_url: str
    title: str
    text: str
    hops: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dropped:
    """A URL the allowlist (or the fetch) rejected, with the check that rejected it."""

    url: str
    stage: str  # "result" | "redirect" | "final" | "address" | "fetch"
    reason: str


@dataclass
class WebLookup:
    """What one web lookup produced: kept documents, dropped URLs and the queries sent."""

    documents: list[WebDocument] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the lookup stopped early (its deadline), keeping what it had


@runtime_checkable
class WebSearchProvider(Protocol):
    """A web search backend. ``site`` restricts results to one host (check 1 of the allowlist)."""

    async def search(self, query: str, *, site: str, k: int) -> list[WebResult]: ...


class SearxngProvider:
    """Web search through a SearXNG-compatible JSON endpoint (``GET URL?q=...&format=json``).

    Reads ``results[].url/title/content``. The site restriction is sent as ``site:HOST`` in the query.
    Raises ``BackendError`` when the endpoint fails or answers something that is not that JSON.
    """

    def __init__(self, endpoint: str, *, client: httpx.AsyncClient | None = None, timeout_s: float = 10.0) -> None:
        self.endpoint = endpoint
        self._client = client or httpx.AsyncClient(timeout=timeout_s)

    async def search(self, query: str, *, site: str, k: int) -> list[WebResult]:
        try:
            resp = await self._client.get(self.endpoint, params={"q": f"{query} site:{site}", "format": "json"})
            resp.raise_for_status()
            data = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise BackendError(f"web search at {self.endpoint} failed: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise BackendError(f"web search at {self.endpoint}: answer has no 'results' list")
        out: list[WebResult] = []
        for item in data["results"]:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                out.append(WebResult(item["url"], str(item.get("title") or ""), str(item.get("content") or "")))
            if len(out) >= k:
                break
        return out

    async def aclose(self) -> None:
        await self._client.aclose()


#: ``(host, port) -> IP addresses`` (strings), best first; raises ``OSError`` when the name does not resolve.
Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives ``host`` (``getaddrinfo``, off the event loop), in its order."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressRefused(httpcore.ConnectError):
    """A host resolved to an address the web fallback may not connect to (nothing was sent to it)."""


class CheckedNetworkBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that resolves once, checks every address and connects to a checked one.

    ``resolver``: a ``Resolver`` (tests inject one; default ``system_resolver``); ``allow_private``:
    ``service.web_allow_private``; ``backend``: the backend that opens the TCP connection to the chosen
    IP address (default ``httpcore.AnyIOBackend``; given an address, it does no lookup of its own).
    Raises ``AddressRefused`` (an ``httpcore.ConnectError``) when any resolved address is refused.
    """

    def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None,
                 backend: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.allow_private = allow_private
        self.resolver = resolver or system_resolver
        self._backend = backend or httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self.resolver(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise httpcore.ConnectError(f"{host} does not resolve to any address")
        if not self.allow_private:
            for address in addresses:
                what = address_refusal(address)
                if what is not None:
                    raise AddressRefused(f"{host} resolves to {address}, not a public address ({what}); the web "
                                         f"fallback reads only public hosts unless {ALLOW_PRIVATE_SETTING} is true")
        failure: Exception | None = None
        for address in addresses:  # the checked addresses themselves: no second lookup
            try:
                return await self._backend.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                       socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("the web fetcher connects over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's own HTTP transport over a ``CheckedNetworkBackend`` (module doc), without environment proxies.

    ``verify``: as for httpx (``True``, a CA bundle path or an ``ssl.SSLContext``); the rest as for
    ``CheckedNetworkBackend``. TLS is started with the URL's host name (SNI and the certificate check),
    whatever address the connection went to.
    """

    def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None,
                 backend: httpcore.AsyncNetworkBackend | None = None,
                 verify: ssl.SSLContext | str | bool = True) -> None:
        limits = _LIMITS
        super().__init__(verify=verify, trust_env=False, limits=limits)
        self.network = CheckedNetworkBackend(allow_private=allow_private, resolver=resolver, backend=backend)
        # httpx 0.28 takes no network backend: the same pool it builds, over ours (``_pool`` is what
        # ``handle_async_request`` and ``aclose`` use)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=self.network,
        )


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, markdown text)`` of an HTML page; scripts and styles are removed first."""
    m = _TITLE.search(html)
    title = re.sub(r"\s+", " ", m.group(1)).strip() if m else ""
    body = _NOISE.sub(" ", html)
    text = markdownify(body, heading_style="ATX", strip=["a", "img"])
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return title, text


class WebFetcher:
    """Fetches one page under an allowlist, following redirects by hand and checking each hop.

    Without ``client`` the fetcher makes its own over a ``CheckedTransport`` (``allow_private``:
    ``service.web_allow_private``; ``resolver``: a ``Resolver``, default the system's), so every
    connection goes to an address checked just before (module doc). A ``client`` passed in is used as
    it is, with whatever transport it has (tests pass one whose transport maps test host names to
    127.0.0.1); the fetcher asks for each hop with ``follow_redirects=False``. ``timeout_s``: per
    request (connect, each read), in seconds; ``deadline_s``: wall-clock limit for the whole fetch
    (every hop and the body), in seconds, so a host that drips a few bytes at a time cannot hold a
    turn; ``max_bytes``: largest body read, in bytes.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        max_redirects: int = 5,
        max_bytes: int = 2_000_000,
        timeout_s: float = 10.0,
        deadline_s: float = 20.0,
        allow_private: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        self._client = client or httpx.AsyncClient(
            transport=CheckedTransport(allow_private=allow_private, resolver=resolver), timeout=timeout_s,
            follow_redirects=False, trust_env=False)
        self.max_redirects = max_redirects
        self.max_bytes = max_bytes
        self.deadline_s = deadline_s

    async def aclose(self) -> None:
        await self._client.aclose()

    def _drop(self, url: str, stage: str, reason: str) -> Dropped:
        log.warning("web: dropped %s at %s check: %s", url, stage, reason)
        return Dropped(url=url, stage=stage, reason=reason)

    async def fetch(self, url: str, allowlist: HostAllowlist) -> WebDocument | Dropped:
        """The page at ``url`` as a ``WebDocument`` (with its final URL), or ``Dropped`` saying why.

        Never raises for anything the page or its server does (bad URL, bad redirect, slow or huge
        body, network error): that page is dropped.
        """
        try:
            with anyio.fail_after(self.deadline_s):
                return await self._fetch(url, allowlist)
        except TimeoutError:
            return self._drop(url, "fetch", f"not fetched within {self.deadline_s:g} s (web_fetch_deadline_s)")

    async def _fetch(self, url: str, allowlist: HostAllowlist) -> WebDocument | Dropped:
        try:
            current = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError):
            return self._drop(url, "result", f"{url!r} is not a URL")
        if not allowlist.allows_url(current):
            return self._drop(url, "result", f"host of {url} is not on the allowlist")
        hops: list[str] = []
        for _ in range(self.max_redirects + 1):
            try:
                async with self._client.stream("GET", current, follow_redirects=False) as resp:
                    if resp.status_code in _REDIRECTS and "location" in resp.headers:
                        try:
                            nxt = current.join(resp.headers["location"])
                        except (httpx.InvalidURL, ValueError):
                            return self._drop(url, "redirect", f"bad Location header at {current}")
                        if not allowlist.allows_url(nxt):
                            return self._drop(url, "redirect", f"{current} redirects to off-list {nxt}")
                        hops.append(str(current))
                        current = nxt
                        continue
                    final = resp.url
                    # Check 3: the URL the content actually came from, whatever the hops said.
                    if not allowlist.allows_url(final):
                        return self._drop(url, "final", f"final URL {final} is off the allowlist")
                    if resp.status_code != 200:
                        return self._drop(url, "fetch", f"HTTP {resp.status_code} from {final}")
                    ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                    if ctype and ctype not in _TEXT_TYPES:
                        return self._drop(url, "fetch", f"unsupported content type {ctype!r} at {final}")
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in resp.aiter_bytes():
                        chunks.append(chunk)
                        size += len(chunk)
                        if size > self.max_bytes:
                            return self._drop(url, "fetch", f"{final} is larger than {self.max_bytes} bytes")
                    raw = b"".join(chunks).decode(resp.encoding or "utf-8", errors="replace")
            except (httpx.InvalidURL, UnicodeError) as exc:
                # httpx builds its own next request from a redirect's Location even when it does not
                # follow it; a malformed one (``http:\\evil.net\x``, ``data:...``) fails there
                return self._drop(url, "redirect", f"malformed redirect at {current}: {type(exc).__name__}: {exc}")
            except httpx.HTTPError as exc:
                if isinstance(exc.__cause__, AddressRefused):  # nothing was sent to that address
                    return self._drop(url, "address", f"{current}: {exc}")
                return self._drop(url, "fetch", f"{current}: {type(exc).__name__}: {exc}")
            try:
                if ctype in ("text/html", "application/xhtml+xml") or (not ctype and "<html" in raw[:2000].lower()):
                    # markdownify is CPU-bound: off the event loop, and abandoned if the deadline passes
                    title, text = await anyio.to_thread.run_sync(html_to_text, raw, abandon_on_cancel=True)
                else:
                    title, text = "", raw.strip()
            except (RecursionError, ValueError) as exc:
                return self._drop(url, "fetch", f"cannot read the page at {final}: {type(exc).__name__}")
            return WebDocument(url=str(final), requested_url=url, title=title or str(final), text=text, hops=tuple(hops))
        return self._drop(url, "redirect", f"more than {self.max_redirects} redirects")


async def web_lookup(
    query: str,
    allowlist: HostAllowlist,
    provider: WebSearchProvider,
    fetcher: WebFetcher,
    *,
    max_results: int = 3,
    deadline_s: float | None = None,
) -> WebLookup:
    """Search each allowlisted host for ``plain_query(query)`` and fetch up to ``max_results`` pages
    (three checks; module doc).

    An empty allowlist, or a query with no plain words left, searches and fetches nothing. Provider
    failures raise ``BackendError``; a page that fails in any way is dropped and the lookup goes on.
    ``deadline_s``: wall-clock limit for the whole lookup, in seconds; when it passes the lookup stops,
    keeps the pages it has and says so in ``stopped``.
    """
    out = WebLookup()
    q = plain_query(query)
    if not q:
        return out
    with anyio.move_on_after(math.inf if deadline_s is None else deadline_s) as scope:
        await _lookup(q, allowlist, provider, fetcher, max_results, out)
    if scope.cancelled_caught:
        out.stopped = f"the web lookup stopped at its deadline ({deadline_s:.1f} s)"
        log.warning("web: %s", out.stopped)
    return out


async def _lookup(
    q: str, allowlist: HostAllowlist, provider: WebSearchProvider, fetcher: WebFetcher, max_results: int,
    out: WebLookup,
) -> None:
    seen: set[str] = set()
    candidates: list[WebResult] = []
    for host in allowlist.hosts:  # check 1: one restricted search per allowed host
        out.queries.append(f"{q} site:{host}")
        # ask for spares: checks 2 and 3 may drop some candidates
        for res in await provider.search(q, site=host, k=3 * max_results):
            if res.url not in seen:
                seen.add(res.url)
                candidates.append(res)
    for res in candidates:
        if len(out.documents) >= max_results:
            break
        try:
            got = await fetcher.fetch(res.url, allowlist)  # checks 2 and 3
        except Exception as exc:  # one page never ends the lookup; fetch() already drops what it knows
            log.exception("web: fetching %s failed", res.url)
            got = Dropped(url=res.url, stage="fetch", reason=f"{type(exc).__name__}: {exc}")
        if isinstance(got, Dropped):
            out.dropped.append(got)
        else:
            out.documents.append(got)
