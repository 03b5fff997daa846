"""A skill's ``references/`` bundle (seed 004): ingested as that skill's reference notes, ranked by the
real retriever alongside the corpus, visible to that skill only, citable with their front-matter url.
Real workspace, real SQLite store, real BM25 index (hash embedder: no model download)."""

from __future__ import annotations

import json

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, ingest
from skillrag.errors import ArticleNotFound, ContractViolation, EmptyInputError
from skillrag.search import build_index
from skillrag.skill import SkillRegistry, SkillTools, ingest_references
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig

SKILL_MD = """---
name: {name}
description: Use when the question is about {topic}.
---
Answer from the sources.
"""
NOTE = """---
title: Related-party loans
url: https://regulator.example/loans/related-party
---
# Related-party loans

A loan from a private company to a shareholder is a deemed distribution unless it is a complying
loan with a written loan agreement and minimum yearly repayments.
"""


def _skill(ws: Workspace, name: str, topic: str, notes: dict[str, str] | None = None) -> None:
    folder = ws.skills_dir / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, topic=topic), encoding="utf-8")
    (folder / "skill.yaml").write_text("k: 5\nmode: bm25\nbackend: direct\n", encoding="utf-8")
    for fname, text in (notes or {}).items():
        (folder / "references").mkdir(exist_ok=True)
        (folder / "references" / fname).write_text(text, encoding="utf-8")


@pytest.fixture
def ws(tmp_path):
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "bm25", "embedder": "hash"}})
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.json").write_text(json.dumps([
        {"id": "loans_general", "title": "Loans", "content": "A shareholder loan needs board approval."},
        {"id": "fees", "title": "Fees", "content": "A wire transfer costs 25 dollars."},
    ]), encoding="utf-8")
    ingest(ws, [kb], tag="kb")
    _skill(ws, "research", "regulation", {"loans.md": NOTE, "tools.json": "{}"})
    _skill(ws, "retire", "retirement")
    rep = ingest_references(ws, SkillRegistry(ws).get("research"))
    assert rep.added == ["research:loans"]  # the .json file in references/ is not a note
    build_index(ws)
    return ws


def _tools(ws, name):
    return SkillTools(ws, SkillRegistry(ws).get(name))


def test_the_owning_skill_ranks_its_note_alongside_the_corpus(ws):
    hits = _tools(ws, "research").retrieve("shareholder loan deemed distribution complying loan agreement")
    ids = [h.article_id for h in hits]
    assert ids[0] == "research:loans" and "loans_general" in ids
    view = _tools(ws, "research").get_article("research:loans")
    assert view.text.startswith("# Related-party loans")


def test_other_skills_never_see_it(ws):
    other = _tools(ws, "retire")
    ids = [h.article_id for h in other.retrieve("shareholder loan deemed distribution complying loan agreement")]
    assert "research:loans" not in ids and "loans_general" in ids
    with pytest.raises(ArticleNotFound, match="outside"):
        other.get_article("research:loans")
    out = {"case_id": "c1", "guidance": "1. Check the loan agreement.", "n_snippets": 1,
           "articles_consulted": ["research:loans"],
           "snippets": [{"source_article": "research:loans", "source_title": "Related-party loans",
                         "text": "a complying loan with a written loan agreement", "why": "rule"}]}
    with pytest.raises(ContractViolation) as ei:
        other.save_output(out)
    assert any("outside this skill's allowed sources" in r for r in ei.value.reasons)
    assert _tools(ws, "research").save_output(out).path.is_file()  # the owner may cite it


def test_the_note_keeps_its_canonical_url(ws):
    note = ArticleStore(ws).get("research:loans")
    assert note.url == "https://regulator.example/loans/related-party" and note.source_type == "reference"


def test_a_skill_without_references_is_a_clear_error(ws):
    with pytest.raises(EmptyInputError, match="no references/ folder"):
        ingest_references(ws, SkillRegistry(ws).get("retire"))


def test_cli_skill_ingest(ws, capsys):
    assert main(["skill", "ingest", "research", "-w", str(ws.root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skill"] == "research" and report["counts"]["unchanged"] == 1
    assert main(["skill", "ingest", "retire", "-w", str(ws.root)]) == 2
    assert capsys.readouterr().err.strip().startswith("error: skill 'retire' has no references/ folder")


def test_ask_uses_the_skills_scope_too(ws):
    """`skillrag ask` under a skill reads through the same scope: the note answers for its owner only."""
    from skillrag.evidence import ask

    folder = ws.skills_dir / "research" / "references"
    (folder / "gold.md").write_text(
        "---\nurl: https://zephyr.example/gold\n---\n# Zephyr Bank Gold Rewards Card\n\n"
        "The Zephyr Bank Gold Rewards Card has an annual fee of $95.\n", encoding="utf-8")
    ingest_references(ws, SkillRegistry(ws).get("research"))
    build_index(ws)
    question = "What is the annual fee of Zephyr Bank's Gold Rewards Card?"
    own = ask(ws, question, skill="research")
    assert own.sufficient and {u.article_id for u in own.evidence} == {"research:gold"}
    other = ask(ws, question, skill="retire")
    assert not other.sufficient and not other.evidence
