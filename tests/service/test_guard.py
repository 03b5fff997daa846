"""RequestGuard: the Host check without a token, the token before the body, the body-size limit.

Whether a body is read is seen at the ASGI level: the app is called with a ``receive`` that counts the
body chunks it hands out, so "refused before reading" is a count of 0, not a memory measurement. The
limits are also checked through a real uvicorn server.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from skillrag.service.testing import serve_app
from skillrag.workspace.config import ServiceSettings

TOKEN = "guard-token-7c2"
CHAT = json.dumps({"question": "card fee?", "thread_id": "g1"}).encode()


async def asgi(app: Any, method: str, path: str, *, headers: dict[str, str] | None = None,
               chunks: list[bytes] | None = None, server: tuple[str, int] = ("127.0.0.1", 8765)
               ) -> tuple[int, dict[str, Any] | None, int]:
    """``(status, JSON body, body chunks the app pulled)`` of one request sent straight to ``app``."""
    chunks = chunks if chunks is not None else [b""]
    queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if not queue:
            return {"type": "http.disconnect"}
        pulled += 1
        return queue.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    hdrs = {"host": f"{server[0]}:{server[1]}", **{k.lower(): v for k, v in (headers or {}).items()}}
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "server": server,
             "client": ("127.0.0.1", 50000), "headers": [(k.encode(), v.encode()) for k, v in hdrs.items()]}
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    return status, data, pulled


# regression (issue 21, class 5): a 300 MB unauthenticated body was read whole before the 401
async def test_a_wrong_token_is_refused_before_any_byte_of_the_body_is_read(make_app):
    app = make_app(token=TOKEN)
    big = {"content-length": str(300_000_000), "content-type": "application/json"}
    for auth in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}):
        status, data, pulled = await asgi(app, "POST", "/chat", headers={**big, **auth}, chunks=[b"x" * 65536] * 4)
        assert (status, data["kind"], pulled) == (401, "Unauthorized", 0)


async def test_an_authorized_body_over_the_limit_is_refused_from_its_length(make_app):
    app = make_app(token=TOKEN)
    status, data, pulled = await asgi(app, "POST", "/chat", chunks=[b"x" * 65536] * 4, headers={
        "authorization": f"Bearer {TOKEN}", "content-length": str(300_000_000), "content-type": "application/json"})
    assert (status, data["kind"], pulled) == (413, "PayloadTooLarge", 0)
    assert "service.max_body_bytes" in data["error"]


async def test_a_body_without_a_length_is_cut_off_once_it_passes_the_limit(make_app):
    app = make_app(settings=ServiceSettings(max_body_bytes=4096))
    status, data, pulled = await asgi(app, "POST", "/chat", headers={"content-type": "application/json"},
                                      chunks=[b" " * 1024] * 50)
    assert (status, data["kind"]) == (413, "PayloadTooLarge")
    assert pulled == 5  # the fifth chunk passes 4096 bytes: nothing after it is read
    status, data, _ = await asgi(app, "POST", "/chat", headers={"content-type": "application/json"},
                                 chunks=[CHAT[:10], CHAT[10:]])
    assert status == 200  # a small streamed body still works


async def test_the_review_sign_in_form_has_the_same_limit(make_app, tmp_path):
    from skillrag.workspace import Workspace

    app = make_app(review=Workspace.init(tmp_path / "ws"), settings=ServiceSettings(max_body_bytes=2048))
    form = {"content-type": "application/x-www-form-urlencoded", "origin": "http://127.0.0.1:8765"}
    status, data, _ = await asgi(app, "POST", "/review/-/login", headers=form, chunks=[b"reviewer=" + b"a" * 1024] * 4)
    assert (status, data["kind"]) == (413, "PayloadTooLarge")


def test_a_real_server_answers_413_for_a_big_body(make_app):
    with serve_app(make_app(settings=ServiceSettings(max_body_bytes=4096))) as url, httpx.Client(base_url=url) as c:
        r = c.post("/chat", content=b" " * 10_000, headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["kind"] == "PayloadTooLarge"
        assert c.post("/chat", content=CHAT, headers={"content-type": "application/json"}).status_code == 200


# regression (issue 21, class 5): with no token the Host header was not checked, so a page on a rebinding
# domain (evil.test resolving to 127.0.0.1) could drive the API from the user's browser
def test_without_a_token_only_loopback_hosts_on_the_served_port_are_answered(make_app):
    with serve_app(make_app()) as url, httpx.Client(base_url=url) as c:
        port = int(url.rsplit(":", 1)[1])
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}", f"[::1]:{port}"):
            assert c.get("/skills", headers={"Host": host}).status_code == 200, host
        for host in (f"evil.test:{port}", "evil.test", f"127.0.0.1:{port + 1}", "localhost", f"127.0.0.1.evil.test:{port}",
                     f"localhost:{port}x", ""):
            r = c.get("/skills", headers={"Host": host})
            assert r.status_code == 400 and r.json()["kind"] == "HostNotAllowed", host
            assert "service.allowed_hosts" in r.json()["error"]
        r = c.post("/chat", json={"question": "card fee?", "thread_id": "h1"}, headers={"Host": f"evil.test:{port}"})
        assert r.status_code == 400


def test_allowed_hosts_add_names_and_a_token_lifts_the_host_check(make_app):
    settings = ServiceSettings(allowed_hosts=["svc.internal", "proxy.example:8443"])
    with serve_app(make_app(settings=settings)) as url, httpx.Client(base_url=url) as c:
        assert c.get("/skills", headers={"Host": "svc.internal:1234"}).status_code == 200
        assert c.get("/skills", headers={"Host": "proxy.example:8443"}).status_code == 200
        assert c.get("/skills", headers={"Host": "proxy.example:9999"}).status_code == 400
    with serve_app(make_app(token=TOKEN)) as url, httpx.Client(base_url=url) as c:
        auth = {"Authorization": f"Bearer {TOKEN}", "Host": "api.example.org"}
        assert c.get("/skills", headers=auth).status_code == 200  # behind a proxy, the token is the check


@pytest.mark.parametrize(("value", "parsed"), [("127.0.0.1:80", ("127.0.0.1", 80)), ("[::1]:8765", ("[::1]", 8765)),
                                               ("Example.ORG", ("example.org", None)), ("a:b", ("a", -1))])
def test_host_values_are_split_into_name_and_port(value, parsed):
    from skillrag.service.app import _split_host

    assert _split_host(value) == parsed
