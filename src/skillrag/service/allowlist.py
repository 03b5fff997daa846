"""Host allowlists for the web fallback: exact host or a subdomain of it, nothing else.

**One host normalisation, the client's own.** A host is compared in exactly the form the HTTP client
connects to: httpx's ``URL.raw_host`` (lower case, IDNA-2008 A-labels via the ``idna`` package,
IP literals unbracketed), with a trailing dot removed. The allowlist's entries go through the same
function, so ``straße.com`` is ``xn--strae-oqa.com`` on both sides and never ``strasse.com`` (which
Python's IDNA-2003 codec would give). A host httpx cannot encode is not allowed.

A host is allowed when it equals an allowlisted host or ends with ``"." + host``. So with
``example.com`` listed, ``example.com`` and ``docs.example.com`` pass while the look-alikes
``example.com.evil.test``, ``evil-example.com`` and ``notexample.com`` do not. A URL with a scheme
other than http(s) never passes. An IP literal entry (``203.0.113.7``, an IPv6 literal in brackets:
``[2001:db8::1]``) matches only itself.

**Private addresses.** Unless ``allow_private`` (the setting ``service.web_allow_private``) is on, an
entry that is a loopback, private, link-local, unspecified (``0.0.0.0``) or otherwise not globally
routable address, or the name ``localhost`` (or a name under ``.localhost``), is refused with a
``ConfigError``. ``address_refusal`` is the one rule, also applied by ``web.CheckedNetworkBackend``
to every address a name resolves to, just before it connects.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

import httpx

from skillrag.errors import ConfigError

__all__ = ["HostAllowlist", "address_refusal", "connect_host", "normalize_host"]

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_NUMERIC = re.compile(r"[0-9a-fx.]+")
#: Where to turn private addresses on, as error messages name it.
ALLOW_PRIVATE_SETTING = "service.web_allow_private"


def address_refusal(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """None when ``address`` is a public (globally routable, unicast) IP address, else what it is:
    ``loopback``, ``private``, ``link-local``, ``unspecified``, ``multicast`` or ``non-public``.

    An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is judged as the IPv4 address it carries.
    Raises ``ValueError`` when ``address`` is not an IP address.
    """
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for kind, flag in (("unspecified", ip.is_unspecified), ("loopback", ip.is_loopback),
                       ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                       ("private", ip.is_private)):
        if flag:
            return kind
    return None if ip.is_global else "non-public"


def _is_loopback_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")  # RFC 6761: always the loopback


def connect_host(url: httpx.URL) -> str:
    """The host ``url`` connects to, normalised (``raw_host`` decoded, lower case, no trailing dot; a
    name the system resolver reads as an IPv4 address, such as ``2130706433``, as that address).

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
    if _NUMERIC.fullmatch(h):
        # the system resolver reads ``2130706433``, ``127.1`` or ``0x7f.1`` as an IPv4 address (inet_aton)
        try:
            return str(ipaddress.IPv4Address(socket.inet_aton(h)))
        except OSError:
            pass
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

    Entries are bare host names (``example.com``) or IP literals (IPv6 in brackets), not URLs or
    patterns; a bad entry raises ``ConfigError`` naming it, as does a private one unless
    ``allow_private`` (module doc). ``hosts``: the entries normalised (IPv6 literals bracketed).
    An empty allowlist allows nothing.
    """

    def __init__(self, hosts: Iterable[str], *, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        norm: list[str] = []
        self._names: set[str] = set()
        self._ips: set[str] = set()
        for entry in hosts:
            h, ip = _entry(entry)
            if not allow_private:
                what = address_refusal(ip) if ip is not None else ("loopback" if _is_loopback_name(h) else None)
                if what is not None:
                    raise ConfigError(f"web_allowlist: {entry!r} is not a public address ({what}); the web "
                                      f"fallback reads only public hosts unless {ALLOW_PRIVATE_SETTING} is true")
            shown = f"[{h}]" if ip is not None and ip.version == 6 else h
            if shown not in norm:
                norm.append(shown)
            (self._ips if ip is not None else self._names).add(h)
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
        return host in self._ips or any(host == a or host.endswith("." + a) for a in self._names)


def _entry(entry: object) -> tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address | None]:
    """``(connect form, ip or None)`` of one allowlist entry; ``ConfigError`` naming it when it is not a
    bare host name or IP literal."""
    if not isinstance(entry, str):
        raise ConfigError(f"web_allowlist: {entry!r} must be a host name like 'example.com'")
    text = entry.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            ip6 = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise ConfigError(f"web_allowlist: {entry!r}: only an IPv6 address goes in brackets") from None
        return str(ip6), ip6
    if "://" in text or "/" in text:
        raise ConfigError(f"web_allowlist: {entry!r} is a URL or path; write the bare host name, like 'example.com'")
    if ":" in text:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            raise ConfigError(f"web_allowlist: {entry!r} must be a bare host name like 'example.com' "
                              "(no port)") from None
        raise ConfigError(f"web_allowlist: {entry!r}: write an IPv6 address in brackets, like '[{text}]'")
    if any(c in text for c in "*@ ?#"):
        raise ConfigError(f"web_allowlist: {entry!r} must be a bare host name like 'example.com'")
    try:
        h = normalize_host(text)
    except ValueError as exc:
        raise ConfigError(f"web_allowlist: {exc}") from None
    try:
        return h, ipaddress.ip_address(h)
    except ValueError:
        return h, None
