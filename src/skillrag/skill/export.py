"""Export a skill as a self-contained Agent Skills folder a general-purpose harness can run.

Layout written (``DEST`` is ``DIR/NAME``, or ``DIR`` itself when its name is already ``NAME``)::

    NAME/SKILL.md                 the manual + a section on running the scripts from this folder
    NAME/scripts/_run.py          shared launcher: finds the workspace, calls `skillrag tool ...`
    NAME/scripts/load_case.py     one script per tool, arguments passed through
    NAME/scripts/retrieve.py
    NAME/scripts/get_article.py
    NAME/scripts/save_output.py
    NAME/scripts/config.json      {"workspace", "cases", "python"} recorded at export time
    NAME/references/skill.yaml    the skill's settings
    NAME/references/output-schema.json   JSON Schema of the output contract
    NAME/references/tools.md      the four tools, their arguments and results

The scripts resolve the workspace from ``$SKILLRAG_WORKSPACE``, else ``scripts/config.json``,
and run ``skillrag`` from ``$PATH``, else ``PYTHON -m skillrag.cli.main`` with the exporting Python
recorded in ``config.json``, else the running Python if it has skillrag (else a one-line error).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

from skillrag.errors import UserError
from skillrag.skill.contract import SNIPPET_FIELDS
from skillrag.skill.registry import Skill
from skillrag.skill.spec import check_skill_folder

__all__ = ["TOOL_SCRIPTS", "export_skill", "output_json_schema"]

#: script name → ``skillrag tool`` sub-command.
TOOL_SCRIPTS = {
    "load_case": "load-case",
    "retrieve": "retrieve",
    "get_article": "get-article",
    "save_output": "save-output",
}

_LAUNCHER = '''#!/usr/bin/env python3
"""Run one `skillrag tool` command against the workspace this skill was exported for.

Workspace: $SKILLRAG_WORKSPACE, else "workspace" in config.json beside this file.
Case file: $SKILLRAG_CASES, else "cases" in config.json (may be empty).
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(command: str, argv: list) -> int:
    cfg = {}
    cfg_path = HERE / "config.json"
    if cfg_path.is_file():
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    env = dict(os.environ)
    ws = env.get("SKILLRAG_WORKSPACE") or cfg.get("workspace")
    if not ws:
        print("error: no workspace: set SKILLRAG_WORKSPACE or scripts/config.json", file=sys.stderr)
        return 2
    env["SKILLRAG_WORKSPACE"] = ws
    if cfg.get("cases") and not env.get("SKILLRAG_CASES"):
        env["SKILLRAG_CASES"] = cfg["cases"]
    exe = shutil.which("skillrag")
    py = cfg.get("python") or ""
    if exe:
        base = [exe]
    elif py and Path(py).is_file():
        base = [py, "-m", "skillrag.cli.main"]
    elif importlib.util.find_spec("skillrag") is not None:
        base = [sys.executable, "-m", "skillrag.cli.main"]
    else:
        print('error: skillrag is not installed for this Python: put `skillrag` on PATH or set '
              '"python" in scripts/config.json to a Python that has it', file=sys.stderr)
        return 2
    args = base + ["tool", command, "--skill", cfg.get("skill", "cs-guidance")] + list(argv)
    return subprocess.call(args, env=env)
'''

_SCRIPT = '''#!/usr/bin/env python3
"""{doc}"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run import main  # noqa: E402

sys.exit(main("{command}", sys.argv[1:]))
'''

_DOCS = {
    "load_case": "Usage: load_case.py CASE_ID  -> the case as JSON (no ground truth).",
    "retrieve": 'Usage: retrieve.py "QUERY" [-k K]  -> ranked hits as JSON (article_id, score, title, preview).',
    "get_article": "Usage: get_article.py ARTICLE_ID [--section HEADING] [--summary]  -> the article text.",
    "save_output": "Usage: save_output.py OUT.json  -> validates and saves; exit 1 lists every violation.",
}

_RUNNING = """
## Running the tools from this folder

The commands above are also available as scripts in this folder, so any harness with a shell can
run the skill unchanged. They call `skillrag tool ...` against the workspace recorded in
`scripts/config.json` (override with the `SKILLRAG_WORKSPACE` environment variable):

- `python scripts/load_case.py CASE_ID`
- `python scripts/retrieve.py "QUERY" [-k K]`
- `python scripts/get_article.py ARTICLE_ID [--section HEADING] [--summary]`
- `python scripts/save_output.py OUT.json` (exit code 0 = saved, 1 = rejected with reasons)

Reference material: `references/tools.md` (tool arguments and results),
`references/output-schema.json` (the output contract as JSON Schema) and
`references/skill.yaml` (retrieval and snippet settings).
"""

_TOOLS_MD = """# The four tools

