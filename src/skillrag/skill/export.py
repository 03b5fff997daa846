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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from skillrag.errors import UserError
from skillrag.skill.budget import BudgetLimits
from skillrag.skill.contract import DERIVED_FIELDS, SNIPPET_FIELDS
from skillrag.skill.registry import Skill, render_manual
from skillrag.skill.spec import check_skill_folder
from skillrag.skill.views import BODY_RULE, TOOL_LIST_MAX, TOOL_SEARCH_ARTICLES
from skillrag.workspace.config import Budgets

__all__ = ["TOOL_SCRIPTS", "export_skill", "output_json_schema", "skill_dest", "write_skill_folder"]

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
    """Run `skillrag PREFIX... COMMAND SUFFIX... ARGV...` ("prefix"/"suffix" in config.json; default
    `tool COMMAND --skill SKILL`)."""
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
    prefix = cfg.get("prefix", ["tool"])
    suffix = cfg.get("suffix", ["--skill", cfg.get("skill", "cs-guidance")])
    args = base + list(prefix) + [command] + list(suffix) + list(argv)
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
    "load_case": "Usage: load_case.py CASE_ID  -> the case as JSON (no ground truth), its as_of date, the budget.",
    "retrieve": ('Usage: retrieve.py "QUERY" --case CASE_ID [-k K] [--id-prefix P] [--title-prefix T] '
                 "[--title-contains W] [--tag TAG] [--category C] [--customer-type T] [--detail pages|tools] | "
                 "retrieve.py --page PAGE_ID --case CASE_ID  -> ranked hits (and pages) as JSON, one per line."),
    "get_article": ("Usage: get_article.py 'ARTICLE_ID' --case CASE_ID [--section N] [--summary] [--json]  "
                    "-> header + the article text."),
    "save_output": ("Usage: save_output.py OUT.json [--check] | save_output.py --status CASE_ID  -> validates and "
                    "saves (exit 1 lists every violation); --status prints the last save's result again, free."),
}

_RUNNING = """
## Running the tools from this folder

The commands above are also available as scripts in this folder, so any harness with a shell can
run the skill unchanged. They call `skillrag tool ...` against the workspace recorded in
`scripts/config.json` (override with the `SKILLRAG_WORKSPACE` environment variable). Every call is
a new process, so name the case each time with `--case CASE_ID` (or set `SKILLRAG_CASE`): the
budgets above are kept per case in the workspace and enforced on these scripts too.

- `python scripts/load_case.py CASE_ID`
- `python scripts/retrieve.py "QUERY" --case CASE_ID [-k K] [--id-prefix P] [--title-prefix T] [--title-contains W] [--tag TAG] [--category C] [--customer-type T] [--detail pages|tools]`
- `python scripts/retrieve.py --page PAGE_ID --case CASE_ID`
- `python scripts/get_article.py 'ARTICLE_ID' --case CASE_ID [--section N] [--summary] [--json]`
- `python scripts/save_output.py OUT.json --check`, then `python scripts/save_output.py OUT.json`
  (exit code 0 = accepted, 1 = rejected with every reason, 2 = a usage error or a spent budget)
- `python scripts/save_output.py --status CASE_ID`: the last save's result again (free)

Reference material: `references/tools.md` (every argument and result field),
`references/output-schema.json` (the output contract as JSON Schema) and
`references/skill.yaml` (retrieval, snippet and budget settings).
"""

