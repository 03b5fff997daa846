"""`skillrag index` and `skillrag search`: the retrieval index and the one retrieval tool."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from skillrag.cli._common import JsonOpt, WorkspaceOpt, console, err_console, open_workspace, print_json
from skillrag.cli._progress import progress_bar
from skillrag.errors import ConfigError
from skillrag.search import (
    BACKENDS,
    EMBEDDERS,
    MODES,
    IndexReport,
    SearchFilters,
    build_index,
    open_retriever,
)
from skillrag.search._items import WikiPageSource, no_layer_error
from skillrag.workspace import Workspace
from skillrag.workspace.config import MAX_K

EmbedderOpt = Annotated[
    str | None,
    typer.Option("--embedder", help=f"Embedder backend: {', '.join(EMBEDDERS)} (default: search.embedder)."),
]


def _check_choice(value: str | None, choices: tuple[str, ...] | list[str], what: str) -> None:
    if value is not None and value not in choices:
        raise ConfigError(f"unknown {what} {value!r} (choose from {', '.join(choices)})")


def _layer_behind(ws: Workspace) -> str | None:
    """A note when the navigation layer does not cover the corpus as it is now (articles ingested,
    changed or removed since `wiki build`): the wiki backend reaches articles only through pages, so a
    new article stays out of its results until the layer is brought up to date."""
    from skillrag.corpus import ArticleStore
    from skillrag.wiki import Layer

    man = Layer(ws).manifest()
    if man is None:
        return None
    # ids and content hashes only (no article bodies): this runs after every `skillrag index`, a no-op too
    now = {i: h for i, h in ArticleStore(ws).hashes().items() if man.in_scope(i)}
    new = len(set(now) - set(man.articles))
    removed = len(set(man.articles) - set(now))
    changed = sum(1 for i, h in now.items() if i in man.articles and man.articles[i] != h)
    if not (new or changed or removed):
        return None
    return (f"wiki: the navigation layer is older than the corpus ({new} new, {changed} changed, {removed} removed "
            "articles since `skillrag wiki build`); the wiki backend reaches articles only through its pages: "
            "run `skillrag wiki build`, then `skillrag index`")


def index_cmd(
    workspace: WorkspaceOpt = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="direct, wiki or all (default: search.backend, `wiki` unless configured; with "
        "search.wiki_order fused, wiki also brings the direct index up to date).")] = None,
    embedder: EmbedderOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Rewrite the index files even if up to date.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Build or update the search index (only new or changed items are embedded).

    With no --backend it builds what `search.backend` needs: for `wiki` (the default) the direct index
    first, when the fused order uses it, then the wiki index. A wiki index needs a navigation layer
    (`skillrag wiki build`); without one the command stops before embedding anything."""
    ws = open_workspace(workspace)
    _check_choice(backend, [*BACKENDS, "all"], "backend")
    _check_choice(embedder, list(EMBEDDERS), "embedder")
    targets = list(BACKENDS) if backend == "all" else [backend or ws.config.search.backend]
    reports: list[IndexReport] = []
    skipped: list[str] = []
    notes: list[str] = []
    seen = [0, 0]  # passages in the vector cache / to embed, as last reported by build_index
    with ws.write_lock("index"):
        if targets == ["wiki"]:
            if WikiPageSource().layer_fingerprint(ws) is None:
                raise no_layer_error(ws)  # before the direct index is embedded: no half-done default flow
            if ws.config.search.wiki_order == "fused":
                targets = ["direct", "wiki"]  # the fused order ranks a page's articles with the direct index
        for target in targets:
            if backend == "all" and target == "wiki" and WikiPageSource().layer_fingerprint(ws) is None:
                skipped.append("wiki: no navigation layer yet, or its build was interrupted (run `skillrag wiki build`); skipped")
                continue
            with progress_bar(f"index {target}") as prog:
                task = prog.add_task(target, total=None)

                def on_progress(done: int, total: int, prog: Progress = prog, task: int = task) -> None:
                    seen[:] = [done, total]
                    prog.update(task, completed=done, total=total)

                try:
                    reports.append(build_index(ws, backend=target, embedder=embedder, progress=on_progress,
                                               force=force))
                except KeyboardInterrupt:
                    prog.stop()
                    done = ", ".join(r.backend for r in reports) or "none"
                    err_console.print(
                        f"interrupted: index {target} not written; kept {seen[0]} of {seen[1]} passage vectors "
                        f"in the vector store (store.sqlite; backends finished: {done}); "
                        "run `skillrag index` again to resume",
                        markup=False, highlight=False, soft_wrap=True)
                    raise typer.Exit(130) from None
        behind = _layer_behind(ws) if any(r.backend == "wiki" for r in reports) else None
        if behind:
            notes.append(behind)
    if json_out:
        print_json({"reports": [r.to_dict() for r in reports], "skipped": skipped, "notes": notes})
        return
    for r in reports:
        if r.up_to_date and r.backend == "wiki" and behind:  # up to date with a layer the corpus has outgrown
            console.print(f"wiki: index up to date with the navigation layer ({r.items} items, {r.passages} "
                          "passages); the layer is older than the corpus: run `skillrag wiki build`",
                          markup=False, highlight=False, soft_wrap=True)
        elif r.up_to_date:
            console.print(f"{r.backend}: up to date ({r.items} items, {r.passages} passages)")
        else:
            console.print(f"{r.backend}: {r.items} items ({len(r.added)} added, {len(r.changed)} changed, "
                          f"{len(r.removed)} removed), {r.embedded} passages embedded, {r.reused} reused, "
                          f"{r.seconds:.1f} s")
    for line in skipped + notes:
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)