Every tool prints JSON on stdout (or the article text for get_article without `--json`),
prints `error: ...` on stderr and exits non-zero on bad input. Each call is timed and appended
to `runs/tool_calls.jsonl` in the workspace.

## load_case CASE_ID
Returns `case_id, contact_reason, contact_reason_path, case_notes, case_messages[{{role, content}}],
n_messages, n_notes`. Reference answers are never returned.

## retrieve "QUERY" [-k K]
Returns up to K hits (default {k}) `[{{article_id, score, title, preview, page_ids}}]`, best first.
Backend: {backend}; mode: {mode}.

## get_article ARTICLE_ID [--section HEADING] [--summary]
Returns the raw article body (quote from this), one section, or a short summary.

## save_output OUT.json
Validates OUT.json against the output contract and writes it to `runs/CASE_ID/output.json`
when accepted. Limits: at most {max_snippets} snippets, each {min_chars}-{max_chars} characters;
every snippet must occur verbatim (quotes, dashes and whitespace aside) in the article it cites.
"""


def output_json_schema(max_snippets: int = 15, min_chars: int = 15) -> dict:
    """JSON Schema (draft 2020-12) of the output contract's *shape*; the verbatim rule needs the
    articles and is checked by ``validate_output``."""
    snippet = {
        "type": "object",
        "additionalProperties": False,
        "required": list(SNIPPET_FIELDS),
        "properties": {f: {"type": "string", "minLength": 1} for f in SNIPPET_FIELDS},
    }
    snippet["properties"]["text"] = {"type": "string", "minLength": min_chars}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "skillrag guidance output",
        "type": "object",
        "additionalProperties": False,
        "required": ["case_id", "guidance", "snippets", "n_snippets", "articles_consulted"],
        "properties": {
            "case_id": {"type": "string", "minLength": 1},
            "guidance": {"type": "string", "minLength": 1},
            "snippets": {"type": "array", "maxItems": max_snippets, "items": snippet},
            "n_snippets": {"type": "integer", "description": "equals len(snippets)"},
            "articles_consulted": {"type": "array", "items": {"type": "string"}},
            "audit": {"type": "object", "description": "written by save_output"},
            "meta": {"type": "object"},
        },
    }


def export_skill(skill: Skill, dest: str | Path, *, workspace: Path | None = None,
                 cases: Path | None = None, overwrite: bool = False) -> Path:
    """Write ``skill`` as an Agent Skills folder under ``dest`` (see module doc) and return it.

    ``workspace``/``cases`` are recorded (as absolute paths) in ``scripts/config.json``. Raises
    ``UserError`` when the folder exists and ``overwrite`` is false, or when the written folder
    fails the specification checks (``check_skill_folder``).
    """
    dest = Path(dest)
    out = dest if dest.name == skill.name else dest / skill.name
    if out.exists():
        if not overwrite:
            raise UserError(f"{out}: already exists (use --force to replace it)")
        shutil.rmtree(out)
    (out / "scripts").mkdir(parents=True)
    (out / "references").mkdir()

    front = {k: v for k, v in skill.front_matter.items()}
    front["name"] = skill.name
    front["description"] = skill.description
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    (out / "SKILL.md").write_text(f"---\n{head}---\n\n{skill.manual.rstrip()}\n{_RUNNING}", encoding="utf-8")

    (out / "scripts" / "_run.py").write_text(_LAUNCHER, encoding="utf-8")
    for script, command in TOOL_SCRIPTS.items():
        p = out / "scripts" / f"{script}.py"
        p.write_text(_SCRIPT.format(doc=_DOCS[script], command=command), encoding="utf-8")
        p.chmod(0o755)
    cfg = {
        "skill": skill.name,
        "workspace": str(Path(workspace).resolve()) if workspace else "",
        "cases": str(Path(cases).resolve()) if cases else "",
        "python": sys.executable,
    }
    (out / "scripts" / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")

    c = skill.config
    (out / "references" / "skill.yaml").write_text(
        yaml.safe_dump(c.model_dump(mode="json"), sort_keys=False), encoding="utf-8"
    )
    (out / "references" / "output-schema.json").write_text(
        json.dumps(output_json_schema(c.max_snippets, c.min_snippet_chars), indent=2) + "\n", encoding="utf-8"
    )
    (out / "references" / "tools.md").write_text(
        _TOOLS_MD.format(k=c.k, backend=c.backend or "workspace default", mode=c.mode or "workspace default",
                         max_snippets=c.max_snippets, min_chars=c.min_snippet_chars,
                         max_chars=c.max_snippet_chars),
        encoding="utf-8",
    )
    problems = check_skill_folder(out)
    if problems:
        raise UserError(f"exported folder {out} fails the Agent Skills checks: " + "; ".join(problems))
    return out
