"""Host allowlist: exact host or subdomain; look-alikes, other schemes and bad entries rejected."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError
from skillrag.service.allowlist import HostAllowlist, normalize_host

ALLOW = HostAllowlist(["example.com", "Docs.Bank.test."])


@pytest.mark.parametrize(
    "host",
    ["example.com", "EXAMPLE.COM", "example.com.", "www.example.com", "a.b.example.com", "docs.bank.test",
     "x.docs.bank.test"],
)
def test_allowed_hosts(host):
    assert ALLOW.allows(host)


@pytest.mark.parametrize(
    "host",
    ["example.com.evil.test", "evil-example.com", "notexample.com", "example.co", "com", "bank.test",
     "evil.test", "", "exa mple.com", "xn--exmple-cua.com", "ex\u00e4mple.com"],
)
def test_lookalikes_rejected(host):
    assert not ALLOW.allows(host)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.com/a", True),
        ("http://sub.example.com:8080/a?b=c", True),
        ("https://example.com.evil.test/a", False),
        ("https://evil-example.com/", False),
        ("https://example.com@evil.test/", False),  # userinfo: the host is evil.test
        ("ftp://example.com/a", False),
        ("file:///etc/passwd", False),
        ("javascript:alert(1)", False),
        ("not a url", False),
    ],
)
def test_allows_url(url, ok):
    assert ALLOW.allows_url(url) is ok


def test_idna_hosts_compare_in_punycode():
    allow = HostAllowlist(["b\u00fccher.example"])
    assert allow.hosts == ("xn--bcher-kva.example",)
    assert allow.allows("www.xn--bcher-kva.example")
    assert allow.allows("B\u00dcCHER.example")
    assert not allow.allows("bucher.example")


@pytest.mark.parametrize("entry", ["https://example.com", "*.example.com", "example.com/path", "", "a..b"])
def test_bad_entries_are_config_errors(entry):
    with pytest.raises(ConfigError, match="web_allowlist"):
        HostAllowlist([entry])


def test_empty_allowlist_allows_nothing():
    assert not HostAllowlist([])
    assert not HostAllowlist([]).allows("example.com")


def test_normalize_host_ip_literals():
    assert normalize_host("[::1]") == "::1"
    assert normalize_host("127.0.0.1") == "127.0.0.1"
    with pytest.raises(ValueError):
        normalize_host("")


# regression (issue 15, item 1): hosts were normalised with Python's IDNA-2003 codec (ß -> ss), while
# httpx connects with IDNA-2008 (ß -> xn--strae-oqa); `straße.com` passed an allowlist of `strasse.com`
def test_the_allowlist_decides_on_the_host_httpx_connects_to():
    allow = HostAllowlist(["strasse.com"])
    assert not allow.allows_url("http://stra\u00dfe.com/x")
    assert not allow.allows("stra\u00dfe.com") and not allow.allows("www.stra\u00dfe.com")
    assert allow.allows_url("http://STRASSE.com/x")
    own = HostAllowlist(["stra\u00dfe.com"])
    assert own.hosts == ("xn--strae-oqa.com",)
    assert own.allows_url("http://stra\u00dfe.com/x") and own.allows_url("http://xn--strae-oqa.com/")
    assert not own.allows_url("http://strasse.com/x")


@pytest.mark.parametrize(
    "host", ["stra\u00dfe.com", "B\u00dcCHER.example", "example.com.", "Example.COM", "xn--strae-oqa.com",
             "docs.example.com", "caf\u00e9.example", "\u03c0.example"],
)
def test_normalize_host_is_what_httpx_sends(host):
    import httpx

    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_host.decode("ascii"))
        return httpx.Response(204)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        client.get(f"http://{host}/")
    assert normalize_host(host) == seen[0].rstrip(".")
    assert HostAllowlist([host]).allows_url(f"http://{host}/")


@pytest.mark.parametrize("url", ["http://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "http://exa\u200dmple.com/",
                                 "http://[::1/", "http://exa mple.com/"])
def test_urls_httpx_cannot_connect_to_are_not_allowed(url):
    assert not HostAllowlist(["example.com"]).allows_url(url)
