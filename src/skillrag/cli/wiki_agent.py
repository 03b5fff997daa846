"""`skillrag wiki agent next | read-page | write-page | release | status | finish | export`: the agent
driver of the page builder, the commands the wiki-maintainer skill's scripts run."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from skillrag.cli._common import (
    JsonOpt,
    WorkspaceOpt,
    console,
    err_console,
    open_workspace,
    print_json,
    write_raw,
)
from skillrag.errors import PageRejected, UserError

agent_app = typer.Typer(help="Agent builds of the navigation layer: the commands the wiki-maintainer skill runs.",
                        no_args_is_help=True)

AgentOpt = Annotated[str | None, typer.Option("--agent", envvar="SKILLRAG_AGENT", show_default=False,
                                              help="Your agent name (unique per agent), or $SKILLRAG_AGENT.")]
ClaimOpt = Annotated[str | None, typer.Option("--claim", show_default=False, help="The claim token next printed.")]
_PLAIN = {"markup": False, "highlight": False, "soft_wrap": True}


def _build(workspace: Path | None):
    from skillrag.wiki.agent import AgentBuild

    return AgentBuild(open_workspace(workspace))


def _hhmm(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M UTC")


@agent_app.command("next")
def next_cmd(workspace: WorkspaceOpt = None, agent: AgentOpt = None, json_out: JsonOpt = False) -> None:
    """Claim the next article (then aspect page) and print the task: the prompt the llm builder's model gets."""
    from skillrag.wiki.agent import check_agent_name

    name = check_agent_name(agent)
    build = _build(workspace)
    task = build.next(name)
    if task is None:
        st = build.status()
        held = [c for c in st.claims if not c["expired"]]
        state = "done" if st.complete else "wait"
        if json_out:
            print_json({"task": None, "state": state, "articles_left": st.articles_left,
                        "aspects_left": st.aspects_left, "claimed_by_others": len(held)})
        elif st.complete:
            console.print("nothing left to write: every article and aspect page is written; run finish.py "
                          "(`skillrag wiki agent finish`)", **_PLAIN)
        else:
            console.print(f"nothing to claim right now: {st.articles_left} articles and {st.aspects_left} aspect "
                          f"pages are left, all claimed by other agents ({len(held)} claims); run next.py again "
                          f"in a minute (a claim with no call on it expires after {st.lease_s / 60:g} minutes)",
                          **_PLAIN)
        return
    if json_out:
        print_json({"task": task.to_dict(), "state": "claimed"})
        return
    what = (f"place article {task.article_id} on a page (update or create)" if task.kind == "article"
            else f"write aspect page {task.page_id} (cite every article listed, no other)")
    head = [
        f"claim: {task.claim}",
        f"agent: {task.agent}; the claim holds until {_hhmm(task.expires_at)} and each read_page.py / "
        "write_page.py call on it renews it" + ("; you already held this claim" if task.resumed else ""),
        f"task: {what}",
        "",
        "Save your page draft as JSON (references/page-draft.schema.json) and submit it:",
        f"  python scripts/write_page.py DRAFT.json --claim {task.claim}",
        f"To see another page first: python scripts/read_page.py PAGE_ID --claim {task.claim}",
        "",
        "======== the task, exactly as the model-driven builder receives it ========",
        "",
    ]
    write_raw("\n".join(head) + task.prompt.rstrip("\n") + "\n")


@agent_app.command("read-page")
def read_page_cmd(
    page_id: Annotated[str, typer.Argument(metavar="PAGE_ID", help="A page id (from the task or its index lines).")],
    workspace: WorkspaceOpt = None, claim: ClaimOpt = None,
    full: Annotated[bool, typer.Option("--full", help="The whole page file, not cut as candidates are.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The whole page as an update draft (JSON): edit it and "
                                          "send it back with write_page.py.")] = False,
) -> None:
    """Print a page of the build as a candidate page is shown; with --claim it becomes one you may update."""
    build = _build(workspace)
    text = build.read_page(page_id, claim, full=full, as_draft=as_json)
    size, room = build.page_size(page_id)
    if not as_json:  # the JSON stays a draft that parses as it is
        text = f"size: {size} of {room} characters (without its source list)\n" + text
    write_raw(text.rstrip("\n") + "\n")


