"""Web fallback against a real HTTP server on 127.0.0.1.

Host names such as ``docs.example.com`` or ``evil.test`` are served by one local ``http.server``
(``VirtualHostServer``) that answers by ``Host`` header. The fetcher's httpx client uses
``LoopbackTransport``, which connects those names to 127.0.0.1 but leaves the URL and ``Host`` header
untouched, so every allowlist check sees the real host name while nothing leaves the machine.
"""

from __future__ import annotations

import logging

import httpx
import pytest

from skillrag.errors import BackendError
from skillrag.service.allowlist import HostAllowlist
from skillrag.service.testing import LoopbackTransport, Page, StaticSearchProvider, VirtualHostServer
from skillrag.service.web import Dropped, SearxngProvider, WebDocument, WebFetcher, plain_query, web_lookup

HOSTS = ["example.com", "docs.example.com", "evil.test", "example.com.evil.test", "evil-example.com",
         "search.local"]
ALLOW = HostAllowlist(["example.com"])

PAGES = {
    ("docs.example.com", "/fees"): Page("<html><head><title>Fees</title><script>var x=1;</script></head>"
                                        "<body><h1>Fees</h1><p>A wire transfer costs 25 dollars.</p></body></html>"),
    ("example.com", "/old-fees"): Page(status=301, location="https://docs.example.com/fees"),
    ("example.com", "/moved"): Page(status=302, location="/fees-v2"),
    ("example.com", "/fees-v2"): Page("Fees v2: card replacement is free.", content_type="text/plain"),
    ("example.com", "/to-evil"): Page(status=302, location="http://evil.test/phish"),
    ("example.com", "/hop1"): Page(status=302, location="/hop2"),
    ("example.com", "/hop2"): Page(status=307, location="http://evil.test/phish"),
    ("example.com", "/loop"): Page(status=302, location="/loop"),
    ("example.com", "/binary"): Page("PK\x03\x04", content_type="application/zip"),
    ("evil.test", "/phish"): Page("<p>Send your password to us.</p>"),
    ("example.com.evil.test", "/fees"): Page("<p>fake fees</p>"),
    ("evil-example.com", "/fees"): Page("<p>fake fees</p>"),
}


@pytest.fixture
def site():
    with VirtualHostServer(PAGES) as server:
        yield server


@pytest.fixture
async def fetcher(site):
    client = httpx.AsyncClient(transport=LoopbackTransport({h: site.port for h in HOSTS}))
    f = WebFetcher(client, max_redirects=3)
    yield f
    await f.aclose()


async def test_plain_fetch_html_to_text(fetcher, site):
    doc = await fetcher.fetch("http://docs.example.com/fees", ALLOW)
    assert isinstance(doc, WebDocument)
    assert doc.title == "Fees"
    assert "A wire transfer costs 25 dollars." in doc.text
    assert "var x" not in doc.text
    assert doc.url == "http://docs.example.com/fees" and doc.hops == ()
    assert ("docs.example.com", "/fees") in site.hits


async def test_redirect_to_offlist_host_is_dropped_and_logged(fetcher, site, caplog):
    with caplog.at_level(logging.WARNING, logger="skillrag.service.web"):
        got = await fetcher.fetch("http://example.com/to-evil", ALLOW)
    assert isinstance(got, Dropped)
    assert got.stage == "redirect" and "evil.test" in got.reason
    assert ("evil.test", "/phish") not in site.hits  # never even requested
    assert any("dropped http://example.com/to-evil" in r.getMessage() for r in caplog.records)


async def test_offlist_redirect_after_an_allowed_hop_is_dropped(fetcher, site):
    got = await fetcher.fetch("http://example.com/hop1", ALLOW)
    assert isinstance(got, Dropped) and got.stage == "redirect"
    assert ("example.com", "/hop2") in site.hits
    assert ("evil.test", "/phish") not in site.hits


async def test_same_host_redirect_kept_with_final_url(fetcher):
    doc = await fetcher.fetch("http://example.com/moved", ALLOW)
    assert isinstance(doc, WebDocument)
    assert doc.url == "http://example.com/fees-v2"
    assert doc.requested_url == "http://example.com/moved"
    assert doc.hops == ("http://example.com/moved",)
    assert doc.text == "Fees v2: card replacement is free."


