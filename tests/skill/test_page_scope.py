"""Scope through navigation pages (issue 21, class 1): a page is derived from its articles, so a skill's
scope bounds what a page shows and which pages a search lists, on every surface.

Real workspace, real SQLite store, a real extractive navigation layer and a real wiki index (hash
embedder: no model download). The corpus has two source tags: ``cards`` (public) and ``internal``. The
``cards-gold`` entity page lists two public Gold Rewards Card articles and an internal one whose
override code (OVR-7731-XQ) the extractive builder puts in the page's intent and procedure; after the
build, skill ``research``'s private reference note (retention code RET-5521-KP) is merged into that page
too, as a model builder may do. Skill ``cards-desk`` may read ``cards`` only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
from mcp import Client

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, SourceScope, ingest
from skillrag.errors import ArticleNotFound, UserError
from skillrag.service.knowledge import WorkspaceKnowledge
from skillrag.service.mcp_server import build_mcp_server
from skillrag.skill import CaseFile, CaseRecord, SkillRegistry, SkillTools, ingest_references, write_cases
from skillrag.skill.views import page_json, retrieve_json
from skillrag.wiki import Layer, load_pages
from skillrag.wiki.page import Link, LinkType, Page, SourceRef, Step
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig

OVERRIDE = "OVR-7731-XQ"  # in the internal article only
RETENTION = "RET-5521-KP"  # in research's reference note only
WIRE = "4471-ZED"  # in an internal article that has a page of its own

CARDS = [
    {"id": "doc_cards_gold_001", "title": "Gold Rewards Card: annual fee",
     "content": "## Fees\n\nThe Gold Rewards Card has an annual fee of $95, waived in the first year.\n"},
    {"id": "doc_cards_gold_002", "title": "Gold Rewards Card: replacement",
     "content": "## Replacement\n\nReplace a Gold Rewards Card with `order_replacement_card_2231` after the card "
                "is frozen.\n"},
    {"id": "art_card_lost", "title": "Lost or stolen debit cards",
     "content": "## Freezing the card\n\nWhen a customer reports a lost card, freeze it first.\n"},
    {"id": "art_fees", "title": "Fee table", "content": "## Fees\n\nStandard accounts pay a $10 replacement fee.\n"},
]
INTERNAL = [
    {"id": "doc_cards_gold_000", "title": "Internal: Gold Rewards Card fee override",
     "content": f"This guide explains the Gold Rewards Card fee override code {OVERRIDE}.\n\n## Override\n\n"
                f"To waive the Gold Rewards Card annual fee, enter override code {OVERRIDE} in the fee screen.\n"},
    {"id": "staff_wire_desk", "title": "Internal: wire desk escalation",
     "content": f"## Escalation\n\nWire transfers above $5,000 go to the wire desk on extension {WIRE}.\n"},
]
NOTE = f"""---
title: Gold Rewards Card retention
---
# Gold Rewards Card retention

Offer retention code {RETENTION} to a Gold Rewards Card holder who asks to close the card.
"""
SKILL_MD = "---\nname: {name}\ndescription: Use when a card question comes in.\n---\nAnswer from the sources.\n"


def _skill(ws: Workspace, name: str, yaml: str, notes: dict[str, str] | None = None) -> None:
    folder = ws.skills_dir / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name), encoding="utf-8")
    (folder / "skill.yaml").write_text(yaml, encoding="utf-8")
    for fname, text in (notes or {}).items():
        (folder / "references").mkdir(exist_ok=True)
        (folder / "references" / fname).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    from skillrag.search import build_index
    from skillrag.wiki import build_wiki

    root = tmp_path_factory.mktemp("page-scope")
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "wiki", "embedder": "hash"}})
    w = Workspace.init(root / "ws", config=cfg)
    for tag, arts in (("cards", CARDS), ("internal", INTERNAL)):
        (root / tag).mkdir()
        (root / tag / "a.json").write_text(json.dumps(arts), encoding="utf-8")
        ingest(w, [root / tag], tag=tag)
    _skill(w, "cards-desk", "allowed_sources: [cards]\n")
    _skill(w, "research", "k: 5\n", {"retention.md": NOTE})
    ingest_references(w, SkillRegistry(w).get("research"))
    build_wiki(w, builder="extractive")
    layer = Layer(w)
    page = layer.read("cards-gold")
    assert OVERRIDE in page.intent and any(OVERRIDE in s.text for s in page.steps)  # what the builder wrote
    merged = page.model_copy(update={  # a builder that merges the note into the shared page
        "steps": (*page.steps, Step(text=f"Retention: offer code {RETENTION} before closing the card.",
                                    links=(Link(type=LinkType.reference, article_id="research:retention"),))),
        "sources": (*page.sources, SourceRef(id="research:retention", title="Gold Rewards Card retention")),
    })
    layer.write(merged)
    layer.sync_index()
    build_index(w)
    return w


_N = iter(range(10_000))


def _cases(ws: Workspace, tmp_path: Path) -> tuple[str, Path]:
    """A case file holding one fresh case (the module's workspace is shared, so each test gets its own)."""
    cid = f"c{next(_N)}"
    path = tmp_path / "cases.jsonl"
    write_cases(path, [CaseRecord(case_id=cid, contact_reason="Gold card fee")])
    return cid, path


def _tools(ws: Workspace, name: str, cases: Path | None = None, **kw) -> SkillTools:
    return SkillTools(ws, SkillRegistry(ws).get(name), CaseFile(cases) if cases else None, **kw)


def _text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False)


