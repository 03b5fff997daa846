"""The HTTP app under a real uvicorn server on 127.0.0.1: routes, SSE chat, skills, threads, auth, runs."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from skillrag.service.testing import serve_app

from .conftest import ARTICLES, events_of, first, parse_sse


def chat(client, **body):
    return client.post("/chat", json=body)


def test_healthz_and_skills(client):
    assert client.get("/healthz").json() == {"status": "ok", "skills": 2}
    skills = client.get("/skills").json()
    assert [s["name"] for s in skills] == ["cards", "loans"]
    assert skills[0]["web_mode"] == "fallback" and skills[0]["allowed_sources"] == ["cards"]


def test_unknown_slug_is_400_not_a_fallback(client, threads):
    r = chat(client, question="/retirement-planning what now?", thread_id="t-1")
    assert r.status_code == 400
    assert r.json()["kind"] == "SkillNotFound" and "retirement-planning" in r.json()["error"]
    r = chat(client, question="what now?", thread_id="t-1", skill="nope")
    assert r.status_code == 400 and r.json()["kind"] == "SkillNotFound"
    assert threads.keys() == []  # nothing was answered or stored


@pytest.mark.parametrize(
    "body",
    [
        {"question": "hi", "thread_id": "t-1::cards"},  # cannot address a skill thread directly
        {"question": "", "thread_id": "t-1"},
        {"question": "/cards   ", "thread_id": "t-1"},
        {"question": "hi", "thread_id": "t-1", "model": "openai:gpt-4.1"},  # not in allowed_models
        {"question": "hi", "thread_id": "t-1", "extra": 1},
    ],
)
def test_bad_chat_requests_are_400_with_the_error_body(client, body):
    r = chat(client, **body)
    assert r.status_code == 400, r.text
    assert set(r.json()) == {"error", "kind"} and r.json()["error"]


# regression (issue 15, item 6): each of these was a silent plain chat with 200
@pytest.mark.parametrize("question", ["/nosuch, card fee", "/unknown? what is the card fee", "/-x", "/cards, fee",
                                      "/ cards fee"])
def test_a_malformed_or_unknown_slug_is_always_400(client, threads, question):
    for extra in ({}, {"skill": "cards"}):
        r = chat(client, question=question, thread_id="slug-1", **extra)
        assert r.status_code == 400, r.text
        assert r.json()["kind"] == "SkillNotFound"
    assert threads.keys() == []


# regression (issue 15, item 7): validation errors were FastAPI's 422 `detail` list and an unparsable body
# `{"detail": ...}`; every error is now the documented `{error, kind}`
def test_every_4xx_has_the_documented_body(client):
    cases = [
        (client.post("/chat", content=b"{not json", headers={"Content-Type": "application/json"}), 400,
         "ValidationError"),
        (client.post("/chat", json={"question": "hi"}), 400, "ValidationError"),
        (client.post("/chat", json={"question": "hi", "thread_id": "t", "web_search": "yes"}), 400,
         "ValidationError"),
        (client.post("/runs", json=[1, 2]), 400, "ValidationError"),
        (client.get("/runs/not-a-run-id"), 400, "ValidationError"),
        (client.get("/no/such/route"), 404, "NotFound"),
        (client.put("/skills"), 405, "MethodNotAllowed"),
    ]
    for r, status, kind in cases:
        assert r.status_code == status, (r.request.url, r.text)
        body = r.json()
        assert set(body) == {"error", "kind"} and body["kind"] == kind, body
        assert "detail" not in body and "\n" not in body["error"]
    assert "not valid JSON" in cases[0][0].json()["error"]
    assert cases[1][0].json()["error"].startswith("thread_id:")


def test_slug_selects_skill_and_extractive_answer_quotes_verified_snippets(client):
    ev = events_of(chat(client, question="/cards how do I freeze a lost card?", thread_id="t-1"))
    names = [n for n, _ in ev]
    assert names[0] == "start" and names[-1] == "done"
    assert {"retrieval", "tool_call", "text"} <= set(names)
    start, done = first(ev, "start"), first(ev, "done")
    assert start["question"] == "how do I freeze a lost card?" and start["thread_key"] == "t-1::cards"
    assert first(ev, "retrieval")["source_tags"] == ["cards"]
    assert done["status"] == "ok" and done["skill"] == "cards" and done["mode"] == "extractive"
    text = "".join(d["delta"] for n, d in ev if n == "text")
    assert "extractive" in text
    bodies = {a.id: a.body for a in ARTICLES}
    assert done["citations"], "expected at least one quote"
    for c in done["citations"]:
        assert c["kind"] == "article" and c["source"].startswith("card_")  # only the skill's sources
        assert bodies[c["source"]][c["start"]:c["end"]] == c["snippet"]
        assert c["snippet"] in text
    assert any("freeze the card" in c["snippet"] for c in done["citations"])


def test_explicit_skill_beats_slug(client):
    ev = events_of(chat(client, question="/loans how do I freeze a lost card?", thread_id="t-2", skill="cards"))
    done = first(ev, "done")
    assert done["skill"] == "cards" and done["thread_key"] == "t-2::cards"
    assert first(ev, "retrieval")["source_tags"] == ["cards"]
    assert first(ev, "start")["question"] == "how do I freeze a lost card?"


def test_same_thread_id_different_skills_never_share_history(client, threads):
    tid = "shared-7"
    events_of(chat(client, question="how do I freeze a lost card?", thread_id=tid, skill="cards"))
    events_of(chat(client, question="can a personal loan be repaid early?", thread_id=tid, skill="loans"))
    events_of(chat(client, question="what are premium fees?", thread_id=tid))
    # follow-ups: each is condensed against its own thread only
    c = first(events_of(chat(client, question="and how long?", thread_id=tid, skill="cards")), "start")
    lo = first(events_of(chat(client, question="and how long?", thread_id=tid, skill="loans")), "start")
    pl = first(events_of(chat(client, question="and how long?", thread_id=tid)), "start")
    assert "freeze" in c["condensed"] and "loan" not in c["condensed"] and "premium" not in c["condensed"]
    assert "loan" in lo["condensed"] and "freeze" not in lo["condensed"] and "premium" not in lo["condensed"]
    assert "premium" in pl["condensed"] and "freeze" not in pl["condensed"] and "loan" not in pl["condensed"]
    assert [t.question for t in threads.history(f"{tid}::cards")] == ["how do I freeze a lost card?", "and how long?"]
    assert [t.question for t in threads.history(f"{tid}::loans")] == ["can a personal loan be repaid early?",
                                                                       "and how long?"]
    assert [t.question for t in threads.history(tid)] == ["what are premium fees?", "and how long?"]
    assert all(t.skill is None for t in threads.history(tid))


def test_twenty_concurrent_chats_no_cross_thread_leakage(server, threads):
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
             "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]

    async def one(client, i):
        skill = ["cards", "loans", None][i % 3]
        body = {"question": f"{words[i]} card loan fee", "thread_id": f"c{i}"}
        if skill:
            body["skill"] = skill
        first_turn = events_of(await client.post("/chat", json=body))
        body["question"] = "and then?"
        follow = events_of(await client.post("/chat", json=body))
        return i, skill, first_turn, follow

    async def main():
        async with httpx.AsyncClient(base_url=server, timeout=60) as client:
            return await asyncio.gather(*(one(client, i) for i in range(20)))

    t0 = time.perf_counter()
    results = asyncio.run(main())
    elapsed = time.perf_counter() - t0
    assert len(results) == 20
    for i, skill, a, b in results:
        key = f"c{i}::{skill}" if skill else f"c{i}"
        for ev in (a, b):
            done = first(ev, "done")
            assert done["status"] == "ok" and done["thread_key"] == key and done["skill"] == skill
        condensed = first(b, "start")["condensed"]
        assert words[i] in condensed
        assert not any(w in condensed.split() for j, w in enumerate(words) if j != i)
        hist = threads.history(key)
        assert [t.question for t in hist] == [f"{words[i]} card loan fee", "and then?"]
    assert len(threads.keys()) == 20
    print(f"20 concurrent two-turn chats in {elapsed:.2f} s")


def test_articles_route(client):
    r = client.get("/articles/card_fees")
    assert r.status_code == 200 and r.json()["title"] == "Card fees" and r.json()["source_tag"] == "cards"
    r = client.get("/articles/nope")
    assert r.status_code == 404 and r.json()["kind"] == "ArticleNotFound"
    assert client.get("/articles/..%2F..%2Fetc").status_code in (400, 404)


def test_bearer_token(make_app):
    with serve_app(make_app(token="s3cret")) as url, httpx.Client(base_url=url) as c:
        assert c.get("/healthz").status_code == 200
        r = c.get("/skills")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert c.get("/skills", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.post("/chat", json={"question": "x", "thread_id": "t"}).status_code == 401
        ok = c.get("/skills", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and len(ok.json()) == 2


# regression (issue 15, item 7): /docs, /redoc and /openapi.json were open although only /healthz is
def test_the_schema_and_docs_need_the_token_too(make_app):
    with serve_app(make_app(token="s3cret")) as url, httpx.Client(base_url=url) as c:
        for path in ("/openapi.json", "/docs", "/redoc"):
            r = c.get(path)
            assert r.status_code == 401 and r.json()["kind"] == "Unauthorized", path
            assert c.get(path, headers={"Authorization": "Bearer s3cret"}).status_code == 200, path
        schema = c.get("/openapi.json", headers={"Authorization": "Bearer s3cret"}).json()
        assert "bearer" in str(schema["components"]["securitySchemes"]).lower()
    with serve_app(make_app()) as url, httpx.Client(base_url=url) as c:  # no token set: all open
        assert c.get("/openapi.json").status_code == 200 and c.get("/docs").status_code == 200


def test_runs_background_job(make_app):
    seen = []

    def runner(case, harness, skill):
        seen.append((case["case_id"], harness, skill))
        time.sleep(0.1)
        return {"status": "accepted", "output": {"case_id": case["case_id"]}, "record": {"steps": 3}}

    def failing(case, harness, skill):
        raise RuntimeError("boom")

    with serve_app(make_app(run_runner=runner)) as url, httpx.Client(base_url=url) as c:
        r = c.post("/runs", json={"case": {"case_id": "case-1", "contact_reason": "x"}, "skill": "cards"})
        assert r.status_code == 202 and r.json()["status"] == "running"
        run_id = r.json()["id"]
        for _ in range(100):
            state = c.get(f"/runs/{run_id}").json()
            if state["status"] != "running":
                break
            time.sleep(0.05)
        assert state["status"] == "accepted" and state["result"]["output"] == {"case_id": "case-1"}
        assert seen == [("case-1", "extractive", "cards")]
        assert c.post("/runs", json={"case": {"contact_reason": "x"}}).status_code == 400
        # regression (issue 15, item 7): "ok\n" passed the `$`-anchored id pattern and made runs/ok\n/
        bad = c.post("/runs", json={"case": {"case_id": "ok\n", "contact_reason": "x"}})
        assert bad.status_code == 400 and "not a valid case id" in bad.json()["error"]
        assert seen == [("case-1", "extractive", "cards")]  # never queued
        assert c.post("/runs", json={"case": {"case_id": "c"}, "skill": "nope"}).status_code == 400
        assert c.get("/runs/" + "0" * 32).status_code == 404
    with serve_app(make_app(run_runner=failing)) as url, httpx.Client(base_url=url) as c:
        run_id = c.post("/runs", json={"case": {"case_id": "c"}}).json()["id"]
        for _ in range(100):
            state = c.get(f"/runs/{run_id}").json()
            if state["status"] != "running":
                break
            time.sleep(0.05)
        assert state["status"] == "error" and "boom" in state["error"]
    with serve_app(make_app()) as url, httpx.Client(base_url=url) as c:
        r = c.post("/runs", json={"case": {"case_id": "c"}})
        assert r.status_code == 503


def test_events_stream_before_the_turn_ends(make_app, knowledge):
    import threading

    gate = threading.Event()
    inner = knowledge.search

    def slow_search(*a, **kw):
        assert gate.wait(10), "the test never released the search"
        return inner(*a, **kw)

    knowledge.search = slow_search
    with serve_app(make_app()) as url, httpx.Client(base_url=url, timeout=30) as c:
        with c.stream("POST", "/chat", json={"question": "/cards lost card?", "thread_id": "s1"}) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            got = []
            for line in lines:  # the start event arrives while retrieval is still blocked
                got.append(line)
                if line.startswith("data:"):
                    break
            assert any(x.strip() == "event: start" for x in got) and not gate.is_set()
            gate.set()
            rest = "\n".join(lines)
        # had the server buffered the stream, the search would have timed out and the turn failed
        done = first(parse_sse(rest), "done")
        assert done["status"] == "ok" and done["citations"]


@pytest.mark.slow
def test_serve_command_runs_uvicorn(tmp_path):
    import os
    import subprocess
    import sys

    from skillrag.service.testing import free_port
    from skillrag.workspace import Workspace

    Workspace.init(tmp_path / "ws")
    port = free_port()
    env = {**os.environ, "SKILLRAG_LOG_LEVEL": "warning"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrag.cli.main", "serve", "-w", str(tmp_path / "ws"), "--port", str(port),
         "--token", "tok"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.2)
        assert r.json()["status"] == "ok"
        assert httpx.get(f"http://127.0.0.1:{port}/skills").status_code == 401
        skills = httpx.get(f"http://127.0.0.1:{port}/skills", headers={"Authorization": "Bearer tok"}).json()
        assert isinstance(skills, list)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_on_a_port_in_use_is_one_error_line(tmp_path, capsys):
    import socket

    from skillrag.cli.main import main
    from skillrag.workspace import Workspace

    Workspace.init(tmp_path / "ws")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        capsys.readouterr()
        assert main(["serve", "-w", str(tmp_path / "ws"), "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: cannot serve on 127.0.0.1:") and "in use" in err[-1]