@agent_app.command("write-page")
def write_page_cmd(
    draft: Annotated[Path, typer.Argument(metavar="DRAFT.json", help="The page draft (JSON), or - for stdin.")],
    workspace: WorkspaceOpt = None, claim: ClaimOpt = None, json_out: JsonOpt = False,
    check: Annotated[bool, typer.Option("--check", help="Run every check and print the result; write nothing "
                                        "(the claim is kept either way).")] = False,
) -> None:
    """Validate the draft with the builder's own checks and write it. Exit 1 lists every reason (claim kept)."""
    if not claim:
        raise UserError("--claim C is required (the token next.py printed)")
    text = sys.stdin.read() if str(draft) == "-" else draft.read_text(encoding="utf-8")
    build = _build(workspace)
    try:
        out = build.write_page(claim, text, check=check)
    except PageRejected as exc:
        if json_out:
            print_json({"accepted": False, "claim": claim, "reasons": exc.reasons})
        else:
            err_console.print(f"error: page rejected: {len(exc.reasons)} reason{'s' if len(exc.reasons) != 1 else ''} "
                              f"(claim {claim} is kept: fix every one and run write_page.py again)", **_PLAIN)
            for r in exc.reasons:
                err_console.print(f"  - {r}", **_PLAIN)
            if any("not one of the candidate pages" in r for r in exc.reasons):
                err_console.print("  (pages you may update: the candidates next.py showed and any page you read "
                                  f"with read_page.py PAGE_ID --claim {claim})", **_PLAIN)
        raise typer.Exit(1) from None
    if json_out:
        print_json({"accepted": True, **out})
        return
    if check:
        console.print(f"check passed (nothing written): {out['key']} would {out['action']} {out['kind']} page "
                      f"{out['page_id']}; size {out['size']} of {out['room']} characters", **_PLAIN)
        return
    console.print(f"accepted: {out['key']} {out['action']}d {out['kind']} page {out['page_id']} "
                  f"(size {out['size']} of {out['room']} characters); "
                  f"{out['articles_left']} articles left in this build; run next.py for more", **_PLAIN)


