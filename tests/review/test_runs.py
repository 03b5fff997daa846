"""Runs as the reviewer sees them, on a real workspace with real extractive runs: snippets placed at
their stored offsets, the contract's verdict as `skillrag validate` gives it, damaged runs reported."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from skillrag.corpus import ArticleStore, content_hash
from skillrag.errors import CaseNotFound, InvalidIdError
from skillrag.review import ReviewStore, list_runs, load_run
from skillrag.skill.contract import normalize

from .conftest import read_output, sha_of, write_output


def _set_body(ws, article_id: str, body: str | None) -> None:
    """Change (or, with None, remove) an article in the workspace store, as a re-ingest would."""
    conn = sqlite3.connect(ws.store_path)
    with conn:
        if body is None:
            conn.execute("UPDATE articles SET status = 'removed' WHERE id = ?", (article_id,))
        else:
            conn.execute("UPDATE articles SET body = ?, content_hash = ? WHERE id = ?",
                         (body, content_hash(body), article_id))
    conn.close()


def test_list_runs_reads_records_outputs_and_review_states(ws):
    (ws.runs_dir / "failed-1").mkdir()
    (ws.runs_dir / "failed-1" / "record.json").write_text(json.dumps(
        {"case_id": "failed-1", "harness": "llm", "skill": "cs-guidance", "model": "test", "status": "failed",
         "started_at": "2020-01-01T00:00:00+00:00"}))
    (ws.runs_dir / "not an id").mkdir()                     # ignored: not a plain id
    (ws.runs_dir / "empty").mkdir()                         # ignored: no output, no record
    (ws.runs_dir / "tool_calls.jsonl").write_text("{}\n")  # ignored: not a folder
    ReviewStore(ws).approve("hp-002", sha_of(ws, "hp-002"), "Dana", version=0)
    runs = {r.case_id: r for r in list_runs(ws)}
    assert set(runs) == {"hp-001", "hp-002", "hp-003", "failed-1"}
    assert list_runs(ws)[-1].case_id == "failed-1"  # oldest last
    r = runs["hp-001"]
    assert (r.skill, r.harness, r.model, r.status, r.review, r.has_output) == (
        "cs-guidance", "extractive", None, "accepted", "pending", True)
    assert r.search == "direct / bm25" and runs["failed-1"].search is None  # the fixture workspace's, from record.json
    assert r.output_sha256 == hashlib.sha256((ws.runs_dir / "hp-001" / "output.json").read_bytes()).hexdigest()
    assert (runs["hp-002"].review, runs["hp-002"].reviewer) == ("approved", "Dana")
    f = runs["failed-1"]
    assert (f.status, f.review, f.has_output, f.model, f.date) == ("failed", "no output", False, "test",
                                                                   "2020-01-01T00:00:00+00:00")


def test_an_untouched_run_places_every_snippet_at_its_stored_offsets(ws):
    view = load_run(ws, "hp-001")
    out = read_output(ws, "hp-001")
    assert view.accepted is True and view.reasons == [] and view.notes == [] and view.problems == []
    assert view.case is not None and view.case.case_id == "hp-001" and view.case_source == "case.json"
    records = {r["index"]: r for r in out["audit"]["snippets"]}
    store = ArticleStore(ws)
    assert len(view.snippets) == len(out["snippets"]) > 0
    for c in view.snippets:
        assert c.status == "verified" and c.span is not None and c.span.kind == "stored"
        assert (c.span.start, c.span.end) == (records[c.index]["start"], records[c.index]["end"])
        body = store.get(c.source_article).body
        assert normalize(body[c.span.start:c.span.end]) == normalize(c.text)
    marked: list[int] = []
    for art in view.articles:
        assert art.found and not art.changed and art.unplaced == []
        assert "".join(s.text for s in art.segments) == store.get(art.id).body
        opened = [i for s in art.segments for i in s.opens]
        assert sorted(opened) == sorted(art.snippets)
        marked += opened
    assert sorted(marked) == list(range(len(out["snippets"])))
    # every numbered step of the extractive guidance is linked to the snippet that backs it
    [v0] = view.versions
    steps = [ln for ln in v0.lines if ln.number is not None]
    assert [ln.snippets for ln in steps] == [[n - 1] for n in range(1, len(steps) + 1)]
    assert v0.unlinked == []


def test_a_tampered_snippet_fails_the_contract_and_is_flagged(ws):
    out = read_output(ws, "hp-001")
    out["snippets"][1]["text"] = out["snippets"][1]["text"].replace(" ", " never ", 1)
    write_output(ws, "hp-001", out)
    view = load_run(ws, "hp-001")
    assert view.accepted is False
    assert any("snippets[1].text: not a verbatim substring" in r for r in view.reasons)
    assert any("audit.snippets[1]: offsets" in r for r in view.reasons)
    c = view.snippets[1]
    assert c.status == "offsets" and c.span is None and "do not hold" in c.message
    assert all(x.status == "verified" for x in view.snippets if x.index != 1)
    art = next(a for a in view.articles if a.id == c.source_article)
    assert 1 in art.unplaced


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe", b"[1, 2]", b'{"case_id": "hp-001", "snippets": 5}',
                                 b'{"snippets": [{"source_article": ["x"], "text": 3}], "audit": []}'])
def test_a_damaged_output_is_reported_not_raised(ws, raw):
    (ws.runs_dir / "hp-003" / "output.json").write_bytes(raw)
    view = load_run(ws, "hp-003")
    assert view.accepted is False and view.reasons
    assert view.summary.has_output and view.summary.output_sha256 == hashlib.sha256(raw).hexdigest()
    assert view.case is not None  # the case is still shown
    assert {r.case_id for r in list_runs(ws)} == {"hp-001", "hp-002", "hp-003"}


def test_a_changed_article_is_flagged_with_the_stored_hash(ws):
    view = load_run(ws, "hp-001")
    target = view.snippets[0]
    body = ArticleStore(ws).get(target.source_article).body
    _set_body(ws, target.source_article, "A new first paragraph.\n\n" + body)  # the quote moves, still verbatim
    view = load_run(ws, "hp-001")
    assert view.accepted is True  # still verbatim, as `skillrag validate` says
    assert any(f"article {target.source_article!r} changed since the output was saved" in n for n in view.notes)
    c = view.snippets[0]
    assert c.status == "changed" and c.span is not None and c.span.kind == "located"
    assert c.span.start == target.span.start + len("A new first paragraph.\n\n")
    art = next(a for a in view.articles if a.id == target.source_article)
    assert art.changed and art.unplaced == []


def test_a_changed_article_without_the_quote_fails_and_a_removed_one_is_gone(ws):
    view = load_run(ws, "hp-001")
    a0, last = view.snippets[0].source_article, view.snippets[-1].source_article
    assert a0 != last
    _set_body(ws, a0, "Everything was rewritten.")
    _set_body(ws, last, None)
    view = load_run(ws, "hp-001")
    assert view.accepted is False
    gone = [c for c in view.snippets if c.source_article == last]
    assert gone and all(c.status == "gone" and c.span is None for c in gone)
    assert all(c.status == "changed" and c.span is None for c in view.snippets if c.source_article == a0)
    arts = {a.id: a for a in view.articles}
    assert arts[last].found is False and arts[a0].unplaced


def test_an_output_without_audit_block_is_located_not_verified(ws):
    out = read_output(ws, "hp-002")
    del out["audit"]
    write_output(ws, "hp-002", out)
    view = load_run(ws, "hp-002")
    assert view.accepted is True and any("no audit block" in n for n in view.notes)
    assert all(c.status == "unaudited" and c.span is not None and c.span.kind == "located" for c in view.snippets)


def test_the_case_falls_back_to_the_case_file_then_is_reported_missing(ws):
    (ws.runs_dir / "hp-001" / "case.json").unlink()
    view = load_run(ws, "hp-001")
    assert view.case is not None and view.case_source == "cases.jsonl" and view.problems == []
    (ws.root / "cases.jsonl").unlink()
    view = load_run(ws, "hp-001")
    assert view.case is None and any("not available" in p for p in view.problems)


def test_edited_versions_show_beside_the_original(ws):
    sha = sha_of(ws, "hp-001")
    ReviewStore(ws).edit("hp-001", sha, "Dana", "1. Verify the customer first.\n2. Open the claim.",
                         base_version=0, comment="tighter")
    view = load_run(ws, "hp-001")
    assert [v.version.version for v in view.versions] == [0, 1]
    assert view.versions[0].version.guidance == read_output(ws, "hp-001")["guidance"]
    assert view.latest.version.reviewer == "Dana" and view.state.state == "edited"
    assert [a.action for a in view.history] == ["edit"]


def test_unknown_and_bad_case_ids(ws):
    with pytest.raises(CaseNotFound):
        load_run(ws, "hp-999")
    with pytest.raises(InvalidIdError):
        load_run(ws, "../hp-001")


def test_an_output_left_by_an_earlier_run_is_said_to_be_one(ws):
    rec_path = ws.runs_dir / "hp-001" / "record.json"
    rec = json.loads(rec_path.read_text())
    rec["status"] = "budget_exceeded"
    rec_path.write_text(json.dumps(rec))
    view = load_run(ws, "hp-001")
    assert view.summary.status == "budget_exceeded" and view.accepted is True
    assert any("latest run ended budget_exceeded" in p for p in view.problems)


# regression (review finding 3): `skillrag tool save-output` replaced runs/<case>/output.json but left the
# extractive run's record.json, so /review showed the hand-saved output as that harness's and `eval score`
# took its costs from the old record
def test_a_hand_saved_output_does_not_keep_the_earlier_runs_record(ws, tmp_path, capsys):
    from skillrag.cli.main import main
    from skillrag.evaluation import collect_runs, read_tool_log

    folder = ws.runs_dir / "hp-001"
    assert json.loads((folder / "record.json").read_text())["harness"] == "extractive"
    earlier = read_output(ws, "hp-001")
    mine = {k: v for k, v in earlier.items() if k not in ("audit", "meta")}
    mine["guidance"] = earlier["guidance"] + "\nChecked by hand."
    (tmp_path / "mine.json").write_text(json.dumps(mine), encoding="utf-8")
    common = ["-w", str(ws.root), "--cases", str(ws.root / "cases.jsonl")]
    assert main(["tool", "load-case", "hp-001", *common]) == 0
    assert main(["tool", "get-article", mine["snippets"][0]["source_article"], "--case", "hp-001",
                 "-w", str(ws.root)]) == 0
    assert main(["tool", "save-output", str(tmp_path / "mine.json"), *common]) == 0, capsys.readouterr().err
    assert read_output(ws, "hp-001")["guidance"].endswith("Checked by hand.")
    assert not (folder / "record.json").exists()
    [row] = [r for r in list_runs(ws) if r.case_id == "hp-001"]
    assert (row.harness, row.model, row.status) == ("", None, "accepted")
    assert row.date == read_output(ws, "hp-001")["audit"]["saved_at"]
    run = collect_runs(ws.runs_dir, ["hp-001"], tool_logs=[read_tool_log(ws.runs_dir / "tool_calls.jsonl")])["hp-001"]
    assert run.cost_source == "tool_log" and run.record_status is None
    assert (run.record["queries"], len(run.record["fetches"])) == ([], 1)  # this session's calls, not the harness's


# regression (issue 21, class 6): without a record the page showed the output's `meta.harness`, a field
# the agent writes, as the run's harness; provenance comes from record.json alone
def test_the_harness_shown_never_comes_from_the_agents_meta(ws, tmp_path):
    from skillrag.cli.main import main

    earlier = read_output(ws, "hp-001")
    mine = {k: v for k, v in earlier.items() if k != "audit"}
    mine["meta"] = {"harness": "llm", "model": "gpt-9-forged"}
    (tmp_path / "mine.json").write_text(json.dumps(mine), encoding="utf-8")
    common = ["-w", str(ws.root), "--cases", str(ws.root / "cases.jsonl")]
    assert main(["tool", "load-case", "hp-001", *common]) == 0
    assert main(["tool", "save-output", str(tmp_path / "mine.json"), *common]) == 0
    assert read_output(ws, "hp-001")["meta"]["harness"] == "llm"  # stored as given
    [row] = [r for r in list_runs(ws) if r.case_id == "hp-001"]
    assert (row.harness, row.model) == ("", None)
    assert (load_run(ws, "hp-001").summary.harness, load_run(ws, "hp-001").summary.model) == ("", None)