_TOOLS_MD = """# The four tools

Run them as `python scripts/NAME.py ...` (or `skillrag tool ...`). Every tool prints JSON on stdout
(get_article prints a header and the article text unless `--json` is given), prints `error: ...` on
stderr and exits non-zero on bad input. Each call is timed and appended to `runs/tool_calls.jsonl`
in the workspace.

## Budgets (per case; each case is its own session)

| budget | per case | what spends it |
|---|---|---|
| queries | {max_queries} | each `retrieve` call, `--page` reads included |
| fetches | {max_fetches} | each article read with `get_article` (whole, `--section` or `--summary`), once per case: a re-read of an article already read in the case is free |
| saves | {max_saves} | each `save_output` without `--check` (the first save + {max_save_retries} retries) |

`load_case` starts the case's session (calling it again continues it; nothing is reset). Later calls
name the case with `--case CASE_ID` (or `$SKILLRAG_CASE`); with no case named, a call goes to the one
open case, and is refused when several are open. Every result ends with the case's budget **after
this call** (the call itself included): `"budget": {{"counted": "after this call", "queries_left",
"queries_used", "fetches_left", "fetches_used", "saves_left", "saves_used"}}`; the first `retrieve`
returns `queries_used: 1`. A call past a budget is refused with one
line, e.g. `error: query budget spent ({max_queries} retrieve calls for case 'c1'); this call was refused: ...`
(exit code 2). Failed calls cost nothing.

## load_case CASE_ID
Returns `case_id, contact_reason, contact_reason_path, case_notes, case_messages[{{role, content}}],
as_of, n_messages, n_notes, budget`. `as_of` is the case's reference date (ISO): judge offer windows
and deadlines against it. Reference answers are never returned.

## retrieve "QUERY" --case CASE_ID [-k K] [--id-prefix P] [--title-prefix T] [--title-contains W] [--tag TAG] [--category C] [--customer-type T] [--detail pages|tools]
Returns `{{case_id, query, filters, detail, hits, pages, budget}}`, printed one hit and one page per
line. `hits` (up to K, default {k}), best first: `article_id, title, relevance` (0-1: the hit's ranking
score as a fraction of the first hit's, so the first is 1.0, a lower-ranked hit on a lower score is
lower, and only hits whose scores tie share a value), `section` and `preview` (the start of the passage
that matched best, cut at a word; for reading, not for quoting), `category` and `customer_type` (the
product family's category, e.g. `credit cards` or `business credit cards`, and `business` / `personal`;
left out when the corpus does not say: a general article; `section` is left out when the passage sits
under no heading), and `tools` (only on a hit whose article gives
any: the tool names its text writes, the customer's tools included). `--detail pages` adds to each hit
`bm25_rank, dense_rank` (its rank under keyword and under meaning search; null = not ranked by that
one), the whole preview and `page_ids` (the best-ranked pages, at most 3, that led to the article).
`pages` (backend `wiki` only; up to {pages}), compact: `page_id, kind` (entity | aspect | topic)`, title,
relevance, category, customer_type, articles[{{id, title}}], shown, of, cut_by`; `articles` holds at most
{page_articles} of the page's articles, the ones that match the query best first (an article that is
also a hit of the result comes without its title: the hit shows it), `of` is how many the page lists,
and `cut_by` says what left the others out (`filter id_prefixes=… (1 of 8 pass)`,
`page_articles={page_articles}`); null when the list is the page's whole. `--detail pages` (same cost) gives every page
whole instead: its `intent` and every article passing the filters with its one-line `summary`. `query` is
echoed cut at 200 characters (whole with `--detail pages`).
Backend: {backend}; mode: {mode}.

Filters (repeatable; an article passes when it matches one value of every filter given):
`--id-prefix` (ids of one product family share a stem: take it from an id you have seen, up to and
including the `_` before the number), `--title-prefix` (titles starting with it, any case),
`--title-contains` (titles containing it anywhere, any case: `--title-contains Internal` finds both
`Internal: ...` and `... (Internal)`, which `--title-prefix "Internal:"` does not), `--tag` (source
tag), `--category` (a hit's `category`, any case, whole: `credit cards` is not `business credit cards`),
`--customer-type` (`business` or `personal`; general articles, of no known type, pass too).{tags} On the
`direct` backend there are no pages: list a family with `--id-prefix STEM -k 30`.

`--detail tools` (same cost, same filters) is a **tool search**: instead of hits it returns `tools`, up to
{tool_list_max} `{{tool, article_id, title, also_in}}`: the tool names the {tool_articles} articles that best match the query give, best
article first, each tool once with the best-ranked article that gives it and, in `also_in`, up to 3 other
searched articles that name it too (the procedure that uses a tool may be one of those); then read the
article for its arguments. A tool the list lacks is in none of those {tool_articles} articles, not proven absent.
`articles_read` says how many articles were searched.

## retrieve --page PAGE_ID --case CASE_ID
Returns `{{case_id, page{{page_id, kind, title, intent, solves, does_not_solve, procedure[{{text,
links[{{type, article_id}}]}}], articles[{{id, title}}]}}, budget}}`: the whole navigation page with
every article it cites. Spends a query.

## get_article 'ARTICLE_ID' --case CASE_ID [--section N] [--summary] [--json]
Text: a header (`id`, `title`, `parent` when the article is a section of a longer document, `part`,
numbered `sections`, `cost` (1 fetch for the case's first read of the article, any part; free for a
re-read), `budget`), the line `{body_rule}`, then the body exactly as stored
(quote from this). `--section` takes a section's number from the header, its path
(`'Fees > Premium'`) or its heading; a heading used by several sections is refused with their numbers.
`--json`: `{{id, title, parent, heading_path, part, offset, content_hash, sections[{{index, heading, path,
level, start, end}}], body, charged, budget}}`; `body` starts at character `offset` of the article and
`sections` offsets index the article, so `body[start - offset : end - offset]` is a section.
Put ids in single quotes: they may contain `(`, `)`, `#` or `:`.

## save_output OUT.json [--check] | save_output --status CASE_ID
Validates OUT.json against the output contract and writes it to `runs/CASE_ID/output.json` when
accepted. A save after an accepted one is allowed while the case has saves left: it replaces the saved
output, and its result says so (`replaced: {{path, saved_at, case_id}}`; null when nothing was replaced);
a rejected one leaves the saved output as it was. `--status CASE_ID` prints the case's last save result
again, exactly as it was reported (`{{case_id, last_save, save_attempts, budget}}`; `last_save` has `at`,
and for a rejection `accepted: false` and its `reasons`); it saves nothing and spends nothing. Limits: at most {max_snippets} snippets, each {min_chars}-{max_chars} characters; every snippet
must occur verbatim (quotes, dashes and whitespace aside) in the article it cites. A rejection
(exit 1) prints `{{accepted: false, checked_only, case_id, reasons}}` (every reason) and names them on stderr. Accepted: `{{accepted, checked_only, path, case_id, n_snippets,
evidence[{{index, source_article, start, end, content_hash, occurrences, matched}}], warnings[{{kind, subject,
message}}], replaced, budget}}`; a passage that occurs more than once in its article says so (`occurrences` > 1; the
offsets point at copy `matched`, the first): quote a longer passage if the other copy is the one you mean.
Warnings never reject: `unquoted_identifier` (a tool name, amount or product in the guidance that no
snippet backs; an amount must be in a snippet linked to the step that states it: the snippet's `why`
names the step, e.g. "Step 3: ...", else the step quotes it or shares enough of its words; amounts, ids,
names and field names the case itself states are not flagged, nor an amount listed under `derived`),
`unsupported_derived` (a `derived` entry's `from` item that no snippet contains), `unused_snippet` (a
snippet linked to no guidance step), `unfetched_citation` (a cited article this case never read),
`source_title_mismatch` (a snippet's `source_title` is not the cited article's title).
`--check` reports the same without writing or spending a save.

Output fields: exactly `case_id, guidance, snippets[{{source_article, source_title, text, why}}],
n_snippets, articles_consulted`, plus three optional ones: `derived` (a list of `{{value, from, how}}`,
one per figure the guidance computed rather than quoted, e.g. `{{"value": "$50", "from": ["$200",
"$150"], "how": "annual fee $200 minus the $150 credit"}}`; every `from` item must appear in a snippet or
the case), `meta` (free-form notes on how the output was made; stored as given, never checked) and
`audit` (written by save_output: offsets, content hashes, warnings, the case's tool calls; one you send
is replaced). Any other field is rejected.
"""


