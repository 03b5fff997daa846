"""Host allowlists for the web fallback: exact host or a subdomain of it, nothing else.

A host is allowed when, after normalisation (lower case, trailing dot removed, IDNA/punycode),
it equals an allowlisted host or ends with ``"." + host``. So with ``example.com`` listed,
``example.com`` and ``docs.example.com`` pass while the look-alikes ``example.com.evil.test``,
``evil-example.com`` and ``notexample.com`` do not. A URL with a scheme other than http(s) never passes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

import httpx

from skillrag.errors import ConfigError

__all__ = ["HostAllowlist", "normalize_host"]

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalize_host(host: str) -> str:
    """``host`` in canonical form: lower case, no trailing dot, IDNA (punycode) for non-ASCII labels.

    Raises ``ValueError`` for an empty host or one that is not a DNS name or an IP literal.
    """
    h = (host or "").strip().rstrip(".").lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if not h:
        raise ValueError("empty host")
    try:
        return str(ipaddress.ip_address(h))
    except ValueError:
        pass
    try:
        h = h.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"{host!r} is not a valid host name ({exc})") from None
    labels = h.split(".")
    if not all(_LABEL.match(label) for label in labels):
        raise ValueError(f"{host!r} is not a valid host name")
    return h


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
        return any(h == a or h.endswith("." + a) for a in self.hosts)

    def allows_url(self, url: str | httpx.URL) -> bool:
        """True for an ``http``/``https`` URL whose host ``allows`` passes (userinfo is ignored: the host counts)."""
        try:
            u = url if isinstance(url, httpx.URL) else httpx.URL(str(url))
        except (httpx.InvalidURL, TypeError, ValueError):
            return False
        return u.scheme in ("http", "https") and self.allows(u.host)
