"""Host allowlists for the web fallback: exact host or a subdomain of it, nothing else.

**One host normalisation, the client's own.** A host is compared in exactly the form the HTTP client
connects to: httpx's ``URL.raw_host`` (lower case, IDNA-2008 A-labels via the ``idna`` package,
IP literals unbracketed), with a trailing dot removed. The allowlist's entries go through the same
function, so ``straße.com`` is ``xn--strae-oqa.com`` on both sides and never ``strasse.com`` (which
Python's IDNA-2003 codec would give). A host httpx cannot encode is not allowed.

A host is allowed when it equals an allowlisted host or ends with ``"." + host``. So with
``example.com`` listed, ``example.com`` and ``docs.example.com`` pass while the look-alikes
``example.com.evil.test``, ``evil-example.com`` and ``notexample.com`` do not. A URL with a scheme
other than http(s) never passes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

import httpx

from skillrag.errors import ConfigError

__all__ = ["HostAllowlist", "connect_host", "normalize_host"]

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def connect_host(url: httpx.URL) -> str:
    """The host ``url`` connects to, normalised (``raw_host`` decoded, lower case, no trailing dot).

    Raises ``ValueError`` when it is not a DNS name of valid labels or an IP literal.
    """
    h = url.raw_host.decode("ascii").rstrip(".").lower()
    if not h:
        raise ValueError("empty host")
    try:
        return str(ipaddress.ip_address(h))
    except ValueError:
        pass
    if not all(_LABEL.match(label) for label in h.split(".")):
        raise ValueError(f"{h!r} is not a valid host name")
    return h


def normalize_host(host: str) -> str:
    """``host`` in the form the HTTP client connects to (see the module doc); IP literals may be bracketed.

    Raises ``ValueError`` for an empty host or one that is not a DNS name or an IP literal.
    """
    h = (host or "").strip()
    if not h:
        raise ValueError("empty host")
    inner = h[1:-1] if h.startswith("[") and h.endswith("]") else h
    try:
        return str(ipaddress.ip_address(inner))
    except ValueError:
        pass
    if any(c in h for c in "/\\?#@:[]%"):
        raise ValueError(f"{host!r} is not a host name")
    try:
        url = httpx.URL(f"http://{h}/")
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise ValueError(f"{host!r} is not a valid host name ({exc})") from None
    return connect_host(url)


class HostAllowlist:
    """An immutable set of allowed hosts. ``allows(host)`` and ``allows_url(url)`` are the checks.

    Entries are bare host names (``example.com``), not URLs or patterns; a bad entry raises
    ``ConfigError`` naming it. An empty allowlist allows nothing.
    """

    def __init__(self, hosts: Iterable[str]) -> None:
        norm: list[str] = []
        for entry in hosts:
            if not isinstance(entry, str) or any(c in entry for c in "/:*@ ?#"):
                raise ConfigError(f"web_allowlist: {entry!r} must be a bare host name like 'example.com'")
            try:
                h = normalize_host(entry)
            except ValueError as exc:
                raise ConfigError(f"web_allowlist: {exc}") from None
            if h not in norm:
                norm.append(h)
        self.hosts: tuple[str, ...] = tuple(norm)

    def __bool__(self) -> bool:
        return bool(self.hosts)

    def __repr__(self) -> str:
        return f"HostAllowlist({list(self.hosts)!r})"

    def allows(self, host: str | None) -> bool:
        """True when ``host`` is an allowlisted host or a subdomain of one."""
        if not host:
            return False
        try:
            h = normalize_host(host)
        except ValueError:
            return False
        return self._match(h)

    def allows_url(self, url: str | httpx.URL) -> bool:
        """True for an ``http``/``https`` URL whose connect host (``connect_host``) is allowed.

        Userinfo is ignored: the host counts. A URL httpx cannot parse is never allowed.
        """
        try:
            u = url if isinstance(url, httpx.URL) else httpx.URL(str(url))
            host = connect_host(u)
        except (httpx.InvalidURL, TypeError, ValueError):  # UnicodeError is a ValueError
            return False
        return u.scheme in ("http", "https") and self._match(host)

    def _match(self, host: str) -> bool:
        return any(host == a or host.endswith("." + a) for a in self.hosts)
