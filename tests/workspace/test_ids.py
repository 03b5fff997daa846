"""One id validator for every kind of id (issue 21, class 6): ``skillrag.workspace.ids``.

Each checker the packages had of their own now goes through it, so each refuses what the rule refuses
(a final newline above all), and a case id can never name a file or folder of the workspace."""

from __future__ import annotations

import json

import pytest

from skillrag.corpus import check_id as corpus_check_id
from skillrag.errors import ContractViolation, InvalidIdError, MalformedSourceError
from skillrag.service.skills import parse_slug
from skillrag.service.threads import check_thread_id
from skillrag.skill import CaseFile, CaseRecord, SkillRegistry, SkillTools, write_cases
from skillrag.skill.case_import import _valid_id
from skillrag.skill.contract import validate_output
from skillrag.skill.spec import check_front_matter
from skillrag.skill.testing import make_output
from skillrag.wiki.page import Page, check_page_id
from skillrag.workspace import Workspace
from skillrag.workspace.ids import ID_RULES, RUNS_SUBFOLDERS, SHOWN_CHARS, check_id, is_id, make_id


@pytest.mark.parametrize(("kind", "good"), [
    ("article", "doc_a_(x)+1:b.c"), ("section", "manual#roaming-2"), ("source", "a.b-c:d"), ("case", "task_002"),
    ("page", "gold-rewards-card"), ("skill", "cs-guidance"), ("thread", "t.1-a_b"),
])
def test_each_kind_takes_its_plain_ids_and_never_a_final_newline(kind, good):
    assert check_id(good, kind) == good
    for bad in (good + "\n", good + "\r\n", "\n" + good, "", "../" + good, good + "/x"):
        assert not is_id(bad, kind), (kind, bad)
        with pytest.raises(InvalidIdError, match=f"not a valid {kind} id"):
            check_id(bad, kind)


# regression: wiki/page.py and skill/spec.py matched `^…$` with `.match`, and `$` also matches before a
# final newline, so "gold-card\n" was a page id and "cs-guidance\n" a skill name
def test_the_page_and_skill_checks_use_the_one_rule():
    assert check_page_id("gold-card") == "gold-card"
    with pytest.raises(InvalidIdError, match="not a valid page id"):
        check_page_id("gold-card\n")
    with pytest.raises(ValueError, match="not a valid page id"):
        Page(id="gold-card\n", title="Gold")
    assert check_front_matter({"name": "cs-guidance", "description": "Use when x."}, None) == []
    reasons = check_front_matter({"name": "cs-guidance\n", "description": "Use when x."}, None)
    assert any("must be lowercase letters" in r for r in reasons)
    assert parse_slug("/cs-guidance what is the fee") == ("cs-guidance", "what is the fee")
    with pytest.raises(Exception, match="does not name a skill"):
        parse_slug("/CS_guidance.x what is the fee")  # a slug is a skill name (the skill rule) or nothing
    with pytest.raises(InvalidIdError, match="not a valid thread id"):
        check_thread_id("t1\n")


def test_every_package_checker_is_the_one_function():
    assert corpus_check_id is check_id
    for value in ("ok\n", "a/b", "a..b"):
        assert not is_id(value, "article")
        reasons = validate_output({"case_id": value, "guidance": "g", "snippets": [], "n_snippets": 0,
                                   "articles_consulted": [value]}, {})
        assert any(r.startswith("case_id") for r in reasons) and any("articles_consulted" in r for r in reasons)


# regression: a case id "tool_calls.jsonl" was accepted, so runs/tool_calls.jsonl/ became the case's
# folder (or its output was refused because the log file was there) and the tool log broke; "#" was
# accepted too and broke the review links (/review/a#b is /review/a plus a fragment)
@pytest.mark.parametrize("case_id", ["tool_calls.jsonl", "output.json", "a.record", "case#1", "eval", "ASK", "Eval"])
def test_a_case_id_can_never_name_a_workspace_file(case_id):
    assert not is_id(case_id, "case")
    with pytest.raises(InvalidIdError, match="not a valid case id"):
        check_id(case_id, "case")
    assert set(RUNS_SUBFOLDERS) == {"ask", "eval"}


def test_a_case_file_naming_the_tool_log_is_refused_and_the_log_keeps_working(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    log = ws.runs_dir / "tool_calls.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"case_id": "tool_calls.jsonl", "contact_reason": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(MalformedSourceError, match="line 1: 'tool_calls.jsonl' is not a valid case id"):
        CaseFile(bad)
    good = tmp_path / "good.jsonl"
    write_cases(good, [CaseRecord(case_id="c1", contact_reason="x")])
    tools = SkillTools(ws, SkillRegistry(ws).get("cs-guidance"), CaseFile(good), log_path=log, surface="cli")
    with pytest.raises(ContractViolation) as ei:  # the Python API's save names the folder by case id
        SkillTools(ws, tools.skill, log_path=log).save_output(make_output("tool_calls.jsonl", []))
    assert any(r.startswith("case_id") for r in ei.value.reasons)
    assert not (ws.runs_dir / "tool_calls.jsonl").is_dir()
    tools.load_case("c1")
    assert log.is_file() and [json.loads(x)["tool"] for x in log.read_text().splitlines()][-1] == "load_case"


def test_an_over_long_value_makes_a_short_error():
    with pytest.raises(InvalidIdError) as ei:
        check_id("x" * 100_000, "case")
    assert len(str(ei.value)) < SHOWN_CHARS + 300 and "(100,000 chars)" in str(ei.value)


def test_imported_ids_are_made_to_the_case_rule():
    assert make_id("2024.01 case#1", "case") == "2024-01-case-1" == _valid_id("2024.01 case#1")
    assert make_id("task_002", "case") == "task_002"
    assert make_id("..", "case") == "" and make_id("eval", "case") == ""
    assert ID_RULES["case"].schema_pattern.startswith("^") and ID_RULES["case"].schema_pattern.endswith("$")
