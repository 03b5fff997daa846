"""The /review pages over HTTP on a real server (uvicorn on 127.0.0.1) and a real workspace: sign-in,
sessions and CSRF, error pages, a tampered output, stale pages. The browser flows are in
test_review_browser.py."""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser

import httpx
import pytest
import uvicorn

from skillrag.review import ReviewStore
from skillrag.review.testing import demo_review_workspace
from skillrag.service import workspace_app
from skillrag.service.review import SessionStore
from skillrag.service.testing import free_port, serve_app
from skillrag.workspace import Workspace

TOKEN = "review-token-5b1f"


class _Forms(HTMLParser):
    """Every <form>: its action and the values of its named inputs (hidden ones included)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "fields": {}})
        elif tag in ("input", "textarea") and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""
            self._textarea = a["name"] if tag == "textarea" else None

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea is not None:
            self.forms[-1]["fields"][self._textarea] += data


def forms_of(html: str) -> dict[str, dict[str, str]]:
    p = _Forms()
    p.feed(html)
    return {f["action"]: f["fields"] for f in p.forms}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("review-http") / "ws"
    demo_review_workspace(root)
    return root


@pytest.fixture
def ws(built, tmp_path) -> Workspace:
    shutil.copytree(built, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


@contextmanager
def site(ws: Workspace, token: str | None = TOKEN) -> Iterator[httpx.Client]:
    # a browser sends Origin on every form POST; the review pages refuse a POST without Origin and Referer
    with serve_app(workspace_app(ws, token=token)) as url, httpx.Client(base_url=url, timeout=30,
                                                                       headers={"Origin": url}) as c:
        yield c


def sign_in(c: httpx.Client, name: str = "Dana", token: str | None = TOKEN) -> None:
    data = {"reviewer": name, "next": "/review"}
    if token is not None:
        data["token"] = token
    r = c.post("/review/-/login", data=data)
    assert r.status_code == 303, r.text


def case_form(c: httpx.Client, case_id: str, action: str) -> dict[str, str]:
    r = c.get(f"/review/{case_id}")
    assert r.status_code == 200
    return forms_of(r.text)[f"/review/{case_id}/{action}"]


def test_pages_need_sign_in_and_the_token_never_rides_in_a_url(ws):
    with site(ws) as c:
        r = c.get("/review/hp-001")
        assert r.status_code == 303 and r.headers["location"] == "/review/-/login?next=%2Freview%2Fhp-001"
        page = c.get(r.headers["location"]).text
        assert 'type="password"' in page and 'name="token"' in page and 'method="post"' in page
        r = c.post("/review/-/login", data={"reviewer": "Dana", "token": "wrong", "next": "/review/hp-001"})
        assert r.status_code == 401 and "wrong token" in r.text and "set-cookie" not in r.headers
        assert c.get("/review", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 303  # pages: session only
        r = c.post("/review/-/login", data={"reviewer": "Dana", "token": TOKEN, "next": "/review/hp-001"})
        assert r.status_code == 303 and r.headers["location"] == "/review/hp-001"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/review" in cookie
        assert TOKEN not in cookie and TOKEN not in r.headers["location"]
        listing = c.get("/review")
        assert listing.status_code == 200 and "Signed in as <strong>Dana</strong>" in listing.text
        assert TOKEN not in listing.text
        # the run page names the search the run used (from record.json)
        assert "<dt>Search</dt><dd>direct / bm25</dd>" in c.get("/review/hp-001").text
        # the session cookie is not a key to the API: that still needs the bearer token
        assert c.get("/skills").status_code == 401
        assert c.get("/skills", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_access_log_never_holds_the_token(ws):
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    port = free_port()
    config = uvicorn.Config(workspace_app(ws, token=TOKEN), host="127.0.0.1", port=port, log_level="info",
                            access_log=True)
    handler = Keep()
    logging.getLogger("uvicorn.access").addHandler(handler)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.02)
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, headers={"Origin": url}) as c:
            c.get("/review")
            sign_in(c)
            c.get("/review/hp-001")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        logging.getLogger("uvicorn.access").removeHandler(handler)
    assert any("/review/-/login" in ln for ln in lines) and any("/review/hp-001" in ln for ln in lines)
    assert not any(TOKEN in ln for ln in lines)


def test_without_a_token_the_sign_in_asks_only_for_a_name(ws):
    with site(ws, token=None) as c:
        page = c.get("/review/-/login").text
        assert 'name="token"' not in page and 'name="reviewer"' in page
        r = c.post("/review/-/login", data={"reviewer": "  ", "next": "/review"})
        assert r.status_code == 400 and "reviewer: must not be empty" in r.text
        sign_in(c, "Lee", token=None)
        assert "Signed in as <strong>Lee</strong>" in c.get("/review").text


@pytest.mark.parametrize("nxt", ["https://evil.example/x", "//evil.example/review", "/elsewhere", "/review/-/logout",
                                 "/review\\..\\x"])
def test_sign_in_never_redirects_off_the_review_pages(ws, nxt):
    with site(ws) as c:
        r = c.post("/review/-/login", data={"reviewer": "Dana", "token": TOKEN, "next": nxt})
        assert r.status_code == 303 and r.headers["location"] == "/review"


def test_list_filters(ws):
    ReviewStore(ws).approve("hp-002", _sha(ws, "hp-002"), "Dana", version=0)
    with site(ws) as c:
        sign_in(c)

        def rows(query: str) -> list[str]:
            html = c.get("/review" + query).text
            return [cid for cid in ("hp-001", "hp-002", "hp-003") if f'href="/review/{cid}"' in html]

        assert rows("") == ["hp-001", "hp-002", "hp-003"]
        assert rows("?q=002") == ["hp-002"]
        assert rows("?state=approved") == ["hp-002"]
        assert rows("?state=pending&harness=extractive") == ["hp-001", "hp-003"]
        assert rows("?status=failed") == [] and "No run matches" in c.get("/review?status=failed").text
        assert rows("?skill=cs-guidance&q=HP-00") == ["hp-001", "hp-002", "hp-003"]


def _sha(ws: Workspace, case_id: str) -> str:
    import hashlib

    return hashlib.sha256((ws.runs_dir / case_id / "output.json").read_bytes()).hexdigest()


def test_actions_need_the_session_form_token_and_the_same_origin(ws):
    store = ReviewStore(ws)
    with site(ws) as c:
        sign_in(c)
        fields = case_form(c, "hp-001", "approve")
        assert set(fields) == {"csrf", "output_sha256", "version", "comment"}
        bad = [({**fields, "csrf": ""}, {}), ({**fields, "csrf": "x" + fields["csrf"]}, {}),
               (fields, {"Origin": "http://evil.example"}), (fields, {"Origin": "null"}),
               (fields, {"Origin": "http://evil.example", "Referer": f"{c.base_url}/review/hp-001"})]
        for data, headers in bad:
            r = c.post("/review/hp-001/approve", data=data, headers=headers)
            assert r.status_code == 403 and "nothing was changed" in r.text
        with httpx.Client(base_url=str(c.base_url)) as stranger:  # no session cookie
            assert stranger.post("/review/hp-001/approve", data=fields).status_code == 403
        # regression (review finding 2): the session cookie and form token with NEITHER Origin nor Referer
        # was accepted, though every action needs a same-origin Origin/Referer
        with httpx.Client(base_url=str(c.base_url), cookies=c.cookies) as headless:
            for headers in ({}, {"Referer": "http://evil.example/page"}):
                r = headless.post("/review/hp-001/approve", data=fields, headers=headers)
                assert r.status_code == 403 and "nothing was changed" in r.text
            r = headless.post("/review/-/login", data={"reviewer": "Eve", "token": TOKEN})
            assert r.status_code == 403
        assert store.actions() == []
        r = c.post("/review/hp-001/approve", data={**fields, "comment": "all quotes check out"},
                   headers={"Origin": str(c.base_url)})
        assert r.status_code == 303 and r.headers["location"] == "/review/hp-001?done=approve#review"
        [act] = store.actions()
        assert (act.case_id, act.action, act.reviewer, act.comment) == ("hp-001", "approve", "Dana",
                                                                         "all quotes check out")
        # a same-origin Referer without Origin is enough (the check falls back to it)
        with httpx.Client(base_url=str(c.base_url), cookies=c.cookies) as referred:
            r = referred.post("/review/-/logout", data={"csrf": fields["csrf"]},
                              headers={"Referer": f"{c.base_url}/review/hp-001"})
            assert r.status_code == 303
        r = c.post("/review/-/login", data={"reviewer": "Eve", "token": TOKEN}, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403


def test_bad_input_is_shown_again_with_the_reason(ws):
    with site(ws) as c:
        sign_in(c)
        fields = case_form(c, "hp-001", "reject")
        r = c.post("/review/hp-001/reject", data={**fields, "reason": "   "})
        assert r.status_code == 400 and 'role="alert"' in r.text and "reason: must not be empty" in r.text
        fields = case_form(c, "hp-001", "edit")
        r = c.post("/review/hp-001/edit", data=fields)  # the agent's text, unchanged
        assert r.status_code == 400 and "unchanged" in r.text
        r = c.post("/review/hp-001/edit", data={**fields, "guidance": "1. Shorter plan.", "version": "x"})
        assert r.status_code == 400 and "version" in r.text
        assert "1. Shorter plan." in r.text  # the reviewer's text is not lost
        assert ReviewStore(ws).actions() == []


def test_stale_pages_and_rerun_cases_are_refused(ws):
    with site(ws) as c:
        sign_in(c)
        approve = case_form(c, "hp-001", "approve")
        edit = case_form(c, "hp-001", "edit")
        assert c.post("/review/hp-001/edit", data={**edit, "guidance": "1. One plan."}).status_code == 303
        r = c.post("/review/hp-001/approve", data=approve)  # still says version 0
        assert r.status_code == 409 and "latest is version 1" in r.text
        r = c.post("/review/hp-001/edit", data={**edit, "guidance": "1. Another plan."})
        assert r.status_code == 409
        # the case is run again: its new output is not the one on the page
        out = ws.runs_dir / "hp-002" / "output.json"
        reject = case_form(c, "hp-002", "reject")
        out.write_text(out.read_text() + "\n")
        r = c.post("/review/hp-002/reject", data={**reject, "reason": "too long"})
        assert r.status_code == 409 and "run again" in r.text
        assert [a.action for a in ReviewStore(ws).actions()] == ["edit"]


def test_error_pages(ws):
    with site(ws) as c:
        sign_in(c)
        r = c.get("/review/hp-999")
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
        assert "<h1>No such run</h1>" in r.text and "hp-999" in r.text
        r = c.get("/review/bad%20id")
        assert r.status_code == 400 and "<h1>Not a case id</h1>" in r.text and "is not a valid case id" in r.text
        r = c.post("/review/hp-999/approve", data={"csrf": forms_of(c.get("/review/hp-001").text)[
            "/review/hp-001/approve"]["csrf"]})
        assert r.status_code == 404


def test_a_tampered_output_is_shown_failing_and_cannot_be_approved(ws):
    out = ws.runs_dir / "hp-003" / "output.json"
    data = json.loads(out.read_text())
    data["snippets"][0]["text"] = "This sentence is in no article of the help center."
    out.write_text(json.dumps(data))
    with site(ws) as c:
        sign_in(c)
        r = c.get("/review/hp-003")
        assert r.status_code == 200 and "Fails the evidence contract" in r.text
        assert "snippets[0].text: not a verbatim substring" in r.text
        forms = forms_of(r.text)
        assert "/review/hp-003/approve" not in forms and "/review/hp-003/edit" not in forms
        reject = forms["/review/hp-003/reject"]
        r = c.post("/review/hp-003/approve", data={**reject, "comment": ""})
        assert r.status_code == 400 and "fails the evidence contract" in r.text
        assert c.post("/review/hp-003/reject", data={**reject, "reason": "tampered"}).status_code == 303
        out.write_text("{ not json")
        r = c.get("/review/hp-003")
        assert r.status_code == 200 and "Fails the evidence contract" in r.text and "not JSON" in r.text
    assert [a.action for a in ReviewStore(ws).actions()] == ["reject"]


def test_security_headers_and_sign_out(ws):
    with site(ws) as c:
        sign_in(c)
        r = c.get("/review/hp-001")
        csp = r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert "script-src 'self';" in csp and "unsafe" not in csp  # the page's own script file, nothing inline
        assert re.findall(r"<script[^>]*>", r.text) == ['<script src="/review/-/static/review.js" defer>']
        assert r.headers["cache-control"] == "no-store" and r.headers["x-content-type-options"] == "nosniff"
        assert c.get("/review/-/static/review.css").headers["content-type"].startswith("text/css")
        assert c.get("/review/-/static/review.js").headers["content-type"].startswith("text/javascript")
        assert c.get("/review/-/static/favicon.svg").headers["content-type"].startswith("image/svg+xml")
        assert c.get("/review/-/static/nothing.txt").status_code == 404
        csrf = forms_of(r.text)["/review/-/logout"]["csrf"]
        old = c.cookies.get("skillrag_review")
        r = c.post("/review/-/logout", data={"csrf": csrf})
        assert r.status_code == 303 and 'skillrag_review=""' in r.headers["set-cookie"]
        assert c.get("/review").status_code == 303
        c.cookies.set("skillrag_review", old, path="/review")  # the old session id is dead on the server
        assert c.get("/review").status_code == 303


def test_review_routes_stay_out_of_the_api_schema(ws):
    app = workspace_app(ws)
    paths = set(app.openapi()["paths"])
    assert not any(p.startswith("/review") for p in paths) and "/chat" in paths


def test_sessions_expire_and_are_capped():
    now = [1000.0]
    store = SessionStore(ttl_s=0.2, max_sessions=2, clock=lambda: now[0])
    a, sa = store.new("Dana")
    assert store.get(a) == sa and sa.csrf and sa.csrf != a and len(a) >= 43  # 256 random bits
    b, _ = store.new("Lee")
    c, _ = store.new("Eve")  # the oldest session makes room
    assert store.get(a) is None and store.get(b) is not None and store.get(c) is not None
    now[0] += 0.19
    assert store.get(b) is not None  # not yet expired
    now[0] += 0.02
    assert store.get(b) is None and store.get(None) is None and store.get("") is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# regression (issue 21, class 5): token sign-in had no throttle: any number of guesses, as fast as the server answers
async def test_wrong_tokens_are_throttled_per_client(tmp_path):
    from fastapi import FastAPI

    from skillrag.service.review import LoginThrottle, review_router

    clock = FakeClock()
    app = FastAPI()
    app.include_router(review_router(Workspace.init(tmp_path / "ws"), token=TOKEN,
                                     throttle=LoginThrottle(max_failures=3, window_s=60, clock=clock)))

    def client(address: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app, client=(address, 40000)),
                                 base_url="http://review.test", headers={"Origin": "http://review.test"})

    async def attempt(c: httpx.AsyncClient, token: str) -> httpx.Response:
        return await c.post("/review/-/login", data={"reviewer": "Dana", "token": token, "next": "/review"})

    async with client("10.0.0.1") as a, client("10.0.0.2") as b:
        assert [(await attempt(a, f"guess-{i}")).status_code for i in range(3)] == [401, 401, 401]
        clock.now += 10
        locked = await attempt(a, TOKEN)  # even the right token: it is not compared while locked out
        assert locked.status_code == 429 and "set-cookie" not in locked.headers
        assert locked.headers["retry-after"] == "50" and "try again in 50 s" in locked.text
        assert (await attempt(b, TOKEN)).status_code == 303  # another client is not affected
        clock.now += 50  # the first failure is now 60 s old
        assert (await attempt(a, TOKEN)).status_code == 303
        # a right token cleared the count: three more guesses are needed to lock it again
        assert [(await attempt(a, "x")).status_code for _ in range(4)] == [401, 401, 401, 429]


def test_the_served_review_pages_are_throttled(ws):
    with site(ws) as c:
        codes = [c.post("/review/-/login", data={"reviewer": "Dana", "token": "nope", "next": "/review"}).status_code
                 for _ in range(6)]
    assert codes == [401] * 5 + [429]


def _rows(c: httpx.Client, query: str = "") -> list[str]:
    return re.findall(r'<th scope="row" class="case"><a href="/review/([^"]+)">', c.get("/review" + query).text)


def test_the_list_sorts_and_filters_on_its_columns(ws):
    store = ReviewStore(ws)
    store.approve("hp-002", _sha(ws, "hp-002"), "Lee", version=0)
    edited = json.loads((ws.runs_dir / "hp-003" / "output.json").read_text())["guidance"] + (
        "\n16. Turn Airplane Mode off with `toggle_airplane_mode()`.")
    store.edit("hp-003", _sha(ws, "hp-003"), "Dana", edited, base_version=0)
    with site(ws) as c:
        sign_in(c)
        page = c.get("/review").text
        for heading in ("Contact reason", "Guidance", "Snippets", "Warnings", "Reviewer"):
            assert f">{heading}" in page
        assert "Bookcase arrived with a cracked side panel" in page and "15 steps" in page
        assert _rows(c, "?sort=reason&order=asc") == ["hp-001", "hp-003", "hp-002"]  # Bookcase, Price, Wants
        assert _rows(c, "?sort=reason&order=desc") == ["hp-002", "hp-003", "hp-001"]
        assert _rows(c, "?sort=warnings")[0] == "hp-003"  # the one with a warning, first
        assert _rows(c, "?warnings=with") == ["hp-003"] and _rows(c, "?warnings=none") == ["hp-002", "hp-001"]
        assert _rows(c, "?reviewer=Lee") == ["hp-002"] and _rows(c, "?reviewer=-") == ["hp-001"]
        assert _rows(c, "?q=bookcase") == ["hp-001"]  # the contact reason
        assert _rows(c, "?q=concealed+damage") == ["hp-001"]  # the guidance's summary
        assert _rows(c, "?sort=nonsense") == _rows(c)  # an unknown column sorts by date
        # a column heading's link keeps the filters and turns the order round
        page = c.get("/review?state=pending&sort=reason&order=asc").text
        assert 'href="?state=pending&amp;sort=reason&amp;order=desc"' in page and 'aria-sort="ascending"' in page


def test_adding_evidence_over_http(ws):
    from skillrag.corpus import ArticleStore

    out = json.loads((ws.runs_dir / "hp-001" / "output.json").read_text())
    body = ArticleStore(ws).get("kb-damage-claim-steps").body
    line = next(ln for ln in body.split("\n") if len(ln) > 40 and all(ln not in s["text"] for s in out["snippets"]))
    start = body.index(line)
    with site(ws) as c:
        sign_in(c)
        page = c.get("/review/hp-001?article=kb-damage-claim-steps").text
        assert '<details class="action" id="add-evidence" open>' in page
        assert 'name="article" list="cited-articles" required value="kb-damage-claim-steps"' in page
        fields = forms_of(page)["/review/hp-001/evidence"]
        assert set(fields) == {"csrf", "output_sha256", "version", "article", "start", "end", "passage", "why",
                               "comment"}
        r = c.post("/review/hp-001/evidence", data={**fields, "passage": "Claims are paid in gold bars.",
                                                    "why": "step 2"})
        assert r.status_code == 400 and "evidence contract refused this passage" in r.text
        assert "not a verbatim substring of article &#39;kb-damage-claim-steps&#39;" in r.text
        assert "Claims are paid in gold bars." in r.text  # the reviewer's input is not lost
        r = c.post("/review/hp-001/evidence", data={**fields, "start": "x", "end": "9", "why": "step 2"})
        assert r.status_code == 400 and "start: must be a whole number" in r.text
        assert ReviewStore(ws).actions() == []
        r = c.post("/review/hp-001/evidence", data={**fields, "start": str(start), "end": str(start + len(line)),
                                                    "why": "Backs step 3."}, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403
        r = c.post("/review/hp-001/evidence", data={**fields, "start": str(start), "end": str(start + len(line)),
                                                    "why": "Backs step 3."})
        assert r.status_code == 303 and r.headers["location"] == "/review/hp-001?done=evidence#review"
        page = c.get("/review/hp-001?done=evidence").text
        assert "Added as snippet 16 of guidance version 1" in page and "added by Dana in version 1" in page
        assert 'id="mark-16"' in page
    [act] = ReviewStore(ws).actions()
    assert (act.action, act.version) == ("edit", 1)


def test_an_approval_with_warnings_must_confirm_them(ws):
    out = json.loads((ws.runs_dir / "hp-001" / "output.json").read_text())
    with site(ws) as c:
        sign_in(c)
        edit = case_form(c, "hp-001", "edit")
        guidance = out["guidance"] + "\n16. If Airplane Mode is ON, turn it off with `toggle_airplane_mode()`."
        assert c.post("/review/hp-001/edit", data={**edit, "guidance": guidance}).status_code == 303
        page = c.get("/review/hp-001").text
        assert 'id="approval-warnings"' in page and 'href="#v1-step-16">Step 16</a>' in page
        assert "the guidance names <code>toggle_airplane_mode</code> but no snippet contains it" in page
        fields = forms_of(page)["/review/hp-001/approve"]
        assert "confirm" in fields
        r = c.post("/review/hp-001/approve", data={k: v for k, v in fields.items() if k != "confirm"})
        assert r.status_code == 400 and "tick that you have checked them" in r.text
        assert [a.action for a in ReviewStore(ws).actions()] == ["edit"]
        assert c.post("/review/hp-001/approve", data={**fields, "confirm": "yes"}).status_code == 303
    assert [a.action for a in ReviewStore(ws).actions()] == ["edit", "approve"]


def test_article_and_guidance_markup_never_becomes_page_markup(ws):
    import sqlite3

    from skillrag.corpus import ArticleStore, content_hash

    aid = json.loads((ws.runs_dir / "hp-001" / "output.json").read_text())["snippets"][0]["source_article"]
    attack = ('\n\n<script>alert(1)</script>\n<img src=x onerror="alert(2)"> [click](javascript:alert(3)) '
              '![pixel](http://tracker.example/p.gif) <a href="http://evil.example" style="x">a</a>\n')
    body = ArticleStore(ws).get(aid).body + attack
    conn = sqlite3.connect(ws.store_path)
    with conn:
        conn.execute("UPDATE articles SET body = ?, content_hash = ? WHERE id = ?", (body, content_hash(body), aid))
    conn.close()
    ReviewStore(ws).edit("hp-001", _sha(ws, "hp-001"), "Dana",
                         '1. Call <img src=y onerror="alert(4)"> `verify_identity` [x](javascript:alert(5)).',
                         base_version=0)
    with site(ws) as c:
        sign_in(c)
        page = c.get("/review/hp-001").text
    tags: list[tuple[str, dict]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append((tag, dict(attrs)))

    Tags().feed(page)
    assert [a for t, a in tags if t == "script"] == [{"src": "/review/-/static/review.js", "defer": None}]
    assert not any(t in ("img", "iframe", "object", "embed", "style") for t, _ in tags)
    assert not any(k.startswith("on") or k == "style" for _, a in tags for k in a)
    assert not any(str(a.get("href", "")).strip().lower().startswith(("javascript:", "data:")) for _, a in tags)
    assert [a["src"] for _, a in tags if "src" in a] == ["/review/-/static/review.js"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as the text it is
    assert "<code>verify_identity</code>" in page  # guidance Markdown is rendered


def test_the_run_page_shows_its_trace_and_its_judges(ws):
    from skillrag.evaluation.judges import JudgeResult, JudgeVote
    from skillrag.evaluation.online import output_sha256, write_scores

    folder = ws.runs_dir / "hp-001"
    record = json.loads((folder / "record.json").read_text())
    (folder / "record.json").write_text(json.dumps({**record, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}))
    verdict = JudgeResult(judge="correctness", decision=True, votes=[JudgeVote(verdict="accept")], split=False)
    write_scores(folder, {"correctness": verdict}, source="service", judge_model="openai:judge",
                 output_sha256=output_sha256(folder))
    with site(ws) as c:
        sign_in(c)
        page = c.get("/review/hp-001").text
    assert '<dd id="trace"><code title="OpenTelemetry trace id">4bf92f3577b34da6a3ce929d0e0e4736</code>' in page
    assert "correctness: accept" in page and "service, openai:judge" in page and "earlier output" not in page
    # with a viewer configured the id links to it; scores of a replaced output say so
    cfg = ws.config_path.read_text(encoding="utf-8")
    ws.config_path.write_text(cfg.replace("trace_url: null", "trace_url: http://127.0.0.1:16686/trace/{trace_id}"))
    write_scores(folder, {"correctness": verdict}, source="service", judge_model="openai:judge", output_sha256="0" * 64)
    with site(Workspace.open(ws.root)) as c:
        sign_in(c)
        page = c.get("/review/hp-001").text
    assert '<a href="http://127.0.0.1:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736" rel="noreferrer">' in page
    assert "for an earlier output, not the one shown" in page
