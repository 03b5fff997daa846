"""Source scoping on the real knowledge path (issue 15, items 2 and 9): the packaged demo help center in
a real workspace (SQLite store, BM25 index), a skill limited to the policy articles, and a skill with a
``references/`` bundle. ``/chat`` reaches articles only through ``WorkspaceKnowledge.scoped`` - the
same ``corpus.ScopedArticles`` the skill tools use."""

from __future__ import annotations

import httpx
import pytest

from skillrag import demo_data
from skillrag.corpus import ArticleStore, ingest
from skillrag.models.testing import ScriptedModel, call
from skillrag.search import build_index
from skillrag.service import ThreadStore, create_app
from skillrag.service.knowledge import WorkspaceKnowledge
from skillrag.service.skills import RegistryCatalog
from skillrag.service.testing import serve_app
from skillrag.skill import SkillRegistry, SkillTools, ingest_references, install_builtin_skills
from skillrag.workspace import Workspace, WorkspaceConfig

from .conftest import events_of, first

SKILLS = {
    "policies-only": ("Use when the question is about store policies.", "allowed_sources: [policies]\n", {}),
    "returns-desk": ("Use when the question is about returns; has curated notes.", "", {
        "restocking.md": (
            "---\ntitle: Restocking fee note\nurl: https://help.harbor-pine.example/notes/restocking\n---\n"
            "# Restocking fee note\n\nOpened mattresses carry a restocking fee of 15 percent of the price, "
            "deducted from the refund of the mattress return.\n"
        ),
    }),
}
QUESTION = "what is the restocking fee for an opened mattress return?"


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "bm25", "embedder": "hash"}})
    ws = Workspace.init(root, config=cfg)
    ingest(ws, [demo_data.HELP_CENTER])
    install_builtin_skills(ws)
    for name, (desc, yaml_text, notes) in SKILLS.items():
        folder = ws.skills_dir / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\nAnswer from the sources.\n",
                                         encoding="utf-8")
        (folder / "skill.yaml").write_text("k: 5\nmax_snippets: 3\n" + yaml_text, encoding="utf-8")
        for fname, text in notes.items():
            (folder / "references").mkdir(exist_ok=True)
            (folder / "references" / fname).write_text(text, encoding="utf-8")
    ingest_references(ws, SkillRegistry(ws).get("returns-desk"))
    build_index(ws)
    return Workspace.open(root)


def _app(ws, tmp_path, **kw):
    return create_app(catalog=RegistryCatalog(ws), knowledge=WorkspaceKnowledge(ws),
                      threads=ThreadStore(tmp_path / "service.sqlite"), search_backend="direct", search_mode="bm25",
                      **kw)


def _non_policy_article(ws) -> str:
    return next(a.id for a in ArticleStore(ws).list() if a.source_tag not in ("policies",) and a.skill is None)


# regression (issue 15, item 2): under a skill limited to `policies`, the model could read any article and
# cite a quote from an article it never read
def test_model_reads_and_quotes_stay_inside_the_skills_sources(ws, tmp_path):
    store = ArticleStore(ws)
    other = _non_policy_article(ws)
    policy = next(a for a in store.list() if a.source_tag == "policies")
    sentence = policy.body.strip().splitlines()[-1].strip()
    other_text = store.get(other).body.strip().splitlines()[-1].strip()
    model = ScriptedModel([
        call("read_article", article_id=other),
        call("read_article", article_id=policy.id),
        call("final_result", answer="From the policy.", quotes=[
            {"source": policy.id, "snippet": sentence},
            {"source": other, "snippet": other_text},
        ]),
    ])
    with serve_app(_app(ws, tmp_path, model=model)) as url, httpx.Client(base_url=url, timeout=60) as c:
        ev = events_of(c.post("/chat", json={"question": "/policies-only return window?", "thread_id": "p1"}))
    reads = [(d["args"]["article_id"], d["ok"]) for n, d in ev if n == "tool_call"]
    assert reads == [(other, False), (policy.id, True)]
    done = first(ev, "done")
    assert [x["source"] for x in done["citations"]] == [policy.id]
    assert done["rejected"] == [{"source": other, "snippet": other_text[:200], "reason": "not read in this turn"}]


def test_the_owning_skill_cites_its_reference_note_with_a_deep_link(ws, tmp_path):
    with serve_app(_app(ws, tmp_path)) as url, httpx.Client(base_url=url, timeout=60) as c:
        ev = events_of(c.post("/chat", json={"question": f"/returns-desk {QUESTION}", "thread_id": "r1"}))
        assert first(ev, "retrieval")["hits"][0]["article_id"] == "returns-desk:restocking"
        notes = [x for x in first(ev, "done")["citations"] if x["source"] == "returns-desk:restocking"]
        assert notes and notes[0]["url"] == "https://help.harbor-pine.example/notes/restocking"
        assert "https://help.harbor-pine.example/notes/restocking" in "".join(
            d["delta"] for n, d in ev if n == "text")
        art = c.get("/articles/returns-desk:restocking").json()
        assert art["url"] == "https://help.harbor-pine.example/notes/restocking" and art["skill"] == "returns-desk"
        # corpus citations have no url (the demo articles declare none)
        assert all(x["url"] is None for x in first(ev, "done")["citations"] if x["source"] != notes[0]["source"])


@pytest.mark.parametrize("prefix", ["/policies-only ", "/cs-guidance ", ""])
def test_other_skills_and_plain_chat_never_see_the_note(ws, tmp_path, prefix):
    with serve_app(_app(ws, tmp_path)) as url, httpx.Client(base_url=url, timeout=60) as c:
        ev = events_of(c.post("/chat", json={"question": prefix + QUESTION, "thread_id": "o1"}))
    hit_ids = [h["article_id"] for n, d in ev if n == "retrieval" for h in d["hits"]]
    assert hit_ids and not any(i.startswith("returns-desk:") for i in hit_ids)
    assert not any(x["source"].startswith("returns-desk:") for x in first(ev, "done")["citations"])


def test_skill_tools_and_chat_share_one_scope(ws):
    """The same question through SkillTools (MCP, CLI, harness) and through /chat's knowledge path: the
    same ranked ids, because both are ScopedArticles.search over the same retriever."""
    from skillrag.service.skills import view_of

    for name in ("returns-desk", "policies-only"):
        skill = SkillRegistry(ws).get(name)
        tools_ids = [h.article_id for h in SkillTools(ws, skill).retrieve(QUESTION, k=5)]
        view = view_of(skill)
        kb = WorkspaceKnowledge(ws).scoped(view.scope())
        chat_ids = [h.article_id for h in kb.search(QUESTION, k=5, backend="direct", mode=None)]
        assert tools_ids == chat_ids, name
