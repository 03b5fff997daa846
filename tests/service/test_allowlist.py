"""Host allowlist: exact host or subdomain; look-alikes, other schemes and bad entries rejected."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError
from skillrag.service.allowlist import HostAllowlist, address_refusal, connect_host, normalize_host

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


# regression (issue 21, class 4): a skill could allowlist localhost, 127.0.0.1 or 0.0.0.0 (and any private
# literal), and the web fallback then read the service's own machine
@pytest.mark.parametrize(
    ("entry", "what"),
    [("localhost", "loopback"), ("LocalHost.", "loopback"), ("api.localhost", "loopback"),
     ("127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"), ("[::1]", "loopback"), ("10.1.2.3", "private"),
     ("192.168.0.1", "private"), ("169.254.169.254", "link-local"), ("[fe80::1]", "link-local"),
     ("[::ffff:127.0.0.1]", "loopback"), ("2130706433", "loopback"), ("127.1", "loopback"),
     ("100.64.0.1", "non-public")],
)
def test_private_entries_are_refused_unless_allowed(entry, what):
    with pytest.raises(ConfigError, match=rf"not a public address \({what}\).*service.web_allow_private"):
        HostAllowlist([entry])
    assert HostAllowlist([entry], allow_private=True).hosts


def test_address_refusal_is_one_rule():
    assert address_refusal("93.184.216.34") is None and address_refusal("2606:4700::1111") is None
    assert [address_refusal(a) for a in ("127.0.0.2", "::", "224.0.0.1", "172.16.0.1", "::ffff:10.0.0.1")] == [
        "loopback", "unspecified", "multicast", "private", "private"]


# regression (issue 21, class 5): an IPv6 literal could not be allowlisted at all
def test_a_bracketed_ipv6_literal_can_be_allowlisted():
    allow = HostAllowlist(["[2606:4700:4700::1111]", "203.0.113.0"], allow_private=True)
    assert allow.hosts == ("[2606:4700:4700::1111]", "203.0.113.0")
    assert allow.allows_url("https://[2606:4700:4700::1111]:8443/x")
    assert allow.allows_url("http://203.0.113.0/")
    # an address entry matches only itself: no "subdomains" of an address
    assert not allow.allows_url("http://x.203.0.113.0/")
    assert HostAllowlist(allow.hosts, allow_private=True).hosts == allow.hosts  # stable round trip
    with pytest.raises(ConfigError, match=r"in brackets, like '\[2606:4700::1\]'"):
        HostAllowlist(["2606:4700::1"])
    with pytest.raises(ConfigError, match="only an IPv6 address goes in brackets"):
        HostAllowlist(["[1.2.3.4]"])


@pytest.mark.parametrize(("entry", "says"), [("https://example.com/x", "is a URL"), ("example.com:80", "no port")])
def test_bad_entries_say_what_to_write(entry, says):
    with pytest.raises(ConfigError, match=says):
        HostAllowlist([entry])


def test_names_the_resolver_reads_as_addresses_are_those_addresses():
    import httpx

    assert {connect_host(httpx.URL(f"http://{h}/")) for h in ("2130706433", "127.1", "0x7f.0.0.1")} == {"127.0.0.1"}
    assert connect_host(httpx.URL("http://add.be/")) == "add.be"
