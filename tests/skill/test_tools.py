"""The four tools over a real workspace (SQLite store), with the fake retriever."""

from __future__ import annotations

import json

import pytest

from skillrag.corpus import ArticleStore
from skillrag.errors import ArticleNotFound, CaseNotFound, ContractViolation, EmptyInputError, InvalidIdError
from skillrag.skill import CaseFile, SkillTools
from skillrag.skill.testing import FakeRetriever, make_output


@pytest.fixture
def tools(ws, skill, cases_path):
    t = SkillTools(ws, skill, CaseFile(cases_path), retriever=FakeRetriever(ws),
                   log_path=ws.runs_dir / "tool_calls.jsonl")
    t.start_session("case_1")  # what load_case does first (without logging a call)
    return t


def test_load_case_is_agent_facing(tools):
    case = tools.load_case("case_1")
    assert case.contact_reason == "Customer lost their debit card"
    assert case.n_messages == 1 and case.n_notes == 1
    assert not hasattr(case, "ground_truth")
    with pytest.raises(CaseNotFound):
        tools.load_case("nope")


def test_retrieve_uses_skill_k_and_logs(tools):
    hits = tools.retrieve("lost card freeze replacement")
    assert hits[0].article_id == "art_card_lost"
    assert tools.retriever.queries[-1][1] == tools.skill.config.k
    assert len(tools.retrieve("fee", k=1)) == 1
    with pytest.raises(EmptyInputError):
        tools.retrieve("  ")
    assert [c.tool for c in tools.calls] == ["retrieve", "retrieve", "retrieve"]
    assert tools.calls[-1].ok is False and "empty query" in tools.calls[-1].error
    assert all(c.ms >= 0 for c in tools.calls)


def test_get_article_body_section_summary(tools, ws):
    art = ArticleStore(ws).get("art_card_lost")
    v = tools.get_article("art_card_lost")
    assert v.text == art.body and v.title == art.title and v.content_hash == art.content_hash
    sec = tools.get_article("art_card_lost", section="Replacement")
    assert sec.text.startswith("## Replacement") and "freeze" not in sec.text
    assert art.body[sec.offset : sec.offset + len(sec.text)] == sec.text and sec.part == "section:2"
    summ = tools.get_article("art_card_lost", summary=True)
    assert summ.part == "summary" and "Lost or stolen" in summ.text
    with pytest.raises(ArticleNotFound):
        tools.get_article("art_card_lost", section="Nope")
    with pytest.raises(ArticleNotFound):
        tools.get_article("art_missing")
    with pytest.raises(InvalidIdError):
        tools.get_article("../../etc/passwd")


def test_save_output_writes_offsets_and_hash(tools, ws):
    text = "The customer's identity must be verified before any change - no exceptions."
    o = make_output("case_1", [("art_card_lost", text), ("art_fees", "Premium accounts pay no fee.")])
    saved = tools.save_output(o)
    assert saved.path == ws.runs_dir / "case_1" / "output.json"
    on_disk = json.loads(saved.path.read_text())
    body = ArticleStore(ws).get("art_card_lost").body
    ev = on_disk["audit"]["snippets"][0]
    raw = body[ev["start"] : ev["end"]]
    assert raw == "The customer\u2019s identity must be verified before any change \u2014 no exceptions."
    assert ev["content_hash"] == ArticleStore(ws).get("art_card_lost").content_hash
    assert on_disk["snippets"] == o["snippets"]
    # the saved file is itself a valid output
    assert tools.check_output(on_disk) == []


def test_save_output_rejects_whole_write_and_lists_reasons(tools, ws, tmp_path):
    o = make_output("case_1", [("art_card_lost", "freeze it first"), ("art_fees", "Premium accounts pay NO fee")])
    dest = tmp_path / "out.json"
    with pytest.raises(ContractViolation) as ei:
        tools.save_output(o, dest)
    assert ei.value.reasons == ["snippets[1].text: not a verbatim substring of article 'art_fees'"]
    assert not dest.exists() and not (ws.runs_dir / "case_1").exists()
    assert tools.calls[-1].tool == "save_output" and not tools.calls[-1].ok


def test_latency_log_file(tools, ws):
    tools.load_case("case_1")
    tools.get_article("art_fees")
    lines = [json.loads(x) for x in (ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()]
    assert [x["tool"] for x in lines] == ["load_case", "get_article"]
    assert all(isinstance(x["ms"], float) and x["ok"] for x in lines)


def test_allowed_sources_restrict_reads_and_saves(ws, skill, cases_path):
    cfg = skill.config.model_copy(update={"allowed_sources": ["elsewhere"]})
    restricted = type(skill)(**{**skill.__dict__, "config": cfg})
    t = SkillTools(ws, restricted, CaseFile(cases_path), retriever=FakeRetriever(ws))
    t.load_case("case_1")
    with pytest.raises(ArticleNotFound, match="allowed sources"):
        t.get_article("art_fees")
    with pytest.raises(ContractViolation) as ei:
        t.save_output(make_output("case_1", [("art_fees", "Premium accounts pay no fee.")]))
    assert "outside this skill's allowed sources" in ei.value.reasons[0]


def test_no_case_file(ws, skill):
    with pytest.raises(CaseNotFound, match="no case file"):
        SkillTools(ws, skill).load_case("case_1")


def test_audit_survives_corpus_change(tools, ws, tmp_path):
    from skillrag.corpus import ingest

    text = "Order a replacement card within 2 business days."
    saved = tools.save_output(make_output("case_1", [("art_card_lost", text)]))
    record = json.loads(saved.path.read_text())
    assert tools.check_audit(record) == ([], [])
    tampered = json.loads(json.dumps(record))
    tampered["audit"]["snippets"][0]["start"] += 3
    reasons, _ = tools.check_audit(tampered)
    assert reasons and "do not hold the snippet" in reasons[0]
    # the article changes: the stored offsets + hash still say what was quoted, and validate notes it
    src = tmp_path / "src" / "kb" / "articles.json"
    arts = json.loads(src.read_text())
    arts[0]["content"] = "## Replacement\n\nReplacements now ship overnight."
    src.write_text(json.dumps(arts))
    ingest(ws, [src.parent])
    reasons, notes = tools.check_audit(record)
    assert reasons == [] and "changed since the output was saved" in notes[0]
    assert any("not a verbatim substring" in r for r in tools.check_output(record))