def _tag_lines(tags: Mapping[str, int] | None) -> str:
    if not tags:
        return ""
    listed = ", ".join(f"`{t}` ({n} articles)" for t, n in sorted(tags.items()) if t)
    return f" Source tags this skill may search (its allowed sources) when it was exported: {listed}." if listed else ""


def output_json_schema(max_snippets: int = 15, min_chars: int = 15) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the output contract's *shape*; the verbatim rule needs the
    articles and is checked by ``validate_output``."""
    snippet: dict[str, Any] = {
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
            "audit": {"type": "object", "description": "written by save_output (snippet offsets, content hashes, "
                      "warnings, tool calls); one sent in the output is replaced"},
            "meta": {"type": "object", "description": "optional free-form notes on how the output was made "
                     "(e.g. harness, model); stored as given, never checked"},
            "derived": {
                "type": "array", "maxItems": 30,
                "description": "optional: each figure the guidance states that you computed (a sum, a difference, "
                "a rate, a tier maximum, a date + N days) rather than quoted, with the quoted figures it comes "
                "from; save_output warns on a `from` item no snippet contains (the case's own figures count)",
                "items": {
                    "type": "object", "additionalProperties": False, "required": list(DERIVED_FIELDS),
                    "properties": {
                        "value": {"type": "string", "minLength": 1, "description": "the figure as the guidance "
                                  "states it, e.g. \"$50\""},
                        "from": {"type": "array", "minItems": 1, "maxItems": 10,
                                 "items": {"type": "string", "minLength": 1},
                                 "description": "the quoted figures (or short quoted phrases) it is computed from, "
                                 "e.g. [\"$200\", \"$150\"]"},
                        "how": {"type": "string", "minLength": 1, "description": "the computation in words, e.g. "
                                "\"annual fee $200 minus the $150 credit\""},
                    },
                },
            },
        },
    }


def _setting(value: str | None, name: str, workspace: Path | None) -> str:
    """The skill's retrieval ``backend``/``mode`` for tools.md: its own, else the workspace's when the
    export names one (what the scripts will use unless that config changes), else the library default."""
    if value is not None:
        return value
    from skillrag.errors import SkillragError
    from skillrag.workspace import Workspace
    from skillrag.workspace.config import SearchSettings

    search, whose = SearchSettings(), "the library default"
    if workspace is not None:
        try:
            search, whose = Workspace.open(workspace).config.search, "the workspace's"
        except SkillragError:
            pass
    return f"{getattr(search, name)} ({whose} search.{name})"


def skill_dest(dest: str | Path, name: str) -> Path:
    """The folder an export of skill ``name`` to ``dest`` writes: ``dest/name``, or ``dest`` itself
    when its name is already ``name``."""
    dest = Path(dest)
    return dest if dest.name == name else dest / name


#: What an export folder holds at its top level; ``--force`` replaces only a folder made of these.
_EXPORT_ENTRIES = frozenset({"SKILL.md", "scripts", "references"})


def _check_replaceable(out: Path) -> None:
    """``UserError`` unless ``out`` is an earlier export (a folder of ``SKILL.md``, ``scripts/`` with its
    ``config.json`` and ``references/``, nothing else): found by a new user, ``--force`` deleted a folder
    that held their own notes."""
    if not out.is_dir():
        raise UserError(f"{out}: exists and is not a folder; pick another destination")
    other = sorted(p.name for p in out.iterdir() if p.name not in _EXPORT_ENTRIES)
    if other or not (out / "scripts" / "config.json").is_file():
        held = f"it holds {', '.join(other[:3])}{' …' if len(other) > 3 else ''}" if other else "it has no scripts/config.json"
        raise UserError(f"{out}: is not an earlier export ({held}); --force replaces only an export: "
                        "remove it yourself or pick another folder")


def write_skill_folder(out: Path, *, front: Mapping[str, Any], manual: str, scripts: Mapping[str, tuple[str, str]],
                       config: Mapping[str, Any], references: Mapping[str, str], overwrite: bool = False) -> Path:
    """Write an Agent Skills folder at ``out``: ``SKILL.md`` (``front`` as YAML front matter, then
    ``manual``), ``scripts/_run.py`` (the launcher) and one script per ``scripts`` entry (``name ->
    (skillrag sub-command, usage line)``), ``scripts/config.json`` (``config``: ``workspace``, ``python``,
    and ``prefix``/``suffix`` around the sub-command, default ``tool CMD --skill SKILL``), and
    ``references/NAME`` for each entry of ``references``. Raises ``UserError`` when ``out`` exists and
    ``overwrite`` is false (or it is not an earlier export), or when the written folder fails ``check_skill_folder``."""
    if out.exists():
        if not overwrite:
            raise UserError(f"{out}: already exists (use --force to replace it)")
        _check_replaceable(out)
        shutil.rmtree(out)
    (out / "scripts").mkdir(parents=True)
    (out / "references").mkdir()
    head = yaml.safe_dump(dict(front), sort_keys=False, allow_unicode=True, width=100)
    (out / "SKILL.md").write_text(f"---\n{head}---\n\n{manual.rstrip()}\n", encoding="utf-8")
    (out / "scripts" / "_run.py").write_text(_LAUNCHER, encoding="utf-8")
    for script, (command, doc) in scripts.items():
        p = out / "scripts" / f"{script}.py"
        p.write_text(_SCRIPT.format(doc=doc, command=command), encoding="utf-8")
        p.chmod(0o755)
    (out / "scripts" / "config.json").write_text(json.dumps(dict(config), indent=2) + "\n", encoding="utf-8")
    for name, text in references.items():
        (out / "references" / name).write_text(text, encoding="utf-8")
    problems = check_skill_folder(out)
    if problems:
        raise UserError(f"exported folder {out} fails the Agent Skills checks: " + "; ".join(problems))
    return out


def export_skill(skill: Skill, dest: str | Path, *, workspace: Path | None = None,
                 cases: Path | None = None, overwrite: bool = False, limits: BudgetLimits | None = None,
                 tags: Mapping[str, int] | None = None) -> Path:
    """Write ``skill`` as an Agent Skills folder under ``dest`` (see module doc) and return it.

    ``workspace``/``cases`` are recorded (as absolute paths) in ``scripts/config.json``. ``limits``:
    the per-case budgets the manual states (default: the skill's ``budgets`` over the default
    ``harness`` settings); ``tags``: the source tags in the skill's scope with their article counts, listed in
    ``references/tools.md`` for ``--tag``. Raises ``UserError`` when the folder exists and
    ``overwrite`` is false, or when the written folder fails the specification checks
    (``check_skill_folder``).
    """
    if limits is None:  # the skill's budgets over the default ``harness`` settings
        limits = BudgetLimits.of(Budgets.resolve(Budgets(), skill.config.budgets))
    front = {k: v for k, v in skill.front_matter.items()}
    front["name"] = skill.name
    front["description"] = skill.description
    manual = render_manual(skill, limits).rstrip()
    cfg = {
        "skill": skill.name,
        "workspace": str(Path(workspace).resolve()) if workspace else "",
        "cases": str(Path(cases).resolve()) if cases else "",
        "python": sys.executable,
    }
    c = skill.config
    tools_md = _TOOLS_MD.format(
        k=c.k, pages=c.pages, page_articles=c.page_articles, backend=_setting(c.backend, "backend", workspace),
        mode=_setting(c.mode, "mode", workspace), max_snippets=c.max_snippets,
        min_chars=c.min_snippet_chars, max_chars=c.max_snippet_chars,
        max_queries=limits.max_queries, max_fetches=limits.max_fetches,
        max_saves=limits.max_saves, max_save_retries=limits.max_save_retries,
        body_rule=BODY_RULE, tags=_tag_lines(tags), tool_list_max=TOOL_LIST_MAX,
        tool_articles=max(c.k, TOOL_SEARCH_ARTICLES))
    references = {
        "skill.yaml": yaml.safe_dump(c.model_dump(mode="json"), sort_keys=False),
        "output-schema.json": json.dumps(output_json_schema(c.max_snippets, c.min_snippet_chars), indent=2) + "\n",
        "tools.md": tools_md,
    }
    return write_skill_folder(
        skill_dest(dest, skill.name), front=front, manual=f"{manual}\n{_RUNNING}",
        scripts={script: (command, _DOCS[script]) for script, command in TOOL_SCRIPTS.items()},
        config=cfg, references=references, overwrite=overwrite)