def test_the_builder_puts_the_override_code_on_the_shared_page(ws):
    text = _text(page_json(_tools(ws, "cs-guidance").read_page("cards-gold")))
    assert OVERRIDE in text and RETENTION not in text  # cs-guidance reads internal, never research's note
    own = _text(page_json(_tools(ws, "research").read_page("cards-gold")))
    assert OVERRIDE in own and RETENTION in own  # the note's owner sees the page whole


# regression: `retrieve --page` showed the intent and steps quoting an article the skill cannot open,
# and a private reference note once it was merged into a shared page
def test_a_page_read_shows_only_what_in_scope_articles_give(ws, tmp_path):
    cid, cases = _cases(ws, tmp_path)
    t = _tools(ws, "cards-desk", cases)
    t.load_case(cid)
    with pytest.raises(ArticleNotFound, match="outside this skill's allowed sources"):
        t.get_article("doc_cards_gold_000")
    read = t.read_page("cards-gold")
    data = page_json(read)["page"]
    assert OVERRIDE not in _text(data) and RETENTION not in _text(data)
    assert data["title"] == "Cards Gold" and data["intent"] == "" and data["solves"] == []
    assert [a["id"] for a in data["articles"]] == ["doc_cards_gold_001", "doc_cards_gold_002"]
    assert data["procedure"] and all(ln["article_id"] in {"doc_cards_gold_001", "doc_cards_gold_002"}
                                     for st in data["procedure"] for ln in st["links"])
    assert read.budget.queries == 1
    with pytest.raises(UserError, match="'staff-wire-desk' is outside this skill's allowed sources"):
        t.read_page("staff-wire-desk")  # a page of internal articles only: not shown at all
    assert t.budget().queries == 1  # refused, so not charged
    other = _text(page_json(_tools(ws, "cs-guidance").read_page("cards-gold")))
    assert RETENTION not in other


def test_search_lists_only_pages_the_scope_may_see(ws, tmp_path):
    cid, cases = _cases(ws, tmp_path)
    t = _tools(ws, "cards-desk", cases)
    t.load_case(cid)
    listed = set()
    for q in ("override code fee screen waive", "wire desk escalation extension", "retention code close card",
              "gold rewards card annual fee"):
        for detail in (None, "pages"):  # compact hits carry no page_ids; --detail pages does
            res = t.retrieve(q, detail=detail)
            data = retrieve_json(res)
            assert OVERRIDE not in _text(data) and RETENTION not in _text(data) and WIRE not in _text(data), q
            listed |= {p["page_id"] for p in data["pages"]} | {p for h in data["hits"] for p in h.get("page_ids", ())}
        assert all(ArticleStore(ws).get(a["id"]).source_tag == "cards" for p in data["pages"] for a in p["articles"])
    assert "cards-gold" in listed and "staff-wire-desk" not in listed
    assert not any(p.startswith("research") for p in listed)