async def test_subdomain_redirect_kept_with_final_url(fetcher):
    doc = await fetcher.fetch("http://example.com/old-fees", ALLOW)
    # the server said https; LoopbackTransport speaks plain http to 127.0.0.1 but the URL is kept
    assert isinstance(doc, WebDocument) and doc.url == "https://docs.example.com/fees"


@pytest.mark.parametrize("url", ["http://example.com.evil.test/fees", "http://evil-example.com/fees"])
async def test_lookalike_hosts_rejected_before_fetch(fetcher, site, url):
    got = await fetcher.fetch(url, ALLOW)
    assert isinstance(got, Dropped) and got.stage == "result"
    assert site.hits == []


async def test_redirect_loop_and_bad_content_dropped(fetcher):
    loop = await fetcher.fetch("http://example.com/loop", ALLOW)
    assert isinstance(loop, Dropped) and "more than 3 redirects" in loop.reason
    binary = await fetcher.fetch("http://example.com/binary", ALLOW)
    assert isinstance(binary, Dropped) and "content type" in binary.reason
    missing = await fetcher.fetch("http://example.com/nope", ALLOW)
    assert isinstance(missing, Dropped) and "HTTP 404" in missing.reason


async def test_oversized_page_dropped(site):
    client = httpx.AsyncClient(transport=LoopbackTransport({h: site.port for h in HOSTS}))
    small = WebFetcher(client, max_bytes=1024)
    site.pages[("example.com", "/big")] = Page("x" * 5000, content_type="text/plain")
    got = await small.fetch("http://example.com/big", ALLOW)
    await small.aclose()
    assert isinstance(got, Dropped) and "larger than 1024" in got.reason


async def test_lookup_enforces_all_three_checks(fetcher, site):
    provider = StaticSearchProvider({
        "example.com": [
            "http://example.com/to-evil",          # check 3 (redirect) drops it
            "http://example.com.evil.test/fees",   # check 2 drops it (search noise, look-alike)
            "http://evil-example.com/fees",        # check 2
            "http://example.com/moved",            # kept, cited by final URL
        ],
    })
    found = await web_lookup("fees", ALLOW, provider, fetcher, max_results=3)
    assert provider.queries == [("fees", "example.com")]  # check 1: one restricted search per host
    assert found.queries == ["fees site:example.com"]
    assert [d.url for d in found.documents] == ["http://example.com/fees-v2"]
    assert sorted((d.url, d.stage) for d in found.dropped) == [
        ("http://evil-example.com/fees", "result"),
        ("http://example.com.evil.test/fees", "result"),
        ("http://example.com/to-evil", "redirect"),
    ]
    assert not any(h[0] != "example.com" for h in site.hits)


async def test_empty_allowlist_searches_nothing(fetcher):
    provider = StaticSearchProvider({"example.com": ["http://example.com/moved"]})
    found = await web_lookup("fees", HostAllowlist([]), provider, fetcher)
    assert found.documents == [] and provider.queries == []


async def test_searxng_provider_against_a_local_json_endpoint(site):
    site.pages[("search.local", "/search?q=fees+site%3Aexample.com&format=json")] = Page(
        '{"results": [{"url": "http://example.com/moved", "title": "Fees", "content": "..."}, {"x": 1}]}',
        content_type="application/json",
    )
    client = httpx.AsyncClient(transport=LoopbackTransport({"search.local": site.port}))
    provider = SearxngProvider("http://search.local/search", client=client)
    res = await provider.search("fees", site="example.com", k=5)
    assert [r.url for r in res] == ["http://example.com/moved"] and res[0].title == "Fees"
    bad = SearxngProvider("http://search.local/missing", client=client)
    with pytest.raises(BackendError, match="web search"):
        await bad.search("fees", site="example.com", k=5)
    await provider.aclose()


