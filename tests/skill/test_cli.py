"""The skill's CLI through ``skillrag.cli.main.main``: exit codes, one-line errors, JSON output."""

from __future__ import annotations

import json

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore
from skillrag.skill.testing import make_output
from skillrag.skill.views import BODY_RULE


def _out(capsys):
    cap = capsys.readouterr()
    return cap.out, cap.err


@pytest.fixture
def good(tmp_path):
    o = make_output("case_1", [("art_card_lost", "The customer's identity must be verified before any change")])
    p = tmp_path / "good.json"
    p.write_text(json.dumps(o))
    return p


@pytest.fixture
def bad(tmp_path):
    o = make_output("case_1", [("art_card_lost", "the customer must be verified"), ("art_x", "whatever text here")])
    o["n_snippets"] = 5
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(o))
    return p


def test_validate_against_workspace(ws, good, bad, capsys):
    assert main(["validate", str(good), "-w", str(ws.root)]) == 0
    assert "accepted: 1 snippets" in _out(capsys)[0]
    assert main(["validate", str(bad), "-w", str(ws.root)]) == 1
    err = _out(capsys)[1]
    assert err.startswith("error: output rejected:")
    assert "- snippets[0].text: not a verbatim substring of article 'art_card_lost'" in err
    assert "- snippets[1].source_article: unknown article 'art_x'" in err
    assert "- n_snippets: 5 does not match" in err
    assert main(["validate", str(bad), "-w", str(ws.root), "--json"]) == 1
    data = json.loads(_out(capsys)[0])
    assert data["accepted"] is False and len(data["reasons"]) >= 3


@pytest.mark.parametrize("tamper", [
    {"snippets": 5},
    {"audit": ["not", "an", "object"]},
    {"audit": {"snippets": 7}},
    {"audit": {"snippets": [{"index": 0, "source_article": ["x"], "start": 0, "end": 3, "content_hash": "h"}]}},
    {"snippets": [{"source_article": ["art_card_lost"], "source_title": "t", "text": "x" * 20, "why": "w"}]},
])
def test_validate_reports_a_tampered_output_instead_of_crashing(ws, good, tamper, capsys):
    data = json.loads(good.read_text())
    data.update(tamper)
    good.write_text(json.dumps(data))
    assert main(["validate", str(good), "-w", str(ws.root), "--json"]) == 1
    out, err = _out(capsys)
    assert "Traceback" not in err and json.loads(out)["accepted"] is False


def test_validate_with_articles_file(tmp_path, good, capsys):
    arts = tmp_path / "arts.json"
    arts.write_text(json.dumps({"art_card_lost": "The customer\u2019s identity must be verified before any change."}))
    assert main(["validate", str(good), "--articles", str(arts)]) == 0
    arts.write_text(json.dumps({"art_card_lost": "Something else entirely, nothing to see."}))
    assert main(["validate", str(good), "--articles", str(arts)]) == 1
    _out(capsys)


