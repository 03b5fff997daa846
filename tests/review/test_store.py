"""ReviewStore on a real SQLite file: actions with reviewer, time and comment; edits as new versions;
stale pages refused; the tables are append-only."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from skillrag.errors import InvalidIdError, ReviewConflict, UserError
from skillrag.review import ReviewStore
from skillrag.workspace import Workspace

SHA = "a" * 64
OTHER = "b" * 64


@pytest.fixture
def store(tmp_path) -> ReviewStore:
    return ReviewStore(Workspace.init(tmp_path / "ws"))


def _rows(store: ReviewStore, table: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(store.workspace.store_path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    finally:
        conn.close()


def test_approve_is_recorded_with_reviewer_time_and_comment(store):
    assert store.state("c1", SHA).state == "pending"
    act = store.approve("c1", SHA, "  Dana  ", version=0, comment="checked every quote")
    assert (act.action, act.version, act.reviewer, act.comment) == ("approve", 0, "Dana", "checked every quote")
    assert datetime.fromisoformat(act.at).tzinfo is not None
    st = store.state("c1", SHA)
    assert st.state == "approved" and st.approved_version == 0 and st.last == act
    [row] = _rows(store, "review_actions")  # in the workspace store file itself
    assert (row["case_id"], row["output_sha256"], row["reviewer"], row["comment"]) == ("c1", SHA, "Dana",
                                                                                      "checked every quote")


def test_reject_needs_a_reason(store):
    with pytest.raises(UserError, match="reason"):
        store.reject("c1", SHA, "Dana", "   ", version=0)
    assert _rows(store, "review_actions") == []
    act = store.reject("c1", SHA, "Dana", "step 3 quotes the wrong tier", version=0)
    assert store.state("c1", SHA).state == "rejected" and act.comment == "step 3 quotes the wrong tier"


def test_edits_are_new_versions_and_never_overwrite(store):
    e1 = store.edit("c1", SHA, "Dana", "1. Verify.\r\n2. Refund.", base_version=0, comment="shorter")
    assert (e1.action, e1.version) == ("edit", 1)
    e2 = store.edit("c1", SHA, "Lee", "1. Verify the customer.\n2. Refund.", base_version=1)
    vs = store.versions("c1", SHA, original="agent text")
    assert [(v.version, v.guidance, v.reviewer) for v in vs] == [
        (0, "agent text", None), (1, "1. Verify.\n2. Refund.", "Dana"), (2, "1. Verify the customer.\n2. Refund.", "Lee")]
    assert vs[1].comment == "shorter" and vs[2].at == e2.at
    st = store.state("c1", SHA)
    assert st.state == "edited" and st.latest_version == 2 and st.approved_version is None
    store.approve("c1", SHA, "Dana", version=2)
    assert store.state("c1", SHA).approved_version == 2


def test_a_stale_page_is_refused_and_writes_nothing(store):
    store.edit("c1", SHA, "Dana", "1. New text.", base_version=0)
    before = (len(_rows(store, "review_actions")), len(_rows(store, "review_guidance")))
    with pytest.raises(ReviewConflict, match="latest is version 1"):
        store.edit("c1", SHA, "Lee", "1. Other text.", base_version=0)
    with pytest.raises(ReviewConflict):
        store.approve("c1", SHA, "Lee", version=0)
    with pytest.raises(ReviewConflict):
        store.reject("c1", SHA, "Lee", "no", version=3)
    assert (len(_rows(store, "review_actions")), len(_rows(store, "review_guidance"))) == before


def test_tables_are_append_only(store):
    store.edit("c1", SHA, "Dana", "1. New text.", base_version=0)
    conn = sqlite3.connect(store.workspace.store_path)
    try:
        for sql in ("UPDATE review_guidance SET guidance = 'x'", "DELETE FROM review_guidance",
                    "UPDATE review_actions SET reviewer = 'x'", "DELETE FROM review_actions"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(sql)
    finally:
        conn.close()
    assert store.versions("c1", SHA, "orig")[1].guidance == "1. New text."


def test_each_output_has_its_own_review(store):
    store.approve("c1", SHA, "Dana", version=0)
    assert store.state("c1", OTHER).state == "pending"  # the case was run again: a fresh review
    store.reject("c1", OTHER, "Dana", "worse", version=0)
    store.edit("c2", SHA, "Lee", "1. x y z.", base_version=0)
    states = store.states()
    assert {k: v.state for k, v in states.items()} == {("c1", SHA): "approved", ("c1", OTHER): "rejected",
                                                       ("c2", SHA): "edited"}
    for (case_id, sha), st in states.items():
        assert st == store.state(case_id, sha)
    assert [a.action for a in store.actions("c1")] == ["approve", "reject"]
    assert len(store.actions()) == 3


@pytest.mark.parametrize("reviewer", ["", "   ", "x" * 101, "Dana\nEve", "tab\there"])
def test_bad_reviewer_names_are_refused(store, reviewer):
    with pytest.raises(UserError, match="reviewer"):
        store.approve("c1", SHA, reviewer, version=0)


def test_bad_ids_hashes_and_versions_are_refused(store):
    with pytest.raises(InvalidIdError):
        store.approve("../etc", SHA, "Dana", version=0)
    with pytest.raises(UserError, match="output_sha256"):
        store.approve("c1", "not-a-hash", "Dana", version=0)
    with pytest.raises(UserError, match="version"):
        store.approve("c1", SHA, "Dana", version=-1)
    with pytest.raises(UserError, match="guidance"):
        store.edit("c1", SHA, "Dana", "  \n ", base_version=0)
    with pytest.raises(UserError, match="comment"):
        store.approve("c1", SHA, "Dana", version=0, comment="x" * 4001)
    assert _rows(store, "review_actions") == []


def test_added_evidence_is_a_version_of_its_own_and_append_only(store):
    from skillrag.review import AddedSnippet

    snip = AddedSnippet("kb-a", "Article A", "A passage of article A.", "Backs step 2.", 10, 33, "h" * 64, 2)
    act = store.add_evidence("c1", SHA, "Dana", "1. Verify.\n2. Refund.", snip, base_version=0, comment="found it")
    assert (act.action, act.version, act.comment) == ("edit", 1, "found it")
    store.edit("c1", SHA, "Lee", "1. Verify.\n2. Refund now.", base_version=1)
    v0, v1, v2 = store.versions("c1", SHA, original="1. Verify.\n2. Refund.")
    assert (v0.added, v1.added, v2.added) == ((), (snip,), ())
    assert v1.guidance == "1. Verify.\n2. Refund." and v1.reviewer == "Dana"
    assert snip.snippet() == {"source_article": "kb-a", "source_title": "Article A", "text": "A passage of article A.",
                              "why": "Backs step 2."}
    assert snip.record(15) == {"index": 15, "source_article": "kb-a", "start": 10, "end": 33, "content_hash": "h" * 64,
                               "occurrences": 2, "matched": 1}
    with pytest.raises(ReviewConflict):  # a stale page adds nothing
        store.add_evidence("c1", SHA, "Dana", "x", snip, base_version=1)
    with pytest.raises(UserError, match="offsets"):
        store.add_evidence("c1", SHA, "Dana", "x", AddedSnippet("kb-a", "A", "text", "why", 5, 5, "h"), base_version=2)
    assert store.versions("c1", OTHER, original="o")[1:] == []  # another output's review is another review
    conn = sqlite3.connect(store.workspace.store_path)
    try:
        for sql in ("UPDATE review_snippets SET text = 'forged'", "DELETE FROM review_snippets"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(sql)
    finally:
        conn.close()
    assert [r["text"] for r in _rows(store, "review_snippets")] == ["A passage of article A."]
