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
    # found by a new user: --force deleted a folder that was never an export, with their notes in it
    (out / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match=r"is not an earlier export \(it holds notes.txt\)"):
        export_skill(skill, tmp_path / "exp", workspace=ws.root, overwrite=True)
    assert (out / "notes.txt").read_text() == "mine"


def test_tools_md_states_the_backend_the_scripts_will_search(ws, skill, tmp_path):
    """A skill.yaml without a backend searches the workspace's `search.backend` (wiki by default):
    tools.md says which, so an agent knows whether `retrieve` returns pages."""
    def line(out):
        return next(ln for ln in (out / "references" / "tools.md").read_text().splitlines() if ln.startswith("Backend:"))

    assert skill.config.backend is None and ws.config.search.backend == "wiki"
    out = export_skill(skill, tmp_path / "a", workspace=ws.root)
    assert line(out) == ("Backend: wiki (the workspace's search.backend); "
                         "mode: hybrid (the workspace's search.mode).")
    ws.config_path.write_text(ws.config_path.read_text().replace("backend: wiki", "backend: direct"))
    assert line(export_skill(skill, tmp_path / "b", workspace=ws.root)).startswith(
        "Backend: direct (the workspace's search.backend);")
    assert line(export_skill(skill, tmp_path / "c")).startswith("Backend: wiki (the library default search.backend);")
    skill.config.backend = "direct"  # the skill's own setting wins
    assert line(export_skill(skill, tmp_path / "d", workspace=ws.root)).startswith("Backend: direct;")


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
    # only load_case opens a case's budget: a case never loaded is refused, with what to do
    assert r.returncode == 2 and "call load_case case_1 first" in r.stderr, r.stderr
    r = subprocess.run([*bare, str(out / "scripts" / "load_case.py"), "case_1"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*bare, str(out / "scripts" / "get_article.py"), "art_fees", "--case", "case_1"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert r.returncode == 0 and "Premium accounts pay no fee." in r.stdout, r.stderr
    cfg = json.loads((out / "scripts" / "config.json").read_text())
    (out / "scripts" / "config.json").write_text(json.dumps({**cfg, "python": ""}))
    r = subprocess.run([*bare, str(out / "scripts" / "get_article.py"), "art_fees", "--case", "case_1"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert r.returncode == 2 and r.stderr.startswith("error: skillrag is not installed") and "Traceback" not in r.stderr


def test_manual_tools_md_and_schema_agree_with_the_tools(skill, tmp_path):
    """What the friction runs asked for: filters that find "(Internal)" titles, siblings on the direct
    backend, a budget that says it counts after the call, and one story about extra output fields."""
    from skillrag.skill.contract import ALLOWED_TOP_FIELDS, OPTIONAL_TOP_FIELDS

    out = export_skill(skill, tmp_path / "exp")
    manual = (out / "SKILL.md").read_text()
    tools_md = (out / "references" / "tools.md").read_text()
    schema = json.loads((out / "references" / "output-schema.json").read_text())
    for text in (manual, tools_md):
        assert "--title-contains" in text and "after this call" in text and "queries_used" in text
        assert "Unknown fields are rejected" not in text
        assert all(f"`{f}`" in text for f in OPTIONAL_TOP_FIELDS)  # audit and meta are named and explained
    assert set(schema["properties"]) == set(ALLOWED_TOP_FIELDS) and schema["additionalProperties"] is False
    assert all(schema["properties"][f].get("description") for f in OPTIONAL_TOP_FIELDS)
    assert "direct backend" in manual and "--id-prefix STEM" in manual  # siblings without pages
    assert "bypass code" in manual and "first step" in manual and "one contiguous" in manual.lower()


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


@pytest.mark.slow
def test_exported_scripts_drive_a_whole_case_with_budgets(tmp_path, cases_path):
    """An external harness's view: the exported scripts run as subprocesses (each a new process),
    budgets are kept per case in the workspace, and the outputs carry everything SKILL.md promises."""
    from skillrag.cli.main import main
    from skillrag.skill import BudgetLedger
    from skillrag.skill.budget import refusal
    from skillrag.skill.views import BODY_RULE

    from .conftest import make_wiki_workspace

    ws = make_wiki_workspace(tmp_path)
    (ws.skills_dir / "cs-guidance").mkdir(parents=True)
    import shutil

    from skillrag.skill import builtin_skills_dir

    shutil.copytree(builtin_skills_dir() / "cs-guidance", ws.skills_dir / "cs-guidance", dirs_exist_ok=True)
    yml = ws.skills_dir / "cs-guidance" / "skill.yaml"
    yml.write_text(yml.read_text().replace("max_queries: 5", "max_queries: 3"))
    assert main(["skill", "export", "cs-guidance", str(tmp_path / "exp"), "-w", str(ws.root),
                 "--cases", str(cases_path)]) == 0
    out = tmp_path / "exp" / "cs-guidance"
    manual = (out / "SKILL.md").read_text()
    assert "**3 queries**" in manual and "**12 fetches**" in manual and "**4 saves**" in manual
    assert "${" not in manual and "--case CASE_ID" in manual
    assert "| queries | 3 |" in (out / "references" / "tools.md").read_text()
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLRAG_WORKSPACE", "SKILLRAG_CASES", "SKILLRAG_CASE")}
    scripts = out / "scripts"

    def sh(cmd: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, env={**env, **extra}, timeout=120,
                              cwd=scripts, check=False)

    py = sys.executable
    r = sh(f"{py} load_case.py case_1")
    assert r.returncode == 0, r.stderr
    case = json.loads(r.stdout)
    assert case["as_of"] and case["budget"] == {"counted": "after this call", "queries_left": 3, "queries_used": 0,
                                                "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}
    r = sh(f"{py} retrieve.py 'gold card annual fee' --case case_1 --id-prefix doc_cards_gold_")
    hits = json.loads(r.stdout)
    assert hits["hits"][0]["article_id"] == "doc_cards_gold_001" and hits["hits"][0]["section"] == "Fees"
    assert hits["pages"][0]["page_id"] == "cards-gold" and hits["budget"]["queries_left"] == 2
    r = sh(f"{py} retrieve.py --page cards-gold --case case_1")
    assert json.loads(r.stdout)["page"]["articles"][0]["id"] == "doc_cards_gold_001"
    # an id with parentheses, single-quoted as SKILL.md says
    r = sh(f"{py} get_article.py 'doc_cards_(general)_010' --case case_1")
    assert r.returncode == 0 and r.stdout.startswith("id: doc_cards_(general)_010\ntitle: Internal: card disputes")
    assert BODY_RULE in r.stdout
    r = sh(f"{py} get_article.py doc_cards_(general)_010 --case case_1")  # unquoted: the shell refuses it
    assert r.returncode != 0
    r = sh(f"{py} get_article.py doc_cards_gold_001 --json", SKILLRAG_CASE="case_1")
    art = json.loads(r.stdout)
    assert art["title"] == "Gold Rewards Card: annual fee" and art["budget"]["fetches_left"] == 10
    draft = tmp_path / "d.json"
    draft.write_text(json.dumps({
        "case_id": "case_1", "n_snippets": 1, "articles_consulted": ["doc_cards_gold_001"],
        "guidance": "1. Tell the customer the annual fee is $95, waived in the first year, and $40 if late.",
        "snippets": [{"source_article": "doc_cards_gold_001", "source_title": art["title"],
                      "text": "The Gold Rewards Card has an annual fee of $95, waived in the first year.",
                      "why": "fee"}]}))
    r = sh(f"{py} save_output.py {draft} --check")
    checked = json.loads(r.stdout)
    assert r.returncode == 0 and checked["checked_only"] and checked["budget"]["saves_left"] == 4
    assert [(w["kind"], w["subject"]) for w in checked["warnings"]] == [("unquoted_identifier", "$40")]
    r = sh(f"{py} save_output.py {draft}")
    saved = json.loads(r.stdout)
    assert r.returncode == 0 and saved["evidence"][0]["start"] > 0 and saved["budget"]["saves_left"] == 3
    r = sh(f"{py} save_output.py --status case_1")  # the receipt again, free
    status = json.loads(r.stdout)
    assert r.returncode == 0 and status["budget"]["saves_left"] == 3 and status["save_attempts"] == 1
    assert {k: v for k, v in status["last_save"].items() if k != "at"} == {k: v for k, v in saved.items()
                                                                          if k != "budget"}
    sh(f"{py} retrieve.py 'late payment' --case case_1")
    r = sh(f"{py} retrieve.py 'one query too many' --case case_1")
    state = BudgetLedger(ws).current("case_1", "cs-guidance")
    assert r.returncode == 2 and r.stdout == "" and r.stderr == f"error: {refusal('query', state)}\n"
    # two agents at once on two cases of one workspace
    procs = [subprocess.Popen(f"{py} load_case.py {c} && {py} retrieve.py 'card' --case {c}", shell=True,
                              cwd=scripts, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for c in ("case_2", "case_1")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert procs[0].returncode == 0, outs[0][1]
    assert json.loads(outs[0][0].split("\n}\n", 1)[1])["budget"]["queries_left"] == 2  # case_2's own account
    assert procs[1].returncode == 2 and "query budget spent" in outs[1][1]  # case_1's is still spent
    log = [json.loads(x) for x in (ws.runs_dir / "tool_calls.jsonl").read_text().splitlines()]
    assert {x["case_id"] for x in log} == {"case_1", "case_2"}


def test_the_method_for_hard_cases_is_in_the_manual_and_the_exported_folder(skill, tmp_path):
    """Several requests, rule-decided arguments, customer-side tools, partial cover, contradictions, sensitive
    data, comparisons, ids seen in results: one section of SKILL.md, exported as it is."""
    from skillrag.harness._prompts import HARD_CASES, manual_section

    method = manual_section(skill.manual, HARD_CASES)
    assert method is not None
    for point in ("preconditions", "effects", "no pending disputes", "Unfreeze the found card",
                  "the quoted rule", "provisional-credit flag", "which PIN status", "hands it over",
                  "last 4 digits", "Partly covered", "Contradictory case facts",
                  "never tell the specialist to ask for a full PIN", "CVV", "shortlist", "only the finalists", "judged from which evidence"):
        assert point in method, point
    out = export_skill(skill, tmp_path / "exp")  # raises when the folder fails the Agent Skills checks
    exported = (out / "SKILL.md").read_text()
    assert manual_section(exported, HARD_CASES) == method
    assert "fetching it is not guessing" in exported
    tools_md = (out / "references" / "tools.md").read_text()
    assert "--status CASE_ID" in tools_md and "--status CASE_ID" in exported and "replaced" in tools_md
