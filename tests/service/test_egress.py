"""Resolve, check, connect to what was checked: the fetcher's own transport (``CheckedTransport``).

No test needs the internet: the resolver is injected (a name -> addresses map), the positive paths use a
real server on 127.0.0.1 with ``allow_private`` on, and where a test needs a "public" address that
serves, a recording backend carries that address's connection to the local server (so nothing leaves
the machine, and the test still sees which address the transport chose).
"""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import httpx
import pytest

from skillrag.service.allowlist import HostAllowlist
from skillrag.service.testing import Page, StaticSearchProvider, VirtualHostServer
from skillrag.service.web import CheckedTransport, Dropped, WebDocument, WebFetcher, web_lookup

ALLOW = HostAllowlist(["example.com"])
PUBLIC = "93.184.216.34"  # documentation-style public address; never really contacted here


class MapResolver:
    """``(host, port) -> addresses`` from a dict; ``calls`` records each lookup."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        if host not in self.table:
            raise OSError(f"{host}: no such name in this test")
        return list(self.table[host])


class RoutedBackend(httpcore.AsyncNetworkBackend):
    """Opens every connection to 127.0.0.1 (the same port) and records the address it was asked for."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.asked: list[str] = []

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.asked.append(host)
        return await self.inner.connect_tcp("127.0.0.1", port, timeout=timeout)

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
        raise httpcore.ConnectError("no unix sockets")

    async def sleep(self, seconds):  # pragma: no cover
        await self.inner.sleep(seconds)


@pytest.fixture
def site():
    with VirtualHostServer({
        ("docs.example.com", "/fees"): Page("<p>A wire transfer costs 25 dollars.</p>"),
        ("example.com", "/to-internal"): Page(status=302, location="/internal"),
        ("example.com", "/internal"): Page("<p>internal</p>"),
    }) as server:
        yield server


def _fetcher(resolver, *, allow_private=False, backend=None) -> WebFetcher:
    transport = CheckedTransport(allow_private=allow_private, resolver=resolver, backend=backend)
    return WebFetcher(httpx.AsyncClient(transport=transport, follow_redirects=False))


# regression (issue 21, class 4): an allowlisted name resolving to a loopback, private or link-local address
# was fetched and cited
@pytest.mark.parametrize("addresses", [["127.0.0.1"], ["10.0.0.7"], ["169.254.169.254"], ["::1"],
                                       ["::ffff:127.0.0.1"], [PUBLIC, "127.0.0.1"]])
async def test_a_name_resolving_to_a_private_address_is_never_contacted(site, addresses):
    resolver = MapResolver({"docs.example.com": addresses})
    backend = RoutedBackend()
    fetcher = WebFetcher(resolver=resolver)  # the fetcher's own client: the shipped path
    fetcher._client._transport.network._backend = backend  # only to see what it would open
    got = await fetcher.fetch(f"http://docs.example.com:{site.port}/fees", ALLOW)
    await fetcher.aclose()
    assert isinstance(got, Dropped) and got.stage == "address"
    assert "not a public address" in got.reason and "service.web_allow_private" in got.reason
    assert backend.asked == [] and site.hits == []  # every resolved address is checked before any connect


async def test_allowed_private_addresses_are_fetched_with_the_name_as_host(site):
    resolver = MapResolver({"docs.example.com": ["127.0.0.1"]})
    fetcher = WebFetcher(resolver=resolver, allow_private=True)
    doc = await fetcher.fetch(f"http://docs.example.com:{site.port}/fees", ALLOW)
    await fetcher.aclose()
    assert isinstance(doc, WebDocument) and "25 dollars" in doc.text
    assert doc.url == f"http://docs.example.com:{site.port}/fees"
    assert site.hits == [("docs.example.com", "/fees")]  # the Host header still names the host
    assert resolver.calls == ["docs.example.com"]