def search_cmd(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to search for.")],
    workspace: WorkspaceOpt = None,
    backend: Annotated[str | None, typer.Option("--backend", help="direct or wiki (default: search.backend).")]
    = None,
    mode: Annotated[str | None, typer.Option("--mode", help="hybrid, bm25 or dense (default: search.mode).")] = None,
    k: Annotated[int | None, typer.Option("-k", help="Number of articles (default: search.k).", min=1, max=MAX_K)]
    = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only articles with this source tag (repeatable).")]
    = None,
    prefix: Annotated[list[str] | None, typer.Option(
        "--prefix", help="Only articles whose source path starts with this (repeatable).")] = None,
    title_prefix: Annotated[list[str] | None, typer.Option(
        "--title-prefix", help="Only articles whose title starts with this, any case (repeatable).")] = None,
    title_contains: Annotated[list[str] | None, typer.Option(
        "--title-contains", help="Only articles whose title contains this, any case (repeatable).")] = None,
    id_prefix: Annotated[list[str] | None, typer.Option(
        "--id-prefix", help="Only articles whose id starts with this (repeatable).")] = None,
    category: Annotated[list[str] | None, typer.Option(
        "--category", help="Only articles of this product category, any case, whole (repeatable).")] = None,
    customer_type: Annotated[list[str] | None, typer.Option(
        "--customer-type", help="Only articles for this customer type (business, personal); general "
        "articles, of no known type, pass too (repeatable).")] = None,
    pages: Annotated[int, typer.Option(
        "--pages", min=0, max=50, help="Navigation pages to list too (wiki backend).")] = 3,
    embedder: EmbedderOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Search the index: ranked source articles with their best-matching passage (and, for --backend
    wiki, the ranked navigation pages and the pages that led to each article)."""
    ws = open_workspace(workspace)
    _check_choice(backend, BACKENDS, "backend")
    _check_choice(mode, MODES, "mode")
    _check_choice(embedder, list(EMBEDDERS), "embedder")
    retriever = open_retriever(ws, backend=backend, mode=mode, embedder=embedder)
    filters = SearchFilters(source_tags=tag or None, path_prefixes=prefix or None,
                            title_prefixes=title_prefix or None, title_contains=title_contains or None,
                            id_prefixes=id_prefix or None, categories=category or None,
                            customer_types=customer_type or None)
    hits = retriever.search(query, k=k or ws.config.search.k, filters=filters)
    ranked_pages = retriever.search_pages(query, k=pages, filters=filters) if pages else []
    if json_out:  # one shape on both backends: `pages` is empty on direct
        print_json({"hits": [h.to_dict() for h in hits], "pages": [p.to_dict() for p in ranked_pages]})
        return
    if not hits:
        console.print("no results")
        return
    table = Table()
    table.add_column("#", justify="right")
    table.add_column("article", overflow="fold")  # ids are shown whole: they are what get_article takes
    table.add_column("rel", justify="right")
    table.add_column("bm25/dense", justify="right")
    table.add_column("title", ratio=2)
    table.add_column("best passage", ratio=3)
    if retriever.backend == "wiki":
        table.add_column("pages", overflow="fold")
    for n, h in enumerate(hits, 1):
        ranks = f"{h.bm25_rank or '-'}/{h.dense_rank or '-'}"
        where = f"[{h.section}] " if h.section else ""
        row = [Text(str(n)), Text(h.article_id), Text(f"{h.relevance:.2f}"), Text(ranks), Text(h.title),
               Text(where + h.preview)]
        if retriever.backend == "wiki":
            row.append(Text(", ".join(h.page_ids)))
        table.add_row(*row)
    console.print(table)
    for p in ranked_pages:
        arts = ", ".join(a.id for a in p.articles)
        listed = max(p.listed, len(p.articles))
        cut = f" of {listed} (cut by filter {p.cut_by})" if p.cut_by else ""
        console.print(f"page {p.page_id} ({p.kind}, {p.relevance:.2f}): {p.title} — {len(p.articles)}{cut} articles: "
                      f"{arts}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("index")(index_cmd)
    app.command("search")(search_cmd)


