"""The packaged demo help center: its cases load, and its reference evidence passes the contract."""

from __future__ import annotations

import json
from pathlib import Path

from skillrag.corpus import ArticleStore, ingest
from skillrag.skill import CaseFile, SkillRegistry, SkillTools
from skillrag.workspace import Workspace

DEMO = Path(__file__).resolve().parents[2] / "src" / "skillrag" / "demo_data"


def test_demo_reference_evidence_is_accepted_by_save_output(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [DEMO / "help-center"])
    cf = CaseFile(DEMO / "cases.jsonl")
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"), cf)
    titles = {a.id: a.title for a in ArticleStore(ws).list()}
    refs = [json.loads(x) for x in (DEMO / "reference_evidence.jsonl").read_text().splitlines() if x.strip()]
    assert refs
    for ref in refs:
        case = tools.load_case(ref["case_id"])
        snippets = [{"source_article": e["article_id"], "source_title": titles[e["article_id"]],
                     "text": e["text"], "why": "reference evidence"} for e in ref["evidence"]][:15]
        out = {"case_id": case.case_id, "guidance": cf.ground_truth(case.case_id).reference_guidance,
               "snippets": snippets, "n_snippets": len(snippets),
               "articles_consulted": sorted({s["source_article"] for s in snippets})}
        saved = tools.save_output(out)
        body = ArticleStore(ws).get(snippets[0]["source_article"]).body
        ev = saved.evidence[0]
        assert body[ev.start : ev.end].split() == snippets[0]["text"].split()
    assert len(list((ws.runs_dir).glob("*/output.json"))) == len(refs)