async def test_the_connection_goes_to_the_checked_address_with_no_second_lookup(site):
    answers = iter([[PUBLIC], ["127.0.0.1"]])  # a rebinding resolver: public first, loopback after

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    backend = RoutedBackend()
    fetcher = _fetcher(rebinding, backend=backend)
    doc = await fetcher.fetch(f"http://docs.example.com:{site.port}/fees", ALLOW)
    await fetcher.aclose()
    assert isinstance(doc, WebDocument)
    assert backend.asked == [PUBLIC]  # an address, never the name: no lookup after the check
    assert next(answers) == ["127.0.0.1"]  # the second answer was never asked for


async def test_a_redirect_to_a_name_resolving_privately_is_checked_the_same_way(site):
    resolver = MapResolver({"example.com": [PUBLIC], "internal.example.com": ["10.1.2.3"]})
    backend = RoutedBackend()
    site.pages[("example.com", "/go")] = Page(status=302, location=f"http://internal.example.com:{site.port}/x")
    fetcher = _fetcher(resolver, backend=backend)
    got = await fetcher.fetch(f"http://example.com:{site.port}/go", ALLOW)
    await fetcher.aclose()
    assert isinstance(got, Dropped) and got.stage == "address" and "10.1.2.3" in got.reason
    assert site.hits == [("example.com", "/go")] and backend.asked == [PUBLIC]


async def test_a_lookup_drops_the_private_page_and_keeps_the_public_one(site):
    resolver = MapResolver({"docs.example.com": [PUBLIC], "intranet.example.com": ["192.168.1.20"]})
    provider = StaticSearchProvider({"example.com": [f"http://intranet.example.com:{site.port}/fees",
                                                     f"http://docs.example.com:{site.port}/fees"]})
    fetcher = _fetcher(resolver, backend=RoutedBackend())
    found = await web_lookup("fees", ALLOW, provider, fetcher)
    await fetcher.aclose()
    assert [d.url for d in found.documents] == [f"http://docs.example.com:{site.port}/fees"]
    assert [(d.url, d.stage) for d in found.dropped] == [(f"http://intranet.example.com:{site.port}/fees", "address")]


async def test_an_address_literal_is_checked_like_a_resolved_one(site):
    fetcher = WebFetcher()  # the system resolver: an address literal needs no network to "resolve"
    got = await fetcher.fetch(f"http://127.0.0.1:{site.port}/fees", HostAllowlist(["127.0.0.1"], allow_private=True))
    await fetcher.aclose()
    assert isinstance(got, Dropped) and got.stage == "address"  # the fetcher itself does not allow private
    assert site.hits == []


async def test_a_proxy_from_the_environment_is_not_used(site, monkeypatch):
    # a proxy would resolve the name itself, after the check
    with VirtualHostServer({}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{proxy.port}")
        fetcher = WebFetcher(resolver=MapResolver({"docs.example.com": ["127.0.0.1"]}), allow_private=True)
        doc = await fetcher.fetch(f"http://docs.example.com:{site.port}/fees", ALLOW)
        await fetcher.aclose()
    assert isinstance(doc, WebDocument) and proxy.hits == [] and site.hits == [("docs.example.com", "/fees")]


# --- TLS: the connection goes to the checked address; SNI and the certificate check use the name -------
def _tls_pair(tmp_path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "skillrag test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(pem))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    client = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
    return server, client


async def test_tls_uses_the_host_name_for_sni_and_the_certificate(tmp_path):
    server_ctx, client_ctx = _tls_pair(tmp_path, "docs.example.com")
    sni: list[str | None] = []
    server_ctx.sni_callback = lambda sock, name, ctx: sni.append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"host={self.headers.get('Host')}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = server_ctx.wrap_socket(httpd.socket, server_side=True)
    port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        resolver = MapResolver({"docs.example.com": ["127.0.0.1"], "other.example.com": ["127.0.0.1"]})
        transport = CheckedTransport(allow_private=True, resolver=resolver, verify=client_ctx)
        async with httpx.AsyncClient(transport=transport) as client:
            resp = await client.get(f"https://docs.example.com:{port}/")
            assert resp.text == f"host=docs.example.com:{port}"
            # a certificate for another name fails, although the address is the same
            with pytest.raises(httpx.ConnectError, match="certificate"):
                await client.get(f"https://other.example.com:{port}/")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert sni[:2] == ["docs.example.com", "other.example.com"]
