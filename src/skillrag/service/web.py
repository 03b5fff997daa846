"""The web fallback: a pluggable search provider and a fetcher that enforces the host allowlist.

The allowlist is enforced three times on every lookup (``web_lookup``):

1. **on the query** – the provider is asked once per allowlisted host, restricted to that host
   (``site:HOST``), so it only proposes candidates from those hosts;
2. **before the fetch** – each result URL's host must be an allowlisted host or a subdomain of one;
3. **after redirects** – redirects are followed by hand, one hop at a time, and every hop's target
   *and* the final URL are checked again. An allowlisted page that redirects off the list is dropped.

Dropped content is logged (logger ``skillrag.service.web``) and reported in ``WebLookup.dropped``;
a kept document carries its **final** URL, which is what a citation shows.

The shipped provider (``SearxngProvider``) needs a SearXNG-compatible JSON endpoint and is off unless
``service.web_search_url`` is set in ``skillrag.yaml``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import httpx
from markdownify import markdownify

from skillrag.errors import BackendError
from skillrag.service.allowlist import HostAllowlist

__all__ = [
    "Dropped",
    "SearxngProvider",
    "WebDocument",
    "WebFetcher",
    "WebLookup",
    "WebResult",
    "WebSearchProvider",
    "web_lookup",
]

log = logging.getLogger("skillrag.service.web")

_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_NOISE = re.compile(r"<(script|style|noscript|template)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


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
    stage: str  # "result" | "redirect" | "final" | "fetch"
    reason: str


@dataclass
class WebLookup:
    """What one web lookup produced: kept documents, dropped URLs and the queries sent."""

    documents: list[WebDocument] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)


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

    ``client`` is any ``httpx.AsyncClient`` (tests pass one whose transport maps test host names to
    127.0.0.1); it must not follow redirects itself – the fetcher asks for each hop with
    ``follow_redirects=False``. Sizes in bytes, timeouts in seconds.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        max_redirects: int = 5,
        max_bytes: int = 2_000_000,
        timeout_s: float = 10.0,
    ) -> None:
        self._client = client or httpx.AsyncClient(timeout=timeout_s, follow_redirects=False)
        self.max_redirects = max_redirects
        self.max_bytes = max_bytes

    async def aclose(self) -> None:
        await self._client.aclose()

    def _drop(self, url: str, stage: str, reason: str) -> Dropped:
        log.warning("web: dropped %s at %s check: %s", url, stage, reason)
        return Dropped(url=url, stage=stage, reason=reason)

    async def fetch(self, url: str, allowlist: HostAllowlist) -> WebDocument | Dropped:
        """The page at ``url`` as a ``WebDocument`` (with its final URL), or ``Dropped`` saying why."""
        if not allowlist.allows_url(url):
            return self._drop(url, "result", f"host of {url} is not on the allowlist")
        current = httpx.URL(url)
        hops: list[str] = []
        for _ in range(self.max_redirects + 1):
            try:
                async with self._client.stream("GET", current, follow_redirects=False) as resp:
                    if resp.status_code in _REDIRECTS and "location" in resp.headers:
                        try:
                            nxt = current.join(resp.headers["location"])
                        except httpx.InvalidURL:
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
            except httpx.HTTPError as exc:
                return self._drop(url, "fetch", f"{current}: {type(exc).__name__}: {exc}")
            if ctype in ("text/html", "application/xhtml+xml") or (not ctype and "<html" in raw[:2000].lower()):
                title, text = html_to_text(raw)
            else:
                title, text = "", raw.strip()
            return WebDocument(url=str(final), requested_url=url, title=title or str(final), text=text, hops=tuple(hops))
        return self._drop(url, "redirect", f"more than {self.max_redirects} redirects")


async def web_lookup(
    query: str,
    allowlist: HostAllowlist,
    provider: WebSearchProvider,
    fetcher: WebFetcher,
    *,
    max_results: int = 3,
) -> WebLookup:
    """Search each allowlisted host for ``query`` and fetch up to ``max_results`` pages (three checks).

    An empty allowlist fetches nothing. Provider failures raise ``BackendError``.
    """
    out = WebLookup()
    seen: set[str] = set()
    candidates: list[WebResult] = []
    for host in allowlist.hosts:  # check 1: one restricted search per allowed host
        out.queries.append(f"{query} site:{host}")
        # ask for spares: checks 2 and 3 may drop some candidates
        for res in await provider.search(query, site=host, k=3 * max_results):
            if res.url not in seen:
                seen.add(res.url)
                candidates.append(res)
    for res in candidates:
        if len(out.documents) >= max_results:
            break
        got = await fetcher.fetch(res.url, allowlist)  # checks 2 and 3
        if isinstance(got, Dropped):
            out.dropped.append(got)
        else:
            out.documents.append(got)
    return out