def test_a_page_named_after_out_of_scope_articles_is_hidden(ws):
    """The reduced page keeps its name (id and title); a name holding a word that only out-of-scope
    articles hold would say what they say, so such a page is not shown at all."""
    scope = ArticleStore(ws).scoped(SourceScope.of("cards-desk", ["cards"]))
    page = Page(id="fee-override", title="Fee override", kind="topic",
                sources=(SourceRef(id="doc_cards_gold_000"), SourceRef(id="doc_cards_gold_001")))
    assert scope.page(page) is None  # "override" is in the internal article only
    named = page.model_copy(update={"id": "gold-fees", "title": "Gold fees"})
    assert [s.id for s in scope.page(named).sources] == ["doc_cards_gold_001"]
    unknown = named.model_copy(update={"sources": (SourceRef(id="gone_article"),)})
    assert scope.page(unknown) is None  # an id the store does not hold is not in scope
    every = ArticleStore(ws).scoped(SourceScope.of(None, None))
    assert every.page(page) is page  # nothing is out of this reader's scope: the page as it is


def test_the_cli_and_mcp_read_pages_through_the_scope(ws, tmp_path, capsys):
    cid, cases = _cases(ws, tmp_path)
    common = ["-w", str(ws.root), "--skill", "cards-desk"]
    assert main(["tool", "load-case", cid, "--cases", str(cases), *common]) == 0
    capsys.readouterr()
    assert main(["tool", "retrieve", "--page", "cards-gold", "--case", cid, *common]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["page"]["page_id"] == "cards-gold" and OVERRIDE not in out and RETENTION not in out
    assert main(["tool", "retrieve", "--page", "staff-wire-desk", "--case", cid, *common]) == 2
    assert "outside this skill's allowed sources" in capsys.readouterr().err

    cid, cases = _cases(ws, tmp_path)
    server, _ = build_mcp_server(ws, skill="cards-desk", cases=CaseFile(cases), log_path=tmp_path / "log.jsonl")

    async def session() -> dict:
        async with Client(server) as client:
            await client.call_tool("load_case", {"case_id": cid})
            return {"page": await client.call_tool("retrieve", {"page": "cards-gold"}),
                    "hidden": await client.call_tool("retrieve", {"page": "staff-wire-desk"}),
                    "search": await client.call_tool("retrieve", {"query": "override code fee screen"})}

    got = anyio.run(session)
    for name in ("page", "search"):
        assert not got[name].is_error
        text = _text(got[name].structured_content)
        assert OVERRIDE not in text and RETENTION not in text and WIRE not in text
    assert got["hidden"].is_error and "outside this skill's allowed sources" in got["hidden"].content[0].text


@pytest.mark.slow
def test_the_exported_retrieve_script_reads_pages_through_the_scope(ws, tmp_path):
    cid, cases = _cases(ws, tmp_path)
    assert main(["skill", "export", "cards-desk", str(tmp_path / "exp"), "-w", str(ws.root),
                 "--cases", str(cases)]) == 0
    scripts = tmp_path / "exp" / "cards-desk" / "scripts"
    tools_md = (tmp_path / "exp" / "cards-desk" / "references" / "tools.md").read_text()
    assert "`cards`" in tools_md and "internal" not in tools_md and "reference:research" not in tools_md
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLRAG_WORKSPACE", "SKILLRAG_CASES", "SKILLRAG_CASE")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=scripts,
                              timeout=120, check=False)

    assert run("load_case.py", cid).returncode == 0
    r = run("retrieve.py", "--page", "cards-gold", "--case", cid)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["page"]["intent"] == "" and OVERRIDE not in r.stdout and RETENTION not in r.stdout
    r = run("retrieve.py", "--page", "staff-wire-desk", "--case", cid)
    assert r.returncode == 2 and "outside this skill's allowed sources" in r.stderr


def test_the_service_and_the_harness_see_pages_through_the_same_scope(ws):
    scoped = WorkspaceKnowledge(ws).scoped(SourceScope.of("cards-desk", ["cards"]))
    hits = scoped.search("gold rewards card annual fee override", k=10, backend=None, mode=None)
    assert hits and all(ArticleStore(ws).get(h.article_id).source_tag == "cards" for h in hits)
    assert {p for h in hits for p in h.page_ids} <= {p.id for p in load_pages(ws)} - {"staff-wire-desk"}

    from skillrag.harness.extractive import _NavLayer

    nav = _NavLayer.load(SimpleNamespace(tools=_tools(ws, "cards-desk")))
    shown = _text([p.model_dump() for p in nav.entities + nav.aspects])
    assert nav.entities and OVERRIDE not in shown and RETENTION not in shown
    assert [a for p in nav.entities for a, _ in nav._sources(p)] == ["doc_cards_gold_001", "doc_cards_gold_002"]
