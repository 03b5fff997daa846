"""SkillTools.retrieve over the real search package (BM25 + hash embedder: no model download)."""

from __future__ import annotations

import json

import pytest

from skillrag.corpus import ingest
from skillrag.errors import IndexStateError, UserError
from skillrag.skill import SkillRegistry, SkillTools
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig

search = pytest.importorskip("skillrag.search")


def _ws(tmp_path, articles):
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "hybrid", "embedder": "hash"}})
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    src = tmp_path / "kb"
    src.mkdir()
    (src / "a.json").write_text(json.dumps(articles), encoding="utf-8")
    ingest(ws, [src], tag="kb")
    return ws


ARTS = [
    {"id": "a_lost", "title": "Lost cards", "content": "Freeze a lost debit card at once, then order a replacement."},
    {"id": "a_wire", "title": "Wire transfers", "content": "Wire transfers above 5000 dollars need a second approver."},
    {"id": "a_fee", "title": "Fees", "content": "Replacement cards cost ten dollars for standard accounts."},
]


def test_retrieve_through_open_retriever(tmp_path):
    ws = _ws(tmp_path, ARTS)
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"))
    tools.start_session("c1")
    with pytest.raises(IndexStateError):
        tools.retrieve("lost card")
    search.build_index(ws)
    hits = tools.retrieve("wire transfer approver", k=2)
    assert isinstance(hits[0], search.Hit) and hits[0].article_id == "a_wire" and len(hits) <= 2
    assert tools.calls[-1].ok and tools.calls[0].ok is False
    assert tools.budget().queries_left == 4  # the failed call (no index) was refunded
    assert hits[0].preview == "Wire transfers above 5000 dollars need a second approver."
    assert hits[0].relevance == 1.0 and hits[0].bm25_rank == 1


def test_allowed_sources_become_search_filters(tmp_path):
    ws = _ws(tmp_path, ARTS)
    search.build_index(ws)
    skill = SkillRegistry(ws).get("cs-guidance")
    cfg = skill.config.model_copy(update={"allowed_sources": ["other-tag"]})
    restricted = type(skill)(**{**skill.__dict__, "config": cfg})
    assert SkillTools(ws, restricted).retrieve("wire transfer approver", case_id="c1") == []
    cfg = skill.config.model_copy(update={"allowed_sources": ["kb"], "mode": "bm25"})
    allowed = type(skill)(**{**skill.__dict__, "config": cfg})
    assert SkillTools(ws, allowed).retrieve("wire transfer approver", case_id="c1")[0].article_id == "a_wire"
    assert SkillTools(ws, allowed).retrieve("wire", case_id="c1", filters={"source_tags": ["other-tag"]}) == []
    with pytest.raises(UserError, match="outside this skill's sources"):
        SkillTools(ws, restricted).retrieve("wire", case_id="c1", filters={"source_tags": ["kb"]})
