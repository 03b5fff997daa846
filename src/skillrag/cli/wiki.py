"""`skillrag wiki build | audit | pages | show`: the navigation layer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from skillrag.cli._common import (
    JsonOpt,
    WorkspaceOpt,
    console,
    err_console,
    open_workspace,
    print_json,
    write_raw,
)
from skillrag.cli._progress import progress_bar
from skillrag.errors import EmptyInputError, UserError
from skillrag.wiki import VARIANTS, Layer, audit_links, audit_structure, build_wiki, estimate_build, fix_links
from skillrag.wiki.page import render_page

wiki_app = typer.Typer(help="The navigation layer: build, audit and read the wiki pages.", no_args_is_help=True)

BuilderOpt = Annotated[str | None, typer.Option(
    "--builder", help="extractive (no model), llm, or agent (prepared for coding agents: exports the "
                      "wiki-maintainer skill they run).")]
VariantOpt = Annotated[str | None, typer.Option("--variant", help=f"Layer variant: {', '.join(VARIANTS)}.")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Model id, e.g. openai:gpt-4.1 (llm builder / judge).")]


@wiki_app.command("build")
def build_cmd(
    workspace: WorkspaceOpt = None,
    builder: BuilderOpt = None,
    model: ModelOpt = None,
    variant: VariantOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Estimate the llm build's tokens; call no model.")] = False,
    concurrency: Annotated[int | None, typer.Option("--concurrency", min=1, max=32,
                                                    help="Model calls in flight at once.")] = None,
    rebuild: Annotated[bool, typer.Option(
        "--rebuild", help="Build a new layer aside and swap it in when complete (the old one stays until then).")] = False,
    scope: Annotated[list[str] | None, typer.Option(
        "--scope", help="Agent builds: only articles whose id starts with this prefix (repeatable).")] = None,
    scope_file: Annotated[Path | None, typer.Option(
        "--scope-file", help="Agent builds: a file of id prefixes, one per line (# comments).")] = None,
    export: Annotated[Path | None, typer.Option(
        "--export", help="Agent builds: write the wiki-maintainer skill into DIR/wiki-maintainer "
                         "(default: WORKSPACE/.skillrag/agents).")] = None,
    lease_minutes: Annotated[float, typer.Option(
        "--lease-minutes", min=1, help="Agent builds: a claim with no call on it expires after this many minutes.")
    ] = 20.0,
    discard: Annotated[bool, typer.Option("--discard", help="Agent builds: drop an open agent build first.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Agent builds: replace an existing export folder.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Build the layer, or update it after a re-ingest (only pages touched by changed articles)."""
    ws = open_workspace(workspace)
    if builder is None and model is not None:
        builder = "llm"
    agent_only = [n for n, v in (("--scope", scope), ("--scope-file", scope_file), ("--export", export),
                                 ("--discard", discard), ("--force", force)) if v]
    if (builder or ws.config.wiki.builder) == "agent":
        from skillrag.cli.wiki_agent import build_agent

        prefixes = list(scope or [])
        if scope_file is not None:
            lines = scope_file.read_text(encoding="utf-8").splitlines()
            prefixes += [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]
        if (scope or scope_file) and not prefixes:
            raise UserError("--scope/--scope-file name no prefix")
        build_agent(ws, variant=variant, scope=prefixes or None, export=export, lease_minutes=lease_minutes,
                    rebuild=rebuild, discard=discard, force=force, json_out=json_out)
        return
    if agent_only:
        raise UserError(f"{', '.join(agent_only)}: only for agent builds (add --builder agent)")
    if dry_run:
        if (builder or ws.config.wiki.builder) != "llm":
            raise UserError("--dry-run estimates an llm build: add --builder llm")
        est = estimate_build(ws, variant=variant, model=model)
        if json_out:
            print_json(est)
        else:
            console.print(f"{est['articles']} articles and {est['aspects']} aspect pages to build "
                          f"({est['skipped']} articles already done): about "
                          f"{est['input_tokens']:,} input + {est['output_tokens']:,} output tokens in "
                          f"{est['requests']} requests (estimate: 4 characters per token)")
        return
    with ws.write_lock("wiki build"), progress_bar("wiki build", detail="{task.description}") as prog:
        task = prog.add_task("", total=None)

        def on_progress(done: int, total: int, tin: int, tout: int) -> None:
            prog.update(task, completed=done, total=total, description=f"{tin:,} in / {tout:,} out tokens")

        report = build_wiki(ws, builder=builder, variant=variant, model=model, rebuild=rebuild,
                            concurrency=concurrency, progress=on_progress)
    if json_out:
        print_json(report.to_dict())
        return
    d = report.diff
    if report.index_repaired:
        console.print("index.md did not match the page files (an interrupted build?) and was rewritten")
    if report.up_to_date:
        console.print(f"layer up to date: {report.pages} pages over {report.articles} articles "
                      f"({report.builder}, {report.variant})" + ("; the finished rebuild is now live"
                                                                   if report.swapped else ""))
        return
    console.print(f"{report.builder} build ({report.variant}) in {report.seconds:.1f} s: {report.pages} pages over "
                  f"{report.articles} articles")
    console.print(f"articles: {len(d.new)} new, {len(d.changed)} changed, {len(d.removed)} removed, "
                  f"{len(d.unreferenced)} re-placed")
    console.print(f"pages: {len(report.created)} created, {len(report.updated)} updated, "
                  f"{len(report.deleted)} deleted")
    for label, ids in (("created", report.created), ("updated", report.updated), ("deleted", report.deleted)):
        if ids and len(ids) <= 20:
            console.print(f"  {label}: {', '.join(ids)}", markup=False, highlight=False, soft_wrap=True)
    if report.builder == "llm":
        console.print(f"tokens: {report.input_tokens:,} in, {report.output_tokens:,} out, {report.requests} requests")
    for aid, reasons in report.failed.items():
        err_console.print(f"failed: {aid}: {'; '.join(reasons)}", markup=False, highlight=False, soft_wrap=True)
    if rebuild and report.swapped:
        console.print("the rebuilt layer replaced the previous one")
    elif rebuild:
        err_console.print("the rebuild is kept aside and the previous layer stays live until every article is "
                          "placed; run the same `wiki build --rebuild` again to retry the failed ones",
                          markup=False, highlight=False, soft_wrap=True)
    if report.failed:
        raise typer.Exit(1)


