"""The real app over a real workspace: the packaged demo help center, BM25 index, built-in skills,
the harness behind POST /runs, and the `skillrag serve` command."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from skillrag import demo_data
from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, ingest
from skillrag.search import build_index
from skillrag.service import workspace_app
from skillrag.service.testing import serve_app
from skillrag.skill import install_builtin_skills
from skillrag.workspace import Workspace, WorkspaceConfig

from .conftest import events_of, first

POLICY_SKILL_MD = """---
name: policies-only
description: Use when the question is about store policies; reads the policy articles only.
---
Answer from the policy articles only.
"""


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    cfg = WorkspaceConfig.model_validate({
        "name": "svc-test",
        "search": {"backend": "direct", "mode": "bm25", "embedder": "hash"},
        "service": {"skill_web": {"policies-only": {"web_mode": "fallback", "web_allowlist": ["example.com"]}}},
    })
    ws = Workspace.init(root, config=cfg)
    ingest(ws, [demo_data.HELP_CENTER])
    build_index(ws)
    install_builtin_skills(ws)
    folder = ws.skills_dir / "policies-only"
    folder.mkdir()
    (folder / "SKILL.md").write_text(POLICY_SKILL_MD, encoding="utf-8")
    (folder / "skill.yaml").write_text("k: 5\nmax_snippets: 3\nallowed_sources: [policies]\n", encoding="utf-8")
    return Workspace.open(root)


@pytest.fixture(scope="module")
def client(ws):
    with serve_app(workspace_app(ws)) as url, httpx.Client(base_url=url, timeout=60) as c:
        yield c


def test_skills_come_from_the_workspace_registry(client):
    skills = {s["name"]: s for s in client.get("/skills").json()}
    assert {"cs-guidance", "policies-only"} <= set(skills)
    assert skills["policies-only"]["allowed_sources"] == ["policies"]
    assert skills["policies-only"]["web_mode"] == "fallback"
    assert skills["policies-only"]["web_allowlist"] == ["example.com"]


def test_extractive_chat_on_real_index_cites_verified_article_text(client, ws):
    store = ArticleStore(ws)
    ev = events_of(client.post("/chat", json={"question": "/policies-only what is the return window?",
                                              "thread_id": "real-1", "web_search": True}))
    done = first(ev, "done")
    assert done["status"] == "ok" and done["skill"] == "policies-only"
    hits = first(ev, "retrieval")["hits"]
    assert hits and all(store.get(h["article_id"]).source_tag == "policies" for h in hits)
    assert done["citations"]
    for c in done["citations"]:
        art = store.get(c["source"])
        assert art.source_tag == "policies"
        assert art.body[c["start"]:c["end"]] == c["snippet"]
    # web is allowed by policy but no provider is configured: said so, nothing fetched
    webs = [d["status"] for n, d in ev if n == "web"]
    assert webs in ([], ["not_configured"], ["not_needed"])


def test_article_route_reads_the_store(client, ws):
    aid = ArticleStore(ws).list()[0].id
    r = client.get(f"/articles/{aid}")
    assert r.status_code == 200 and r.json()["id"] == aid
    assert client.get("/articles/kb-does-not-exist").status_code == 404


@pytest.mark.slow
def test_runs_route_runs_the_harness_on_a_demo_case(client):
    case = json.loads(demo_data.CASES.read_text(encoding="utf-8").splitlines()[0])
    agent_case = {k: v for k, v in case.items() if k != "ground_truth"}
    r = client.post("/runs", json={"case": agent_case})
    assert r.status_code == 202, r.text
    run_id = r.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = client.get(f"/runs/{run_id}").json()
        if state["status"] != "running":
            break
        time.sleep(0.2)
    assert state["status"] in ("accepted", "failed", "budget_exceeded"), state
    assert state["result"]["record"]
    if state["status"] == "accepted":
        assert state["result"]["output"]["case_id"] == case["case_id"]
    bad = client.post("/runs", json={"case": {"case_id": "x", "ground_truth": {"a": 1}}})
    assert bad.status_code == 400
    traversal = client.post("/runs", json={"case": {**agent_case, "case_id": "../../evil"}})
    assert traversal.status_code == 400 and "not a valid case id" in traversal.text


def test_serve_check_lists_routes(ws, capsys):
    assert main(["serve", "-w", str(ws.root), "--check"]) == 0
    out = capsys.readouterr()
    assert "POST   /chat" in out.out and "GET    /skills" in out.out
    assert "GET    /review/{case_id}" in out.out and "POST   /review/{case_id}/approve" in out.out
    assert "extractive" in out.err and "web off" in out.err


def test_serve_errors_are_one_line(tmp_path, capsys):
    assert main(["serve", "-w", str(tmp_path / "nope"), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "not a skillrag workspace" in err[0]
    assert main(["serve", "-w", str(tmp_path), "--port", "0"]) == 2


# regression (issue 21, class 5): a bad web_allowlist entry stopped `serve` naming neither skill nor file
def test_serve_names_the_skill_and_file_of_a_bad_allowlist_entry(tmp_path, capsys):
    ws = Workspace.init(tmp_path / "ws")
    folder = ws.skills_dir / "web-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: web-notes\ndescription: Use when testing.\n---\nbody\n")
    (folder / "skill.yaml").write_text("web_mode: fallback\nweb_allowlist: ['::1']\n")
    assert main(["serve", "-w", str(ws.root), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: skill web-notes ({folder / 'skill.yaml'}): web_allowlist:")


def test_configured_web_search_end_to_end_without_test_transport(tmp_path):
    """`service.web_search_url` wires the shipped SearXNG provider and fetcher. Everything is real:
    127.0.0.1 is the allowlisted host; `localhost` (same machine, different host name) is off the list,
    so an allowlisted page redirecting there must be dropped before it is requested."""
    from skillrag.service.testing import Page, VirtualHostServer

    with VirtualHostServer({}) as site:
        base, other = f"http://127.0.0.1:{site.port}", f"http://localhost:{site.port}"
        site.pages.update({
            ("127.0.0.1", "/search?q=escrow+statement+site%3A127.0.0.1&format=json"): Page(
                json.dumps({"results": [{"url": f"{base}/go-away"}, {"url": f"{base}/drip"}, {"url": f"{base}/old"},
                                        {"url": f"{other}/page"}]}),
                content_type="application/json"),
            ("127.0.0.1", "/drip"): Page("escrow statement " * 30, content_type="text/plain", drip_s=0.05),
            ("127.0.0.1", "/go-away"): Page(status=302, location=f"{other}/evil"),
            ("127.0.0.1", "/old"): Page(status=301, location="/escrow"),
            ("127.0.0.1", "/escrow"): Page("<p>The yearly escrow statement lists property taxes paid.</p>"),
            ("localhost", "/evil"): Page("<p>escrow statement: off-list content</p>"),
            ("localhost", "/page"): Page("<p>escrow statement: off-list content</p>"),
        })
        cfg = WorkspaceConfig.model_validate({
            "search": {"backend": "direct", "mode": "bm25", "embedder": "hash"},
            "service": {"web_search_url": f"{base}/search", "web_fetch_deadline_s": 1, "web_allow_private": True,
                        "skill_web": {"policies-only": {"web_mode": "fallback", "web_allowlist": ["127.0.0.1"]}}},
        })
        ws = Workspace.init(tmp_path / "ws", config=cfg)
        ingest(ws, [demo_data.HELP_CENTER])
        build_index(ws)
        folder = ws.skills_dir / "policies-only"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(POLICY_SKILL_MD, encoding="utf-8")
        (folder / "skill.yaml").write_text("allowed_sources: [policies]\n", encoding="utf-8")
        with serve_app(workspace_app(Workspace.open(ws.root))) as url, httpx.Client(base_url=url, timeout=30) as c:
            ev = events_of(c.post("/chat", json={"question": "/policies-only escrow statement", "thread_id": "e2e",
                                                 "web_search": True}))
    w = first(ev, "web")
    assert w["status"] == "searched"
    assert [k["url"] for k in w["kept"]] == [f"{base}/escrow"]
    assert {d["url"]: d["stage"] for d in w["dropped"]} == {f"{base}/go-away": "redirect", f"{base}/drip": "fetch",
                                                           f"{other}/page": "result"}
    assert "1 s" in next(d["reason"] for d in w["dropped"] if d["url"] == f"{base}/drip")  # service.web_fetch_deadline_s
    assert not any(h[0] == "localhost" for h in site.hits)
    cites = [x for x in first(ev, "done")["citations"] if x["kind"] == "web"]
    assert [x["source"] for x in cites] == [f"{base}/escrow"]


def test_chat_without_an_index_is_503_before_streaming(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [demo_data.HELP_CENTER])
    install_builtin_skills(ws)
    with serve_app(workspace_app(ws)) as url, httpx.Client(base_url=url, timeout=30) as c:
        r = c.post("/chat", json={"question": "/cs-guidance return window?", "thread_id": "x"})
        assert r.status_code == 503 and r.json()["kind"] == "IndexStateError"
        # the default backend (wiki) without a navigation layer: said so, never answered from `direct`
        assert "no navigation layer" in r.json()["error"] and "skillrag wiki build" in r.json()["error"]
        assert c.get("/healthz").status_code == 200


def _add_article(ws, folder, name: str, sentence: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nid: {name}\ntitle: {name}\ntag: notes\n---\n# {name}\n\n{sentence}\n",
                                       encoding="utf-8")
    ingest(ws, [folder])


# regression (review finding 1): `skillrag serve` kept the retriever it opened first, so after an ingest and
# `skillrag index` in another process every plain /chat still said "the search index is stale ...; run
# skillrag index" until the server was restarted
def test_a_running_service_picks_up_a_rebuilt_index(tmp_path):
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "bm25", "embedder": "hash"}})
    root = tmp_path / "ws"
    ws = Workspace.init(root, config=cfg)
    ingest(ws, [demo_data.HELP_CENTER])
    build_index(ws)
    install_builtin_skills(ws)
    _add_article(ws, tmp_path / "notes", "kb-zephyr-note", "The zephyr lamp ships in a blue crate.")
    with serve_app(workspace_app(Workspace.open(root))) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.post("/chat", json={"question": "zephyr lamp crate", "thread_id": "t1"})
        assert r.status_code == 503 and "stale (0 changed, 1 added" in r.json()["error"]
        assert "run `skillrag index`" in r.json()["error"]
        build_index(Workspace.open(root))  # what `skillrag index` does in another process: the advice holds
        ev = events_of(c.post("/chat", json={"question": "zephyr lamp crate", "thread_id": "t2"}))
        assert first(ev, "retrieval")["hits"][0]["article_id"] == "kb-zephyr-note"
        # a change while it serves: stale again, and fresh again after the next index build
        _add_article(ws, tmp_path / "notes", "kb-quokka-note", "The quokka stool has three legs.")
        r = c.post("/chat", json={"question": "quokka stool legs", "thread_id": "t3"})
        assert r.status_code == 503 and "1 added" in r.json()["error"]
        build_index(Workspace.open(root))
        ev = events_of(c.post("/chat", json={"question": "quokka stool legs", "thread_id": "t4"}))
        assert first(ev, "retrieval")["hits"][0]["article_id"] == "kb-quokka-note"


def test_the_cached_retriever_is_reopened_only_when_the_index_changed(tmp_path):
    from skillrag.service.knowledge import WorkspaceKnowledge

    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "bm25", "embedder": "hash"}})
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    ingest(ws, [demo_data.HELP_CENTER])
    build_index(ws)
    kb = WorkspaceKnowledge(ws)
    first_r = kb._retriever("direct", None)
    assert kb._retriever("direct", None) is first_r  # not rebuilt per request
    _add_article(ws, tmp_path / "notes", "kb-zephyr-note", "The zephyr lamp ships in a blue crate.")
    assert kb._retriever("direct", None) is first_r  # an ingest alone does not change the index files
    build_index(ws)
    second = kb._retriever("direct", None)
    assert second is not first_r and second.embedder is first_r.embedder  # reopened, model not reloaded
    kb.ready("direct", None)  # fresh now
    assert kb._retriever("direct", None) is second
