"""`skillrag cases ...`, `tool ...`, `validate`, `skill ...`, `mcp`: the portable skill from the shell."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from skillrag.cli._common import (
    CasesOpt,
    JsonOpt,
    WorkspaceOpt,
    console,
    err_console,
    open_cases,
    open_workspace,
    print_json,
    write_raw,
)
from skillrag.errors import ContractViolation, MalformedSourceError, UserError
from skillrag.skill import (
    BudgetLimits,
    SkillRegistry,
    SkillTools,
    check_skill_folder,
    import_tau2,
    ingest_references,
    install_builtin_skills,
    render_manual,
    skill_folders,
    validate_output,
    write_cases,
)
from skillrag.skill.contract import ContractLimits
from skillrag.skill.views import (
    DETAILS,
    article_json,
    article_text,
    case_json,
    page_json,
    rejection_json,
    retrieve_json,
    retrieve_text,
    save_json,
    status_json,
)
from skillrag.workspace import Workspace
from skillrag.workspace.config import MAX_K
from skillrag.workspace.files import read_json_file

SkillOpt = Annotated[str, typer.Option("--skill", "-s", help="Skill name (a folder under skills/).")]

cases_app = typer.Typer(help="Support cases: import, list, show (agent-facing fields only), export approved runs.",
                         no_args_is_help=True)
tool_app = typer.Typer(help="The skill's four tools: load-case, retrieve, get-article, save-output.",
                       no_args_is_help=True)
skill_app = typer.Typer(help="Skills: list, show, install, ingest references, export as an Agent Skills folder, "
                        "check.", no_args_is_help=True)


# -- helpers -------------------------------------------------------------------------------------
def _tools(workspace: Path | None, skill: str, cases: Path | None = None, *, need_cases: bool = False,
           want_cases: bool = False) -> SkillTools:
    """The tools of ``skill``; ``need_cases``: the case file must be found (else a one-line error);
    ``want_cases``: use it when it is found (save-output: its warnings leave the case's own facts alone)."""
    ws = open_workspace(workspace)
    sk = SkillRegistry(ws).get(skill)
    cf = None
    if need_cases:
        cf = open_cases(ws, cases, sk.config.cases)
    elif want_cases:
        try:
            cf = open_cases(ws, cases, sk.config.cases)
        except UserError:
            cf = None  # the case only sharpens the warnings: a save never fails for want of it
    return SkillTools(ws, sk, cf, log_path=ws.tool_log, surface="cli")


# -- cases ---------------------------------------------------------------------------------------
def _cases_written(n: int, out: Path, json_out: bool) -> None:
    """What `cases tau2` and `cases import` print once ``n`` cases are written to ``out``."""
    if json_out:
        print_json({"cases": n, "path": str(out)})
    else:
        console.print(f"{n} cases written to {out}")


def _not_the_input(out: Path, source: Path) -> None:
    """An import never writes over the file it reads (found by a new user: `-o` naming the input replaced
    the dialogues with the cases made from them)."""
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        raise UserError(f"{out}: is the file being imported; write the cases to another file")


@cases_app.command("import-tau2")
def cases_import_tau2(
    tasks: Annotated[Path, typer.Argument(help="tau2-bench task list, e.g. tasks_dev.json (any domain).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Case file to write (JSONL).")],
    domain: Annotated[str | None, typer.Option(
        "--domain", help="Domain of text-brief tasks (default: from the folder name, e.g. tau2-banking).")] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", metavar="YYYY-MM-DD", show_default=False,
        help="The benchmark's date for tasks that state no clock (a task's own time_verified or current date "
        "wins). Default: the clock the file's other tasks state; refused when none does.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Turn tau2-bench tasks into cases: the customer's situation for the agent, the simulator's directions
    and the expected actions, end state and documents kept as ground truth. Each case's as_of is the
    benchmark's clock (the date the task states), never today."""
    _not_the_input(out, tasks)
    records = import_tau2(tasks, domain=domain, as_of=as_of)
    _cases_written(write_cases(out, records), out, json_out)


@cases_app.command("import")
def cases_import(
    file: Annotated[Path, typer.Argument(help="A JSON (list, or --records inside it) or JSONL dialogue file.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Case file to write (JSONL).")],
    mapping: Annotated[Path | None, typer.Option(
        "--mapping", help="Mapping YAML (case_id: PATH, contact_reason: PATH, case_messages: ..., ground_truth: ...).")
    ] = None,
    map_: Annotated[list[str] | None, typer.Option(
        "--map", help="FIELD=PATH[,PATH] (repeatable; a case field, ground_truth.NAME for ground truth, any other NAME goes "
        "to ground_truth.extra). A null list (\"actions\": null) imports as empty. Format: docs/cases.md.")
    ] = None,
    lookup: Annotated[list[str] | None, typer.Option(
        "--lookup", help="FIELD=FILE: map the field's value through a JSON object (e.g. subflow -> actions).")
    ] = None,
    records: Annotated[str | None, typer.Option("--records", help="Path to the list of records in the file.")] = None,
    roles: Annotated[str | None, typer.Option("--roles", help="Keep only these message roles (comma-separated).")
    ] = None,
    max_messages: Annotated[int | None, typer.Option("--max-messages", min=1, help="Keep the first N messages.")
    ] = None,
    source: Annotated[str | None, typer.Option("--source", help="Name recorded as each case's source.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Turn any JSON/JSONL dialogue set into cases through a field mapping (format and examples: docs/cases.md)."""
    from skillrag.skill.case_import import import_cases, load_mapping, parse_maps

    _not_the_input(out, file)
    overrides = parse_maps(list(map_ or []), list(lookup or []))
    if records is not None:
        overrides["records"] = records
    if source is not None:
        overrides["source"] = source
    if roles is not None or max_messages is not None:
        msgs = overrides.get("case_messages") or {}
        if not msgs and mapping is None:
            raise UserError("--roles/--max-messages need case_messages (--map case_messages=PATH)")
        if roles is not None:
            msgs["roles"] = [r.strip() for r in roles.split(",") if r.strip()]
        if max_messages is not None:
            msgs["max"] = max_messages
        overrides["case_messages"] = msgs
    spec = load_mapping(mapping, overrides)  # --roles / --max-messages merge over the YAML's case_messages
    recs = import_cases(file, spec)
    if not recs:
        raise UserError(f"{file}: no records to import")
    _cases_written(write_cases(out, recs), out, json_out)


@cases_app.command("export-approved")
def cases_export_approved(
    out: Annotated[Path, typer.Option("-o", "--out", help="Case file to write (JSONL, with ground_truth).")],
    workspace: WorkspaceOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write the approved runs as reference cases for `skillrag eval`: the approved guidance becomes
    reference_guidance, the articles of the snippets its steps rely on required_documents, and the tools it names
    (declared by the corpus, in its order) expected_tools."""
    from skillrag.review import export_approved

    ws = open_workspace(workspace)
    if out.is_dir():
        raise UserError(f"{out}: is a folder; -o takes the case file's path (e.g. {out / 'approved.jsonl'})")
    report = export_approved(ws, out)
    if json_out:
        print_json({"cases": len(report.written), "path": str(out), "written": report.written,
                    "skipped": report.skipped})
        return
    for case_id, reason in report.skipped.items():
        err_console.print(f"skipped {case_id}: {reason}", markup=False, highlight=False)
    console.print(f"{len(report.written)} approved case(s) written to {out}", markup=False, highlight=False)


@cases_app.command("list")
def cases_list(cases: CasesOpt = None, workspace: WorkspaceOpt = None, json_out: JsonOpt = False) -> None:
    """List the cases of a case file: id, contact reason, counts."""
    ws = _maybe_ws(workspace) if cases is None else None
    cf = open_cases(ws, cases)
    rows = [c.model_dump(mode="json", include={"case_id", "contact_reason", "n_messages", "n_notes"})
            for c in cf.cases()]
    if json_out:
        print_json(rows)
        return
    table = Table("case_id", "contact reason", "messages", "notes")
    for r in rows:
        table.add_row(r["case_id"], r["contact_reason"][:90], str(r["n_messages"]), str(r["n_notes"]))
    console.print(table)
    console.print(f"{len(rows)} cases")


@cases_app.command("show")
def cases_show(
    case_id: Annotated[str, typer.Argument(metavar="CASE_ID")],
    cases: CasesOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Print one case as the agent sees it (JSON, no ground truth)."""
    ws = _maybe_ws(workspace) if cases is None else None
    print_json(open_cases(ws, cases).load(case_id).model_dump(mode="json"))


def _maybe_ws(workspace: Path | None) -> Workspace | None:
    try:
        return Workspace.open(workspace)
    except UserError:
        if workspace is not None or os.environ.get("SKILLRAG_WORKSPACE"):
            raise
        return None


# -- tools ---------------------------------------------------------------------------------------
CaseOpt = Annotated[
    str | None,
    typer.Option("--case", envvar="SKILLRAG_CASE", show_default=False,
                 help="The case this call is for (the id given to load-case); default: the one open case."),
]


@tool_app.command("load-case")
def tool_load_case(
    case_id: Annotated[str, typer.Argument(metavar="CASE_ID")],
    workspace: WorkspaceOpt = None,
    skill: SkillOpt = "cs-guidance",
    cases: CasesOpt = None,
    new_session: Annotated[bool, typer.Option(
        "--new-session", help="Start the case's next session (re-running a case whose output was accepted); "
        "never resets an unfinished session that has spent something.")] = False,
) -> None:
    """Print the case (JSON): contact reason, path, notes, messages, as_of date and the budget left.
    Never ground truth. Starts the case's session (or continues it: re-reading never resets budgets)."""
    t = _tools(workspace, skill, cases, need_cases=True)
    case = t.load_case(case_id, new_session=new_session)
    print_json(case_json(case, t.budget(case.case_id)))


@tool_app.command("retrieve")
def tool_retrieve(
    query: Annotated[str | None, typer.Argument(metavar="QUERY", help="What to search for (not with --page).")] = None,
    k: Annotated[int | None, typer.Option("-k", "-n", min=1, max=MAX_K, help="Results (default: the skill's k).")] = None,
    case: CaseOpt = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only articles with this source tag (repeatable).")]
    = None,
    title_prefix: Annotated[list[str] | None, typer.Option(
        "--title-prefix", help="Only articles whose title starts with this, any case (repeatable).")] = None,
    title_contains: Annotated[list[str] | None, typer.Option(
        "--title-contains", help="Only articles whose title contains this, any case (repeatable): "
        "'Internal' finds 'Internal: …' and '… (Internal)'.")] = None,
    id_prefix: Annotated[list[str] | None, typer.Option(
        "--id-prefix", help="Only articles whose id starts with this (repeatable).")] = None,
    category: Annotated[list[str] | None, typer.Option(
        "--category", help="Only articles of this product category, any case, whole ('credit cards' is not "
        "'business credit cards'; a hit's `category`) (repeatable).")] = None,
    customer_type: Annotated[list[str] | None, typer.Option(
        "--customer-type", help="Only articles for this customer type (business, personal; a hit's "
        "`customer_type`); general articles, of no known type, pass too (repeatable).")] = None,
    detail: Annotated[str | None, typer.Option(
        "--detail", help=f"Another view of the search ({', '.join(DETAILS)}): `pages` = every hit and page "
        "whole (ranks, intent, every article with its summary); `tools` = a tool search: the tool names the "
        "best-matching articles give, each with its article. Same cost.")] = None,
    page: Annotated[str | None, typer.Option(
        "--page", help="Read this navigation page whole instead of searching (a page_id from `pages`).")] = None,
    workspace: WorkspaceOpt = None,
    skill: SkillOpt = "cs-guidance",
) -> None:
    """Print ranked hits (JSON, one hit or page per line): each article's id, title, relevance (0-1),
    best-matching passage, facets (category, customer type) and the tool names it gives; over the wiki
    backend also the ranked navigation pages, each with its best-matching articles (--detail pages: all
    of it, ranks included; --detail tools: a tool search). --page reads one page. Each call spends one of
    the case's queries."""
    t = _tools(workspace, skill)
    if page is not None:
        if query:
            raise UserError("give either a QUERY or --page PAGE_ID, not both")
        print_json(page_json(t.read_page(page, case_id=case)))
        return
    if not query or not query.strip():
        raise UserError("empty query: give some words to search for (or --page PAGE_ID)")
    filters = {"source_tags": tag, "title_prefixes": title_prefix, "title_contains": title_contains,
               "id_prefixes": id_prefix, "categories": category, "customer_types": customer_type}
    write_raw(retrieve_text(retrieve_json(t.retrieve(query, k, filters=filters, case_id=case, detail=detail))))


@tool_app.command("get-article")
def tool_get_article(
    article_id: Annotated[str, typer.Argument(metavar="ID", help="Quote ids with parentheses: 'doc_(general)_010'.")],
    section: Annotated[str | None, typer.Option(
        help="Only this section: its number in the header, its path ('Fees > Premium') or its heading.")] = None,
    summary: Annotated[bool, typer.Option("--summary", help="A short deterministic summary (not for quoting).")]
    = False,
    case: CaseOpt = None,
    workspace: WorkspaceOpt = None,
    skill: SkillOpt = "cs-guidance",
    json_out: Annotated[bool, typer.Option(
        "--json", help="JSON: id, title, parent, sections with offsets, body (quote by offsets).")] = False,
) -> None:
    """Print an article: a header (id, title, parent, sections, budget) and then its raw body exactly
    as stored (quote from this), one section, or a summary. Each call spends one of the case's fetches."""
    t = _tools(workspace, skill)
    view = t.get_article(article_id, section=section, summary=summary, case_id=case)
    if json_out:
        print_json(article_json(view))
    else:
        write_raw(article_text(view))


@tool_app.command("save-output")
def tool_save_output(
    file: Annotated[Path | None, typer.Argument(
        metavar="OUT.json", help="The output JSON object to validate and save.", show_default=False)] = None,
    dest: Annotated[Path | None, typer.Option("--to", help="Write here instead of runs/CASE_ID/output.json.")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Validate and report as a save would, but write nothing (not counted as a save).")] = False,
    status: Annotated[str | None, typer.Option(
        "--status", metavar="CASE_ID", show_default=False,
        help="Print the case's last save result again (its receipt, or a rejection's reasons) and its budget; "
        "saves nothing, spends nothing.")] = None,
    workspace: WorkspaceOpt = None,
    skill: SkillOpt = "cs-guidance",
    cases: CasesOpt = None,
) -> None:
    """Validate against the evidence contract; save only if accepted (exit 1 lists every reason).
    Prints each snippet's offsets and warnings (evidence gaps; they never reject; amounts, ids and names
    the case itself states are not flagged, when the case file is found). Each save spends one of the
    case's saves; --check spends nothing. A save after an accepted one is allowed while saves are left:
    it replaces the output and says so (`replaced`). --status CASE_ID shows the last save's result again."""
    if status is not None:
        if file is not None or check or dest is not None:
            raise UserError("--status shows the last save of a case: give it alone, without OUT.json, --check or --to")
        print_json(status_json(_tools(workspace, skill).save_status(status)))
        return
    if file is None:
        raise UserError("give the output file to save (OUT.json), or --status CASE_ID to see the last save")
    t = _tools(workspace, skill, cases, want_cases=True)
    output = read_json_file(file, "output file")
    if not isinstance(output, dict):
        raise ContractViolation([f"output must be a JSON object, got {type(output).__name__}"])
    try:
        saved = t.save_output(output, dest, check=check)
    except ContractViolation as exc:
        # an agent parses stdout: a rejection is JSON there too (every reason), and the one line on stderr
        print_json(rejection_json(exc, output.get("case_id"), check=check))
        raise
    print_json(save_json(saved))


# -- validate ------------------------------------------------------------------------------------
def validate_cmd(
    file: Annotated[Path, typer.Argument(metavar="OUT.json", help="Output JSON to check.")],
    workspace: WorkspaceOpt = None,
    articles: Annotated[Path | None, typer.Option(
        "--articles", help="JSON object mapping article id to body (instead of a workspace).")] = None,
    skill: SkillOpt = "cs-guidance",
    json_out: JsonOpt = False,
) -> None:
    """Check an output against the evidence contract (and, for a saved output, its stored offsets).
    Exit 0 accepted, 1 rejected, 2 usage error."""
    output = read_json_file(file, "output file")
    if articles is not None:
        bodies = read_json_file(articles, "articles file")
        if not isinstance(bodies, dict) or not all(isinstance(v, str) for v in bodies.values()):
            raise MalformedSourceError(articles, "expected a JSON object mapping article id to body text")
        reasons, notes = validate_output(output, bodies, ContractLimits()), []
    else:
        t = _tools(workspace, skill)
        reasons = t.check_output(output)
        audit_reasons, notes = t.check_audit(output)
        reasons += audit_reasons
    if json_out:
        print_json({"accepted": not reasons, "reasons": reasons, "notes": notes})
        if reasons:
            raise typer.Exit(1)
        return
    for note in notes:
        err_console.print(f"note: {note}", markup=False, highlight=False)
    if reasons:
        raise ContractViolation(reasons)
    n = len(output.get("snippets") or [])
    console.print(f"accepted: {n} snippets verified verbatim")


# -- skills --------------------------------------------------------------------------------------
@skill_app.command("list")
def skill_list(workspace: WorkspaceOpt = None, json_out: JsonOpt = False) -> None:
    """List the workspace's skills (and built-in ones), with any that fail to load."""
    reg = SkillRegistry(open_workspace(workspace))
    skills, problems = reg.list(), reg.problems()
    if json_out:
        print_json({"skills": [{"name": s.name, "description": s.description, "builtin": s.builtin,
                                "path": str(s.path)} for s in skills], "problems": problems})
        return
    table = Table("name", "where", "description")
    for s in skills:
        table.add_row(s.name, "built-in" if s.builtin else "workspace", s.description[:100])
    console.print(table)
    for name, reason in problems.items():
        console.print(f"[red]broken[/red] {name}: {reason}", highlight=False)


@skill_app.command("show")
def skill_show(name: Annotated[str, typer.Argument(metavar="NAME")], workspace: WorkspaceOpt = None,
               json_out: JsonOpt = False) -> None:
    """Print a skill's manual (SKILL.md body, with its budgets filled in) or, with --json, its settings too."""
    ws = open_workspace(workspace)
    s = SkillRegistry(ws).get(name)
    manual = render_manual(s, BudgetLimits.for_skill(ws, s.config.budgets))
    if json_out:
        print_json({"name": s.name, "description": s.description, "path": str(s.path),
                    "config": s.config.model_dump(mode="json"), "manual": manual})
    else:
        write_raw(manual if manual.endswith("\n") else manual + "\n")


@skill_app.command("install")
def skill_install(workspace: WorkspaceOpt = None,
                  force: Annotated[bool, typer.Option("--force", help="Replace existing copies.")] = False) -> None:
    """Copy the built-in skills into the workspace's skills/ folder, to edit them. With --force an edited
    copy is moved aside (skills/.NAME.backup-N), never deleted."""
    backups: list[Path] = []
    names = install_builtin_skills(open_workspace(workspace), overwrite=force, backups=backups)
    for b in backups:
        console.print(f"kept your earlier copy as {b}")
    console.print(f"installed: {', '.join(names)}" if names else "nothing to install (already present)")


@skill_app.command("ingest")
def skill_ingest(name: Annotated[str, typer.Argument(metavar="NAME")], workspace: WorkspaceOpt = None,
                 json_out: JsonOpt = False) -> None:
    """Ingest the skill's references/*.md notes as its reference notes (only this skill retrieves them;
    a note's front matter `url` is what its citations link to). Run `skillrag index` afterwards."""
    ws = open_workspace(workspace)
    with ws.write_lock("skill ingest"):
        report = ingest_references(ws, SkillRegistry(ws).get(name))
    counts = report.counts()
    if json_out:
        print_json({"skill": name, "counts": counts, "changed": report.changed, "removed": report.removed})
        return
    console.print(f"{name} references: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


@skill_app.command("export")
def skill_export(
    name: Annotated[str, typer.Argument(metavar="NAME")],
    dest: Annotated[Path, typer.Argument(metavar="DIR", help="Folder to write the skill into (DIR/NAME).")],
    workspace: WorkspaceOpt = None,
    cases: CasesOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing export.")] = False,
) -> None:
    """Write a self-contained Agent Skills folder (SKILL.md, scripts/, references/) for any harness."""
    from collections import Counter

    from skillrag.corpus import ArticleStore, SourceScope
    from skillrag.skill.export import export_skill

    ws = open_workspace(workspace)
    s = SkillRegistry(ws).get(name)
    # the tags the skill may search (its scope, as every tool call sees it), never the whole corpus's
    tags = Counter(a.source_tag for a in ArticleStore(ws).scoped(SourceScope.of(s.name, s.config.allowed_sources)).list())
    out = export_skill(s, dest, workspace=ws.root, cases=cases, overwrite=force,
                       limits=BudgetLimits.for_skill(ws, s.config.budgets), tags=tags)
    console.print(f"exported {name} to {out} (passes the Agent Skills checks)")


@skill_app.command("check")
def skill_check(folder: Annotated[Path, typer.Argument(
                    metavar="DIR", help="A skill folder, or a folder of them (the DIR of `skill export NAME DIR`).")],
                json_out: JsonOpt = False) -> None:
    """Check skill folders against the Agent Skills specification. Exit 1 when one does not conform."""
    if not folder.is_dir():
        raise UserError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    folders = skill_folders(folder)
    several = folders != [folder]  # DIR holds skill folders: name each in the output
    checked = [(f, check_skill_folder(f)) for f in folders]
    problems = [f"{f.name}: {p}" if several else p for f, ps in checked for p in ps]
    if json_out:
        print_json({"ok": not problems, "problems": problems,
                    "skills": [{"folder": str(f), "ok": not ps, "problems": ps} for f, ps in checked]})
    else:
        plain = {"highlight": False, "markup": False, "soft_wrap": True}  # paths are never wrapped
        for f, ps in checked:
            if several and ps:
                console.print(f"{f}: does not conform to the Agent Skills specification", **plain)
            for p in ps:
                console.print(f"{'  ' if several else ''}- {p}", **plain)
            if not ps:
                console.print(f"{f}: conforms to the Agent Skills specification", **plain)
    if problems:
        raise typer.Exit(1)


# -- MCP -----------------------------------------------------------------------------------------
def mcp_cmd(workspace: WorkspaceOpt = None, skill: SkillOpt = "cs-guidance", cases: CasesOpt = None) -> None:
    """Serve the four tools and list_skills over stdio (Model Context Protocol)."""
    from skillrag.service.mcp_server import serve_stdio

    ws = open_workspace(workspace)
    sk = SkillRegistry(ws).get(skill)
    cf = None
    try:
        cf = open_cases(ws, cases, sk.config.cases)
    except UserError:
        cf = None  # load_case then answers with a clear tool error
    serve_stdio(ws, skill=skill, cases=cf)


def register(app: typer.Typer) -> None:
    app.add_typer(cases_app, name="cases")
    app.add_typer(tool_app, name="tool")
    app.add_typer(skill_app, name="skill")
    app.command("validate")(validate_cmd)
    app.command("mcp")(mcp_cmd)


