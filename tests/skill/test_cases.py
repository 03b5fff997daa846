"""Case files: the agent-facing Case has no ground truth; bad files fail with one clear line."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from skillrag.errors import CaseNotFound, EmptyInputError, MalformedSourceError
from skillrag.skill import AGENT_FIELDS, Case, CaseFile, GroundTruth


def test_load_returns_agent_fields_only(cases_path, gt_secret):
    cf = CaseFile(cases_path)
    assert cf.ids() == ["case_1", "case_2"] and len(cf) == 2
    case = cf.load("case_1")
    dumped = case.model_dump(mode="json")
    assert tuple(dumped) == AGENT_FIELDS
    assert dumped["n_messages"] == 1 and dumped["n_notes"] == 1
    assert gt_secret not in json.dumps(dumped)
    assert "freeze_card_tool_9911" not in json.dumps(dumped)


def test_case_type_cannot_hold_ground_truth():
    assert "ground_truth" not in Case.model_fields
    assert not set(Case.model_fields) & set(GroundTruth.model_fields) - {"case_id"}
    with pytest.raises(ValidationError):
        Case(case_id="x", contact_reason="y", ground_truth={"reference_guidance": "z"})


def test_ground_truth_only_through_its_own_call(cases_path, gt_secret):
    cf = CaseFile(cases_path)
    gt = cf.ground_truth("case_1")
    assert gt.reference_guidance == gt_secret
    assert gt.required_documents == ["art_card_lost"]
    assert gt.expected_tools == ["freeze_card_tool_9911"]
    assert cf.ground_truth("case_2") == GroundTruth(case_id="case_2")
    assert cf.has_ground_truth("case_1") and not cf.has_ground_truth("case_2")


def test_unknown_case(cases_path):
    with pytest.raises(CaseNotFound, match="no case with id 'zzz'"):
        CaseFile(cases_path).load("zzz")
    with pytest.raises(CaseNotFound):
        CaseFile(cases_path).ground_truth("zzz")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('{"case_id": "a", "contact_reason": "x"}\nnot json\n', "line 2: not JSON"),
        ('{"case_id": "a"}\n', "line 1: contact_reason: Field required"),
        ('{"case_id": "a", "contact_reason": "x", "surprise": 1}\n', "line 1: surprise"),
        ('{"case_id": "../a", "contact_reason": "x"}\n', "not a valid case id"),
        ('{"case_id": "a", "contact_reason": "x"}\n{"case_id": "a", "contact_reason": "y"}\n', "repeated"),
    ],
)
def test_malformed_case_files(tmp_path, content, match):
    p = tmp_path / "c.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(MalformedSourceError, match=match) as ei:
        CaseFile(p)
    assert "c.jsonl" in str(ei.value) and "\n" not in str(ei.value)


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "e.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(EmptyInputError):
        CaseFile(tmp_path / "e.jsonl")
    with pytest.raises(MalformedSourceError, match="no such case file"):
        CaseFile(tmp_path / "nope.jsonl")