@agent_app.command("release")
def release_cmd(
    workspace: WorkspaceOpt = None, claim: ClaimOpt = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Release every claim this agent holds.")] = None,
    expired: Annotated[bool, typer.Option("--expired", help="Release every expired claim.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Give claims back (nothing written is lost; the work is handed out again)."""
    keys = _build(workspace).release(claim=claim, agent=agent, expired=expired)
    if json_out:
        print_json({"released": keys})
    else:
        console.print(f"released {len(keys)} claim{'s' if len(keys) != 1 else ''}" +
                      (f": {', '.join(keys)}" if keys else ""), **_PLAIN)


def _print_status(st: Any) -> None:
    scope = "all articles" if not st.scope else ", ".join(st.scope)
    console.print(f"agent build {st.build_id} ({st.state}; variant {st.variant}; scope: {scope})", **_PLAIN)
    console.print(f"articles: {st.articles - st.articles_left} of {st.articles} done, {st.articles_left} left; "
                  f"aspect pages: {st.aspects - st.aspects_left} of {st.aspects} done, {st.aspects_left} left",
                  **_PLAIN)
    console.print(f"claims: {len(st.claims)}" + "".join(
        f"\n  {c['claim']} {c['key']} by {c['agent']}" + (" (expired)" if c["expired"] else
                                                         f" until {_hhmm(c['expires_at'])}")
        for c in st.claims), **_PLAIN)
    console.print(f"writes: {st.accepted} accepted, {st.rejected} rejected"
                  + (f"; {st.articles_per_agent_hour} articles per agent-hour" if st.articles_per_agent_hour else ""),
                  **_PLAIN)
    for name, a in sorted(st.agents.items()):
        console.print(f"  {name}: {a['articles']} articles, {a['aspects']} aspect pages, {a['rejected']} rejected, "
                      f"{a['released']} released, {a['expired']} expired, {a['hours']:.2f} h", **_PLAIN)
    if st.reason_counts:
        console.print("rejection reasons (ids replaced by …):", **_PLAIN)
        for reason, n in list(st.reason_counts.items())[:15]:
            console.print(f"  {n} x {reason}", **_PLAIN)


@agent_app.command("status")
def status_cmd(workspace: WorkspaceOpt = None, json_out: JsonOpt = False) -> None:
    """Done, claimed and left; rejected writes and their reasons; articles per agent-hour (with no build
    open: what the last finished one recorded)."""
    from skillrag.wiki.agent import last_finished, open_build

    ws = open_workspace(workspace)
    st = last_finished(ws) if open_build(ws) is None else None
    if st is None:
        st = _build(workspace).status()  # the open build (or the error saying there is none)
    if json_out:
        print_json(st.to_dict())
    else:
        _print_status(st)


@agent_app.command("finish")
def finish_cmd(workspace: WorkspaceOpt = None, json_out: JsonOpt = False) -> None:
    """Audit the build's layer and swap it in when complete; else say what is missing (exit 1)."""
    res = _build(workspace).finish()
    if json_out:
        print_json(res.to_dict())
    else:
        if res.swapped:
            a = res.audit
            console.print(f"the agent-written layer is live: {a.pages} pages over {a.referenced}/{a.articles} "
                          f"articles" + (f" (scope: {', '.join(a.scope)}; {a.out_of_scope} articles outside it)"
                                         if a.scope else "") + "; structural audit PASS; next: `skillrag index`",
                          **_PLAIN)
        else:
            console.print("not finished; the previous layer stays live:", **_PLAIN)
            for m in res.missing:
                console.print(f"  - {m}", **_PLAIN)
            if res.audit is not None:
                for label, items in (("unreferenced", res.audit.unreferenced), ("dangling", res.audit.dangling),
                                     ("no sources", res.audit.no_sources), ("malformed", res.audit.malformed)):
                    for it in items[:20]:
                        console.print(f"  {label}: {it if isinstance(it, str) else ' -> '.join(it)}", **_PLAIN)
    if not res.swapped:
        raise typer.Exit(1)


def _export(ws: Any, dest: Path | None, force: bool) -> Path:
    from skillrag.skill.export import skill_dest
    from skillrag.skill.maintainer import export_maintainer
    from skillrag.wiki.agent import MAINTAINER_NAME

    dest = dest if dest is not None else ws.state_dir / "agents"
    out = skill_dest(dest, MAINTAINER_NAME)
    ours = False
    try:
        ours = json.loads((out / "scripts" / "config.json").read_text(encoding="utf-8")).get("skill") == MAINTAINER_NAME
    except (OSError, ValueError):
        pass
    return export_maintainer(ws, dest, overwrite=force or ours)


@agent_app.command("export")
def export_cmd(
    dest: Annotated[Path | None, typer.Argument(metavar="[DIR]", help="Folder to write DIR/wiki-maintainer into "
                                                "(default: WORKSPACE/.skillrag/agents).")] = None,
    workspace: WorkspaceOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing folder.")] = False,
) -> None:
    """Write the wiki-maintainer skill for the open agent build (an earlier export of it is replaced)."""
    ws = open_workspace(workspace)
    out = _export(ws, dest, force)
    console.print(f"exported the wiki-maintainer skill to {out} (passes the Agent Skills checks)", **_PLAIN)


def build_agent(ws: Any, *, variant: str | None, scope: list[str] | None, export: Path | None, lease_minutes: float,
                rebuild: bool, discard: bool, force: bool, json_out: bool) -> None:
    """`wiki build --builder agent`: prepare (or resume) the build and export the skill."""
    from skillrag.wiki.agent import prepare_agent_build

    rep = prepare_agent_build(ws, variant=variant, scope=scope, lease_s=lease_minutes * 60, rebuild=rebuild,
                              discard=discard)
    out = None if rep.up_to_date else _export(ws, export, force)
    if json_out:
        print_json({**rep.to_dict(), "skill": str(out) if out else None})
        return
    if rep.up_to_date:
        console.print("layer up to date: the agents' layer covers every article as it is now (nothing to build)",
                      **_PLAIN)
        return
    scope_text = "all articles" if not rep.scope else ", ".join(rep.scope)
    how = "resumed" if rep.resumed else "incremental (on the live agent layer)" if rep.incremental else "new"
    console.print(f"agent build {rep.build_id} ({how}; variant {rep.variant}; scope: {scope_text}): "
                  f"{rep.to_write} of {rep.articles} articles and {rep.aspects} aspect pages to write", **_PLAIN)
    if rep.deleted:
        console.print(f"deleted {len(rep.deleted)} pages left without sources or aspect: {', '.join(rep.deleted)}",
                      **_PLAIN)
    console.print(f"staging layer: {rep.staging} (the live layer stays as it is until `skillrag wiki agent finish`)",
                  **_PLAIN)
    console.print(f"give each agent this folder: {out}", **_PLAIN)
    console.print("follow it with `skillrag wiki agent status`; end with `skillrag wiki agent finish`", **_PLAIN)
