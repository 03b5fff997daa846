"""Guidance versions on a real workspace: each version's steps linked to its own snippets by the one
rule (never by number), evidence a reviewer adds (checked by the evidence contract, stored as a new
version), each version's warnings, and the list page's columns."""

from __future__ import annotations

import re

import pytest

from skillrag.corpus import ArticleStore
from skillrag.errors import ArticleNotFound, ContractViolation, ReviewConflict, UserError
from skillrag.review import ReviewStore, add_evidence, guidance_summary, list_runs, load_run

from .conftest import output_path, read_output, sha_of


def _steps(guidance: str) -> list[str]:
    return [ln for ln in guidance.split("\n") if re.match(r"^\s*\d+\.", ln)]


def _reordered(guidance: str) -> str:
    """The numbered lines of ``guidance`` in reverse order, renumbered, as a reviewer's edit."""
    steps = [re.sub(r"^\s*\d+\.\s*", "", ln) for ln in _steps(guidance)][::-1]
    return "\n".join(f"{i}. {text}" for i, text in enumerate(steps, 1))


def test_an_edit_that_reorders_the_steps_keeps_each_snippet_on_its_step(ws):
    out = read_output(ws, "hp-001")
    n = len(out["snippets"])
    assert all(f"step {i + 1} " in s["why"] for i, s in enumerate(out["snippets"]))  # the agent named its steps
    edited = _reordered(out["guidance"])
    ReviewStore(ws).edit("hp-001", sha_of(ws, "hp-001"), "Dana", edited, base_version=0)
    view = load_run(ws, "hp-001")
    v0, v1 = view.versions
    for ln in v0.lines:  # version 0: snippet i backs step i + 1, as its why says
        if ln.number is not None:
            assert ln.snippets == [ln.number - 1] and ln.how == {ln.number - 1: "stated"}
    steps1 = [ln for ln in v1.lines if ln.number is not None]
    assert [ln.snippets for ln in steps1] == [[n - k] for k in range(1, n + 1)]  # followed its step, not its number
    assert all(set(ln.how.values()) == {"stated"} for ln in steps1)
    assert v1.unlinked == [] and v1.warnings == []


def test_added_evidence_by_offsets_is_a_new_version_and_version_0_never_changes(ws):
    before = output_path(ws, "hp-002").read_bytes()
    out = read_output(ws, "hp-002")
    n = len(out["snippets"])
    aid = out["snippets"][0]["source_article"]
    body = ArticleStore(ws).get(aid).body
    taken = {(r["start"], r["end"]) for r in out["audit"]["snippets"]}
    sentence = next(m for m in re.finditer(r"[A-Z][^.\n]{30,200}\.", body) if (m.start(), m.end()) not in taken
                    and all(m.group(0) not in s["text"] for s in out["snippets"]))
    act = add_evidence(ws, "hp-002", "Dana", output_sha256=sha_of(ws, "hp-002"), base_version=0,
                       article_id=aid, start=sentence.start(), end=sentence.end(), why="Backs step 1: the rule.")
    assert (act.action, act.version) == ("edit", 1)
    assert output_path(ws, "hp-002").read_bytes() == before  # the agent's output is untouched
    view = load_run(ws, "hp-002")
    v0, v1 = view.versions
    assert (v0.n_snippets, v1.n_snippets) == (n, n + 1) and v1.version.guidance == out["guidance"]
    assert n == 15  # the skill's max_snippets: a reviewer's snippet does not count against the agent's budget
    assert v1.accepted and v0.accepted
    added = view.snippets[n]
    assert (added.text, added.source_article, added.added_in, added.added_by) == (sentence.group(0), aid, 1, "Dana")
    assert added.status == "verified" and (added.span.start, added.span.end) == (sentence.start(), sentence.end())
    # the why names step 1 of the guidance it was added to; version 0 does not have the snippet at all
    assert n in next(ln for ln in v1.lines if ln.number == 1).snippets
    assert all(n not in ln.snippets for ln in v0.lines)
    art = next(a for a in view.articles if a.id == aid)
    assert n in art.snippets and f'id="mark-{n + 1}"' in art.rendered.html
    assert view.summary.n_snippets == n + 1 and view.summary.version == 1
    # a later edit of the guidance keeps the added snippet, under the same number
    ReviewStore(ws).edit("hp-002", sha_of(ws, "hp-002"), "Lee", "1. Check the rule.\n2. Decide.", base_version=1)
    v2 = load_run(ws, "hp-002").latest
    assert (v2.version.version, v2.n_snippets, v2.accepted) == (2, n + 1, True)