@pytest.mark.parametrize("args", [
    ["validate", "missing.json", "--articles", "also-missing.json"],
    ["validate"],
    ["validate", "x.json", "--no-such-flag"],
])
def test_validate_usage_errors_exit_2(tmp_path, monkeypatch, args, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = _out(capsys)[1]
    assert "Traceback" not in err


def test_validate_bad_articles_file(tmp_path, good, capsys):
    arts = tmp_path / "arts.json"
    arts.write_text("[1, 2]")
    assert main(["validate", str(good), "--articles", str(arts)]) == 2
    assert "expected a JSON object mapping article id" in _out(capsys)[1]


def test_tool_commands(ws, cases_path, good, capsys, gt_secret):
    w = ["-w", str(ws.root)]
    assert main(["tool", "load-case", "case_1", "--cases", str(cases_path), *w]) == 0
    out = _out(capsys)[0]
    assert json.loads(out)["case_id"] == "case_1" and gt_secret not in out
    assert main(["tool", "get-article", "art_fees", *w]) == 0
    out = _out(capsys)[0]
    head, body = out.split(BODY_RULE + "\n")
    assert head.startswith("id: art_fees\ntitle: Fee table\n") and "1. Fees" in head
    assert ("budget: case case_1, after this call: queries 0 used, 5 left (of 5); fetches 1 used, 11 left (of 12); "
            "saves 0 used, 4 left (of 4)") in head
    assert body == ArticleStore(ws).get("art_fees").body + "\n"
    assert main(["tool", "get-article", "art_card_lost", "--section", "Replacement", "--json", *w]) == 0
    got = json.loads(_out(capsys)[0])
    assert got["part"] == "section:2" and got["budget"] == {"counted": "after this call", "queries_left": 5, "queries_used": 0, "fetches_left": 10, "fetches_used": 2, "saves_left": 4, "saves_used": 0}
    assert main(["tool", "get-article", "../etc", *w]) == 2
    assert _out(capsys)[1].startswith("error: '../etc' is not a valid article id")
    assert main(["tool", "save-output", str(good), *w]) == 0
    res = json.loads(_out(capsys)[0])
    assert res["accepted"] and (ws.runs_dir / "case_1" / "output.json").is_file()
    assert res["evidence"][0]["start"] >= 0 and res["budget"]["saves_left"] == 3
    assert main(["tool", "load-case", "case_1", *w]) == 2
    assert "no case file" in _out(capsys)[1]


def test_tool_retrieve_without_index_is_one_line_error(ws, capsys):
    code = main(["tool", "retrieve", "lost card", "--case", "case_1", "-w", str(ws.root)])
    err = _out(capsys)[1]
    assert code == 2 and err.startswith("error:") and "Traceback" not in err


def test_cases_list_and_show(cases_path, capsys, gt_secret):
    assert main(["cases", "list", "--cases", str(cases_path), "--json"]) == 0
    rows = json.loads(_out(capsys)[0])
    assert [r["case_id"] for r in rows] == ["case_1", "case_2"]
    assert main(["cases", "show", "case_1", "--cases", str(cases_path)]) == 0
    out = _out(capsys)[0]
    assert "ground_truth" not in out and gt_secret not in out
    assert main(["cases", "show", "nope", "--cases", str(cases_path)]) == 2


def test_skill_list_check_export(ws, tmp_path, capsys):
    w = ["-w", str(ws.root)]
    assert main(["skill", "list", "--json", *w]) == 0
    assert "cs-guidance" in [s["name"] for s in json.loads(_out(capsys)[0])["skills"]]
    assert main(["skill", "export", "cs-guidance", str(tmp_path / "exp"), *w]) == 0
    assert main(["skill", "check", str(tmp_path / "exp" / "cs-guidance")]) == 0
    bad = tmp_path / "Bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad\ndescription: x\n---\nbody\n")
    assert main(["skill", "check", str(bad), "--json"]) == 1
    out = _out(capsys)[0]
    assert json.loads(out[out.index("{"):])["ok"] is False
    assert main(["skill", "export", "nope", str(tmp_path / "e2"), *w]) == 2
    assert "no skill named 'nope'" in _out(capsys)[1]


def test_validate_a_folder_or_binary_file_is_a_one_line_error(tmp_path, good, capsys):
    # regression: `skillrag validate /tmp` printed an IsADirectoryError traceback
    assert main(["validate", str(tmp_path), "--articles", str(tmp_path)]) == 2
    err = _out(capsys)[1]
    assert err.startswith("error:") and "is a folder" in err and "Traceback" not in err
    binary = tmp_path / "out.json"
    binary.write_bytes(b"\xff\xfe\x00junk")
    assert main(["validate", str(binary), "--articles", str(tmp_path)]) == 2
    err = _out(capsys)[1]
    assert err.startswith("error:") and "not UTF-8" in err


def test_skill_check_of_a_missing_folder_is_an_error_line(tmp_path, capsys):
    # regression: `skill check /nonexistent` printed "- /nonexistent: not a folder" and exited 1
    assert main(["skill", "check", str(tmp_path / "nonexistent")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'nonexistent'}: no such folder\n"
    (tmp_path / "file").write_text("x")
    assert main(["skill", "check", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'file'}: not a folder\n"
