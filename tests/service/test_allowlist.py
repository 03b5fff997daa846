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