def test_a_pasted_passage_is_located_and_a_passage_not_in_the_article_is_refused(ws):
    out = read_output(ws, "hp-003")
    aid = out["snippets"][0]["source_article"]
    art = ArticleStore(ws).get(aid)
    sha = sha_of(ws, "hp-003")
    with pytest.raises(ContractViolation) as exc:
        add_evidence(ws, "hp-003", "Dana", output_sha256=sha, base_version=0, article_id=aid,
                     text="Refunds are always paid in cash within one hour.", why="step 1")
    assert any("not a verbatim substring" in r for r in exc.value.reasons)
    assert ReviewStore(ws).actions("hp-003") == []
    # pasted with other whitespace and typographic quotes: the contract's normalisation finds it
    line = next(ln for ln in art.body.split("\n") if len(ln) > 40 and all(ln not in s["text"] for s in out["snippets"]))
    pasted = "  " + line.replace(" ", "\n", 1).replace("'", "\u2019") + " "
    add_evidence(ws, "hp-003", "Dana", output_sha256=sha, base_version=0, article_id=aid, text=pasted,
                 why="step 2")
    view = load_run(ws, "hp-003")
    new = view.snippets[-1]
    assert new.text == line.strip() and new.status == "verified"
    # what the contract refuses: a duplicate of a snippet of the same article, a passage too short
    with pytest.raises(ContractViolation, match="duplicates"):
        add_evidence(ws, "hp-003", "Lee", output_sha256=sha, base_version=1, article_id=aid, text=line, why="again")
    i = art.body.index(line)
    with pytest.raises(ContractViolation, match="at least"):
        add_evidence(ws, "hp-003", "Lee", output_sha256=sha, base_version=1, article_id=aid, start=i, end=i + 5,
                     why="short")
    # bad input: offsets outside the text, one offset, nothing given, no why, an unknown article
    for kw, match in [({"start": 0, "end": len(art.body) + 1}, "not a passage"), ({"start": 3}, "both"),
                      ({}, "paste it"), ({"start": 0, "end": 40, "why": " "}, "why"),
                      ({"start": i, "end": i + 20, "text": "something else entirely"}, "do not hold")]:
        args = {"why": "step 1", **kw}
        with pytest.raises(UserError, match=match):
            add_evidence(ws, "hp-003", "Lee", output_sha256=sha, base_version=1, article_id=aid, **args)
    with pytest.raises(ArticleNotFound):
        add_evidence(ws, "hp-003", "Lee", output_sha256=sha, base_version=1, article_id="kb-nowhere",
                     start=0, end=20, why="step 1")
    # a stale page: the latest version moved on, or the run changed
    with pytest.raises(ReviewConflict):
        add_evidence(ws, "hp-003", "Lee", output_sha256=sha, base_version=0, article_id=aid, start=i, end=i + 30,
                     why="step 1")
    with pytest.raises(ReviewConflict):
        add_evidence(ws, "hp-003", "Lee", output_sha256="0" * 64, base_version=1, article_id=aid, start=i,
                     end=i + 30, why="step 1")
    assert [a.version for a in ReviewStore(ws).actions("hp-003")] == [1]


def test_a_step_naming_what_no_snippet_holds_is_a_warning_of_that_version(ws):
    out = read_output(ws, "hp-001")
    edited = out["guidance"] + "\n16. If Airplane Mode is ON, turn it off with `toggle_airplane_mode()`; refund $75."
    ReviewStore(ws).edit("hp-001", sha_of(ws, "hp-001"), "Dana", edited, base_version=0)
    view = load_run(ws, "hp-001")
    assert view.versions[0].warnings == []
    warned = {(w.gap.kind, w.gap.subject, w.steps) for w in view.latest.warnings}
    assert ("unquoted_identifier", "toggle_airplane_mode", (16,)) in warned
    assert ("unquoted_identifier", "$75", (16,)) in warned
    assert [w.gap.subject for w in view.latest.step_warnings(16)] == ["toggle_airplane_mode", "$75"]
    [row] = [r for r in list_runs(ws) if r.case_id == "hp-001"]
    assert row.warnings == len(view.latest.warnings) >= 2


def test_the_list_tells_runs_apart(ws):
    ReviewStore(ws).approve("hp-002", sha_of(ws, "hp-002"), "Lee", version=0)
    rows = {r.case_id: r for r in list_runs(ws)}
    for cid, row in rows.items():
        out = read_output(ws, cid)
        case = (ws.runs_dir / cid / "case.json").read_text()
        assert row.contact_reason and row.contact_reason in case
        assert row.n_snippets == len(out["snippets"]) and row.n_steps == len(_steps(out["guidance"]))
        assert row.warnings == 0 and row.version == 0
        first = re.sub(r"^\s*1\.\s*", "", _steps(out["guidance"])[0]).replace("`", "")
        assert len(row.summary) <= 120 and first.startswith(row.summary.rstrip("…"))
    assert rows["hp-001"].contact_reason == "Bookcase arrived with a cracked side panel"
    assert (rows["hp-002"].reviewer, rows["hp-001"].reviewer) == ("Lee", None)
    assert len({r.summary for r in rows.values()}) == 3


def test_guidance_summary():
    assert guidance_summary("Plan\n\n1. Verify with `verify_identity`.\n2. Refund.") == (
        "Verify with verify_identity.", 2)
    assert guidance_summary("No steps, **just** a line.\nMore.") == ("No steps, just a line.", 1)  # a paragraph is a step
    text, _ = guidance_summary("1. " + "word " * 60)
    assert len(text) <= 120 and text.endswith("word…")
    assert guidance_summary("") == ("", 0)