# regression (issue 15, item 1): a result on `straße.com` was fetched (from xn--strae-oqa.com, a different
# domain) under an allowlist of `strasse.com`
async def test_an_idna_2008_lookalike_is_never_requested(site):
    site.pages[("strasse.com", "/x")] = Page("<p>the real page</p>")
    site.pages[("xn--strae-oqa.com", "/x")] = Page("<p>someone else's page</p>")
    client = httpx.AsyncClient(transport=LoopbackTransport({"strasse.com": site.port,
                                                             "xn--strae-oqa.com": site.port}))
    fetcher = WebFetcher(client)
    provider = StaticSearchProvider({"strasse.com": ["http://stra\u00dfe.com/x", "http://strasse.com/x"]})
    found = await web_lookup("page", HostAllowlist(["strasse.com"]), provider, fetcher)
    await fetcher.aclose()
    assert [d.url for d in found.documents] == ["http://strasse.com/x"]
    assert [(d.url, d.stage) for d in found.dropped] == [("http://stra\u00dfe.com/x", "result")]
    assert site.hits == [("strasse.com", "/x")]


# regression (issue 15, item 4): httpx builds its own next request from a Location header even with
# follow_redirects=False, and its InvalidURL (not an HTTPError) ended the whole turn
@pytest.mark.parametrize(
    "location",
    ["http:\\\\evil.net\\x", "data:text/html,<p>hi</p>", "http://xn--a.com/", "http://[::1", "http://ex\x7fample.com/"],
)
async def test_a_malformed_redirect_drops_that_page_only(fetcher, site, location):
    site.pages[("example.com", "/bad")] = Page(status=302, location=location)
    got = await fetcher.fetch("http://example.com/bad", ALLOW)
    assert isinstance(got, Dropped) and got.stage in ("redirect", "fetch")
    provider = StaticSearchProvider({"example.com": ["http://example.com/bad", "http://example.com/moved"]})
    found = await web_lookup("fees", ALLOW, provider, fetcher)
    assert [d.url for d in found.documents] == ["http://example.com/fees-v2"]
    assert [d.url for d in found.dropped] == ["http://example.com/bad"]
    assert not any(h[0] != "example.com" for h in site.hits)


# regression (issue 15, item 4): a host sending a few bytes every couple of seconds held a turn for minutes;
# the read timeout never fires, the fetch deadline does
async def test_a_slow_drip_page_is_dropped_at_the_fetch_deadline(site):
    import time

    site.pages[("example.com", "/drip")] = Page("x" * 200, content_type="text/plain", drip_s=0.1)
    fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port}),
                                           timeout=5.0), deadline_s=0.8)
    t0 = time.monotonic()
    got = await fetcher.fetch("http://example.com/drip", ALLOW)
    elapsed = time.monotonic() - t0
    await fetcher.aclose()
    assert isinstance(got, Dropped) and got.stage == "fetch" and "0.8 s" in got.reason
    assert elapsed < 5  # the whole body would take 20 s


async def test_the_lookup_deadline_keeps_what_it_has(site):
    site.pages[("example.com", "/drip")] = Page("x" * 200, content_type="text/plain", drip_s=0.1)
    fetcher = WebFetcher(httpx.AsyncClient(transport=LoopbackTransport({"example.com": site.port})),
                         deadline_s=60)
    provider = StaticSearchProvider({"example.com": ["http://example.com/moved", "http://example.com/drip"]})
    found = await web_lookup("fees", ALLOW, provider, fetcher, deadline_s=1.0)
    await fetcher.aclose()
    assert [d.url for d in found.documents] == ["http://example.com/fees-v2"]
    assert found.stopped and "deadline" in found.stopped


# regression (issue 15, item 5): the user's text reached the search engine with its operators
@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("fee OR site:evil.net", "fee"),
        ('"card fee" -premium (inurl:admin | fees) !g :en', "card fee premium fees"),
        ("What's the fee?", "What's the fee"),
        ("site:evil.net", ""),
    ],
)
def test_plain_query_strips_search_syntax(text, plain):
    assert plain_query(text) == plain


async def test_the_engine_never_sees_user_operators(fetcher):
    provider = StaticSearchProvider({"example.com": ["http://example.com/moved"]})
    found = await web_lookup("fee OR site:evil.net", ALLOW, provider, fetcher)
    assert provider.queries == [("fee", "example.com")]
    assert found.queries == ["fee site:example.com"]
    empty = StaticSearchProvider({"example.com": ["http://example.com/moved"]})
    assert (await web_lookup("site:evil.net", ALLOW, empty, fetcher)).queries == [] and empty.queries == []
