"""`skillrag skill …` through the real entry point, as the README's tour runs it."""

from __future__ import annotations

import json
import shutil

from skillrag.cli.main import main


def test_skill_check_accepts_the_folder_skill_export_was_given(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    exported = tmp_path / "exported"
    assert main(["skill", "export", "cs-guidance", str(exported), "-w", str(ws)]) == 0
    capsys.readouterr()

    # the README: `skillrag skill export cs-guidance DIR`, then `skillrag skill check DIR`
    assert main(["skill", "check", str(exported)]) == 0
    out = capsys.readouterr().out
    assert f"{exported / 'cs-guidance'}: conforms" in out and "missing" not in out
    # the skill folder itself still works
    assert main(["skill", "check", str(exported / "cs-guidance")]) == 0
    capsys.readouterr()

    # a second skill folder that breaks a rule: each folder is named, the broken one's problems listed
    shutil.copytree(exported / "cs-guidance", exported / "copy")
    assert main(["skill", "check", str(exported), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert [(s["folder"], s["ok"]) for s in data["skills"]] == [
        (str(exported / "copy"), False), (str(exported / "cs-guidance"), True)]
    assert data["problems"] == ["copy: front matter: name 'cs-guidance' does not match its folder 'copy'"]
    assert main(["skill", "check", str(exported)]) == 1
    out = capsys.readouterr().out
    assert f"{exported / 'copy'}: does not conform" in out and "does not match its folder 'copy'" in out


def test_skill_check_of_a_folder_without_skills_still_says_what_is_missing(tmp_path, capsys):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    assert main(["skill", "check", str(tmp_path / "empty")]) == 1
    assert "- SKILL.md: missing" in capsys.readouterr().out
