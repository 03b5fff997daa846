"""Export as an Agent Skills folder: passes the spec checks, and its scripts really run the tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from skillrag.errors import UserError
from skillrag.skill import SkillRegistry, check_skill_folder
from skillrag.skill.export import TOOL_SCRIPTS, export_skill


def test_export_layout_and_spec(ws, skill, tmp_path, cases_path):
    out = export_skill(skill, tmp_path / "exp", workspace=ws.root, cases=cases_path)
    assert out == tmp_path / "exp" / "cs-guidance"
    assert check_skill_folder(out) == []
    for script in TOOL_SCRIPTS:
        assert (out / "scripts" / f"{script}.py").is_file()
    cfg = json.loads((out / "scripts" / "config.json").read_text())
    assert cfg["workspace"] == str(ws.root) and cfg["cases"] == str(cases_path.resolve())
    ref = yaml.safe_load((out / "references" / "skill.yaml").read_text())
    assert ref["max_snippets"] == 15
    schema = json.loads((out / "references" / "output-schema.json").read_text())
    assert schema["properties"]["snippets"]["maxItems"] == 15
    text = (out / "SKILL.md").read_text()
    assert "scripts/save_output.py" in text and "skillrag tool retrieve" in text
    with pytest.raises(UserError, match="already exists"):
        export_skill(skill, tmp_path / "exp", workspace=ws.root)
    assert export_skill(skill, tmp_path / "exp", workspace=ws.root, overwrite=True) == out


def test_export_to_folder_named_like_the_skill(skill, tmp_path):
    out = export_skill(skill, tmp_path / "cs-guidance")
    assert out == tmp_path / "cs-guidance" and check_skill_folder(out) == []


def _run(script, *args, env):
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


@pytest.mark.slow
def test_exported_scripts_call_the_tools(ws, skill, tmp_path, cases_path):
    out = export_skill(skill, tmp_path / "exp", workspace=ws.root, cases=cases_path)
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLRAG_WORKSPACE", "SKILLRAG_CASES")}
    r = _run(out / "scripts" / "load_case.py", "case_1", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["contact_reason"] == "Customer lost their debit card"
    r = _run(out / "scripts" / "get_article.py", "art_fees", env=env)
    assert r.returncode == 0 and "Premium accounts pay no fee." in r.stdout
    good = {"case_id": "case_1", "guidance": "1. Check the fee.", "n_snippets": 1,
            "articles_consulted": ["art_fees"],
            "snippets": [{"source_article": "art_fees", "source_title": "Fee table",
                          "text": "Premium accounts pay no fee.", "why": "fee rule"}]}
    f = tmp_path / "o.json"
    f.write_text(json.dumps(good))
    r = _run(out / "scripts" / "save_output.py", str(f), env=env)
    assert r.returncode == 0, r.stderr
    assert (ws.runs_dir / "case_1" / "output.json").is_file()
    good["snippets"][0]["text"] = "Premium accounts never pay a fee."
    f.write_text(json.dumps(good))
    r = _run(out / "scripts" / "save_output.py", str(f), env=env)
    assert r.returncode == 1 and "not a verbatim substring of article 'art_fees'" in r.stderr
    log = (ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()
    assert [json.loads(x)["tool"] for x in log] == ["load_case", "get_article", "save_output", "save_output"]


@pytest.mark.parametrize(
    ("front", "match"),
    [
        ("name: x-\ndescription: Use when a.", "single hyphens"),
        ("name: a--b\ndescription: Use when a.", "single hyphens"),
        ("name: " + "a" * 65 + "\ndescription: Use when a.", "at most 64"),
        ("name: other-name\ndescription: Use when a.", "does not match its folder"),
        ("name: NAME\ndescription: " + "w" * 1025, "at most 1024"),
        ("name: NAME\ndescription: Summarises tickets.", "say when to use"),
        ("name: NAME\ndescription: Use when a.\nversion: 2", "unknown field 'version'"),
        ("name: NAME\ndescription: Use when a.\nmetadata: {a: 1}", "'metadata' must map strings"),
    ],
)
def test_spec_rules(tmp_path, front, match):
    d = tmp_path / "good-name"
    d.mkdir()
    (d / "SKILL.md").write_text(f"---\n{front.replace('NAME', 'good-name')}\n---\nBody.\n")
    problems = check_skill_folder(d)
    assert any(match in p for p in problems), problems


def test_spec_missing_referenced_script_and_empty_body(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "SKILL.md").write_text("---\nname: s\ndescription: Use when testing.\n---\nRun scripts/go.py.\n")
    assert check_skill_folder(d) == ["SKILL.md: mentions scripts/go.py, which is not in the folder"]
    (d / "SKILL.md").write_text("---\nname: s\ndescription: Use when testing.\n---\n\n")
    assert check_skill_folder(d) == ["SKILL.md: the body (the instructions) is empty"]
    assert check_skill_folder(tmp_path / "none") == [f"{tmp_path / 'none'}: not a folder"]


def test_registry_skill_exports(ws, tmp_path):
    for s in SkillRegistry(ws).list():
        assert check_skill_folder(export_skill(s, tmp_path / "all")) == []


def test_exported_script_runs_without_skillrag_on_path(ws, skill, tmp_path, cases_path):
    # regression: with no `skillrag` on PATH and a Python without skillrag, the launcher died on
    # "No module named 'skillrag'"; it now uses the Python recorded at export time, else says so.
    out = export_skill(skill, tmp_path / "exp", workspace=ws.root, cases=cases_path)
    assert json.loads((out / "scripts" / "config.json").read_text())["python"] == sys.executable
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # no skillrag executable reachable
    bare = [sys.executable, "-S"]  # -S: no site-packages, so this Python cannot import skillrag
    r = subprocess.run([*bare, str(out / "scripts" / "get_article.py"), "art_fees", "--case", "case_1"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert r.returncode == 0 and "Premium accounts pay no fee." in r.stdout, r.stderr
    cfg = json.loads((out / "scripts" / "config.json").read_text())
    (out / "scripts" / "config.json").write_text(json.dumps({**cfg, "python": ""}))
    r = subprocess.run([*bare, str(out / "scripts" / "get_article.py"), "art_fees", "--case", "case_1"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert r.returncode == 2 and r.stderr.startswith("error: skillrag is not installed") and "Traceback" not in r.stderr


def test_spec_check_also_rejects_bad_skill_yaml(tmp_path):
    import shutil

    from skillrag.skill import builtin_skills_dir

    folder = tmp_path / "cs-guidance"
    shutil.copytree(builtin_skills_dir() / "cs-guidance", folder)
    assert check_skill_folder(folder) == []
    with (folder / "skill.yaml").open("a") as fh:
        fh.write("\nretrival_k: 3\n")
    reasons = check_skill_folder(folder)
    assert len(reasons) == 1 and "retrival_k" in reasons[0] and "unknown setting" in reasons[0]