@wiki_app.command("audit")
def audit_cmd(
    workspace: WorkspaceOpt = None,
    links: Annotated[bool, typer.Option("--links", help="Also judge every page->article link with a model.")] = False,
    model: ModelOpt = None,
    fix: Annotated[bool, typer.Option("--fix", help="Remove the links the judge flagged.")] = False,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=32, help="Judge calls at once.")] = 1,
    judge_packets: Annotated[Path | None, typer.Option(
        "--judge-packets", help="With --links: write one judge packet per link into this new folder (for agents "
                                "or people) instead of calling a model.")] = None,
    verdicts: Annotated[Path | None, typer.Option(
        "--verdicts", help="With --links: read the judges' votes back (a filled packets folder, .jsonl or .json).")
    ] = None,
    mapping: Annotated[Path | None, typer.Option(
        "--mapping", help="Item mapping file (default: PACKETS.mapping.json beside the packets folder).")] = None,
    blind: Annotated[bool, typer.Option("--blind/--no-blind", help="Packets: shuffled, random item ids.")] = True,
    seed: Annotated[int | None, typer.Option("--seed", help="Packets: seed of the blind shuffle.")] = None,
    votes: Annotated[int | None, typer.Option(
        "--votes", min=1, help="Verdicts: votes expected per link; fewer count as failed (default: those cast).")
    ] = None,
    layer_name: Annotated[str | None, typer.Option(
        "--layer-name", help="Packets/verdicts: the name link items give the layer judged (default: wiki; "
                             "verdicts: the one the mapping names).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Structural audit of the layer (coverage, dangling ids, index); `--links` adds the semantic audit
    (a judge model, or external judges: `--judge-packets DIR`, then `--verdicts DIR`)."""
    ws = open_workspace(workspace)
    if fix and not links:
        raise UserError("--fix needs --links (it removes the links the judge flags)")
    if (judge_packets or verdicts) and not links:
        raise UserError("--judge-packets/--verdicts need --links")
    if sum(x is not None for x in (model, judge_packets, verdicts)) > 1:
        raise UserError("give one of --model, --judge-packets, --verdicts")
    if fix and judge_packets is not None:
        raise UserError("--fix needs verdicts: write the packets, have them judged, then run --verdicts DIR --fix")
    st = audit_structure(ws)
    if st.articles == 0 and st.pages == 0:
        raise EmptyInputError("nothing to audit: no articles and no wiki layer (run `skillrag ingest`, then "
                              "`skillrag wiki build`)")
    sem = None
    fixed = None
    packets = None
    if links and judge_packets is not None:
        from skillrag.evaluation.link_packets import write_link_packets

        mp, mpath = write_link_packets(ws, judge_packets, layer=layer_name or "wiki", blind=blind, seed=seed,
                                       mapping_path=mapping)
        packets = {"folder": str(judge_packets), "items": len(mp.items), "mapping": str(mpath), "blind": blind}
    elif links and verdicts is not None:
        from skillrag.evaluation.link_packets import read_link_verdicts
        from skillrag.evaluation.packets import default_mapping_path, load_mapping

        if mapping is None and verdicts.is_dir() and default_mapping_path(verdicts).is_file():
            mapping = default_mapping_path(verdicts)
        sem = read_link_verdicts(ws, verdicts, load_mapping(mapping) if mapping is not None else None,
                                 layer=layer_name, votes_per_item=votes)
    elif links:
        spec = model or ws.config.models.judge or ws.config.models.default
        if spec is None:
            raise UserError("--links needs a judge: --model ID (or models.judge), or external judges with "
                            "--judge-packets DIR, then --verdicts DIR")
        with progress_bar("judging links", detail="{task.description}") as prog:
            task = prog.add_task("", total=None)
            sem = audit_links(ws, spec, concurrency=concurrency,
                              progress=lambda d, t: prog.update(task, completed=d, total=t))
    if sem is not None and fix and sem.flagged:
        fixed = fix_links(ws, sem.flagged)
    if json_out:
        out = {"structure": st.to_dict()}
        if sem is not None:
            out["links"] = sem.to_dict()
        if fixed is not None:
            out["fix"] = fixed.to_dict()
        if packets is not None:
            out["packets"] = packets
        print_json(out)
    else:
        console.print(f"structural audit: {'PASS' if st.ok else 'FAIL'}")
        table = Table("check", "result")
        table.add_row("pages", str(st.pages))
        if st.scope:
            table.add_row("scope", f"{', '.join(st.scope)} ({st.articles} articles; {st.out_of_scope} outside)")
        table.add_row("articles referenced", f"{st.referenced}/{st.articles} ({st.coverage:.1%})")
        table.add_row("page->article links", str(st.links))
        for label, items in (("unreferenced articles", st.unreferenced), ("dangling ids", st.dangling),
                             ("pages without sources", st.no_sources), ("pages missing from index", st.not_in_index),
                             ("index lines without a page", st.index_orphans), ("malformed pages", st.malformed),
                             ("stale links (article changed)", st.stale)):
            table.add_row(label, str(len(items)))
        console.print(table)
        for label, items in (("unreferenced", st.unreferenced), ("dangling", st.dangling),
                             ("no sources", st.no_sources), ("not in index", st.not_in_index),
                             ("index orphan", st.index_orphans), ("malformed", st.malformed)):
            for it in items[:20]:
                console.print(f"  {label}: {it if isinstance(it, str) else ' -> '.join(it)}",
                              markup=False, highlight=False, soft_wrap=True)
        if packets is not None:
            console.print(f"wrote {packets['items']} link packets to {packets['folder']} (mapping: "
                          f"{packets['mapping']}; keep it away from the judges); when they are filled: "
                          f"`skillrag wiki audit --links --verdicts {packets['folder']}`",
                          markup=False, highlight=False, soft_wrap=True)
        if sem is not None:
            console.print(f"semantic audit ({sem.model}): {len(sem.judgements) - len(sem.flagged)}/"
                          f"{len(sem.judgements)} links supported ({sem.pass_rate:.1%}); {sem.cached} from cache; "
                          f"{sem.input_tokens:,} in / {sem.output_tokens:,} out tokens",
                          markup=False, highlight=False, soft_wrap=True)
            for e in sem.errors[:20]:
                console.print(f"  note: {e}", markup=False, highlight=False, soft_wrap=True)
            for j in sem.flagged[:50]:
                console.print(f"  flagged: {j.page_id} -> {j.article_id} [{j.link_type}]: {j.reason}",
                              markup=False, highlight=False, soft_wrap=True)
        if fixed is not None:
            console.print(f"fixed: {fixed.links_removed} links removed, {len(fixed.pages_updated)} pages updated, "
                          f"{len(fixed.pages_deleted)} deleted; {len(fixed.uncited)} articles now uncited "
                          "(`skillrag wiki build` re-places them)")
    if not st.ok:
        raise typer.Exit(1)


@wiki_app.command("pages")
def pages_cmd(workspace: WorkspaceOpt = None, json_out: JsonOpt = False) -> None:
    """List the pages of the layer."""
    ws = open_workspace(workspace)
    pages = Layer(ws).pages()
    if json_out:
        print_json([{"id": p.id, "title": p.title, "kind": p.kind, "sources": p.source_ids(),
                     "links": len(p.links()), "steps": len(p.steps), "variant": p.variant, "builder": p.builder}
                    for p in pages])
        return
    table = Table("title", "kind", "sources", "steps")
    table.add_column("id", overflow="fold")
    for p in pages:
        table.add_row(p.title, p.kind, str(len(p.sources)), str(len(p.steps)), p.id)
    console.print(table)
    console.print(f"{len(pages)} pages")


@wiki_app.command("show")
def show_cmd(
    page_id: Annotated[str, typer.Argument(metavar="PAGE_ID", help="Page id (see `skillrag wiki pages`).")],
    workspace: WorkspaceOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Print one page (its Markdown file, or JSON)."""
    ws = open_workspace(workspace)
    page = Layer(ws).read(page_id)
    if json_out:
        data = page.model_dump(mode="json")
        data["article_ids"] = page.article_ids()
        print_json(data)
    else:
        write_raw(render_page(page))


def register(app: typer.Typer) -> None:
    from skillrag.cli.wiki_agent import agent_app

    wiki_app.add_typer(agent_app, name="agent")
    app.add_typer(wiki_app, name="wiki")
