"""Build or update a workspace's navigation layer, and maintain it after a re-ingest.

``build_wiki(ws, builder=..., variant=...)`` compares the article hashes recorded in
``wiki/manifest.json`` with the store's (split documents are covered by their sections): a first
build covers every article; later builds touch only what new, changed or removed articles (and
articles no page cites any more) affect, and the report says which pages were created, updated and
deleted. ``--rebuild`` builds into a staging folder and swaps it in when complete (``layer`` module).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from skillrag.corpus import Article, ArticleStore
from skillrag.errors import EmptyInputError, UserError, WorkspaceError
from skillrag.tracing import traced
from skillrag.wiki.extractive import build_extractive
from skillrag.wiki.layer import Layer, Manifest, library_version, now_iso, recover_swap, staging_dir, swap_in
from skillrag.wiki.page import Page
from skillrag.wiki.variants import VARIANTS
from skillrag.workspace import Workspace

__all__ = ["ArticleDiff", "BuildReport", "build_wiki", "diff_articles", "estimate_build"]


@dataclass
class ArticleDiff:
    """Articles to (re)place compared with the manifest."""

    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unreferenced: list[str] = field(default_factory=list)  # covered by the manifest, cited by no page

    def touched(self) -> set[str]:
        return set(self.new) | set(self.changed) | set(self.removed) | set(self.unreferenced)

    def empty(self) -> bool:
        return not self.touched()


@dataclass
class BuildReport:
    """What one build did. Token counts are the model's reported usage (0 for the extractive builder)."""

    builder: str
    variant: str
    model: str | None
    articles: int
    pages: int
    diff: ArticleDiff
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    seconds: float = 0.0
    up_to_date: bool = False
    index_repaired: bool = False  # index.md did not match the page files and was rewritten
    swapped: bool = False  # a --rebuild finished and replaced the previous layer

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diff_articles(layer: Layer, hashes: dict[str, str], pages: list[Page]) -> ArticleDiff:
    """Compare the manifest's hashes (none: a first build) with the store's ``hashes``."""
    man = layer.manifest()
    recorded = man.articles if man else {}
    cited = {aid for p in pages for aid in p.article_ids()}
    d = ArticleDiff(
        new=sorted(set(hashes) - set(recorded)),
        changed=sorted(i for i in hashes if i in recorded and recorded[i] != hashes[i]),
        removed=sorted(set(recorded) - set(hashes)),
    )
    d.unreferenced = sorted(i for i in hashes if i in recorded and i not in cited and i not in d.changed)
    return d


def _strip_removed(page: Page, removed: set[str]) -> Page | None:
    """``page`` without links to or sources of ``removed`` articles; None if no source is left.

    A step that rested only on removed articles is dropped with them."""
    sources = tuple(s for s in page.sources if s.id not in removed)
    if not sources:
        return None
    steps = []
    for s in page.steps:
        links = tuple(ln for ln in s.links if ln.article_id not in removed)
        if s.links and not links:
            continue
        steps.append(s.model_copy(update={"links": links}))
    return page.model_copy(update={
        "steps": tuple(steps),
        "pooled_links": tuple(ln for ln in page.pooled_links if ln.article_id not in removed),
        "sources": sources,
        "built_from": {k: v for k, v in page.built_from.items() if k not in removed},
    })


def drop_removed(layer: Layer, pages: list[Page], removed: list[str], journal: Any, report: BuildReport) -> None:
    """After a re-ingest (model and agent builds): drop links to and sources of ``removed`` articles,
    delete the pages left without sources, forget their journal rows and log it."""
    gone = set(removed)
    for page in pages:
        if not gone & set(page.article_ids()):
            continue
        new = _strip_removed(page, gone)
        if new is None:
            layer.delete(page.id)
            report.deleted.append(page.id)
        else:
            layer.write(new)
            report.updated.append(page.id)
    journal.forget(sorted(gone))
    layer.log([f"{aid} (removed) dropped from the layer" for aid in sorted(gone)])


def _build_extractive(
    layer: Layer, articles: list[Article], pages: list[Page], diff: ArticleDiff, variant: str,
    max_group: int, max_steps: int, first: bool, report: BuildReport,
) -> None:
    """Compute the whole layer (it takes about a second for 700 articles) and write what differs:
    new page ids, pages touching a new, changed, removed or re-placed article (every differing page
    on a first build), and delete page ids the layer no longer has."""
    fresh = {p.id: p for p in build_extractive(articles, variant=variant, max_group=max_group, max_steps=max_steps)}
    old = {p.id: p for p in pages}
    touched = diff.touched()
    for pid, page in sorted(fresh.items()):
        if pid not in old:
            report.created.append(pid)
        elif old[pid] != page and (first or touched & (set(page.source_ids()) | set(old[pid].source_ids()))):
            report.updated.append(pid)
    report.deleted = sorted(set(old) - set(fresh))
    layer.write_many([fresh[pid] for pid in report.created + report.updated], report.deleted)
    lines = []
    for pid in sorted(report.created + report.updated):
        page = fresh[pid]
        for aid in page.source_ids():
            if aid in touched:
                kind = "new" if aid in diff.new else "changed" if aid in diff.changed else "re-placed"
                lines.append(f"{aid} ({kind}) placed on {page.kind} page {pid} (builder extractive, variant {variant})")
    lines += [f"{aid} (removed) dropped; page {pid} deleted" for pid in report.deleted
              for aid in old[pid].source_ids() if aid in diff.removed]
    lines += [f"page {pid} deleted (no longer in the layer)" for pid in report.deleted
              if not set(old[pid].source_ids()) & set(diff.removed)]
    layer.log(lines)


def _prepare_staging(ws: Workspace, builder: str, variant: str, model_name: str | None) -> tuple[Layer, bool]:
    """The staging layer of a rebuild: the one left by an interrupted rebuild of the same builder,
    variant and model (resumed), else a fresh folder holding a copy of the live log."""
    root = staging_dir(ws)
    staging = Layer(ws, root=root)
    try:
        man = staging.manifest()
    except WorkspaceError:
        man = None
    if man is not None and (man.builder, man.variant, man.model) == (builder, variant, model_name):
        return staging, True
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    live_log = Layer(ws).log_path
    if live_log.is_file():
        shutil.copyfile(live_log, staging.log_path)
    return staging, False


def _build_span(report: BuildReport, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"skillrag.wiki.builder": report.builder, "skillrag.wiki.variant": report.variant,
            "skillrag.wiki.model": report.model, "skillrag.wiki.articles": report.articles,
            "skillrag.wiki.pages": report.pages, "skillrag.wiki.created": len(report.created),
            "skillrag.wiki.updated": len(report.updated), "skillrag.wiki.failed": len(report.failed),
            "skillrag.wiki.up_to_date": report.up_to_date, "gen_ai.usage.input_tokens": report.input_tokens,
            "gen_ai.usage.output_tokens": report.output_tokens}


@traced("skillrag.wiki.build", lambda ws, **kw: {"skillrag.wiki.rebuild": bool(kw.get("rebuild"))}, after=_build_span)
def build_wiki(
    ws: Workspace,
    *,
    builder: str | None = None,
    variant: str | None = None,
    model: Any = None,
    rebuild: bool = False,
    concurrency: int | None = None,
    max_group: int | None = None,
    max_steps: int | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> BuildReport:
    """Build the layer, or bring it up to date with the articles.

    Defaults come from the workspace ``wiki:`` settings. ``rebuild`` builds a whole new layer in a
    staging folder and swaps it in only once it is complete (an interrupted or failed rebuild leaves
    the existing layer untouched; rerunning ``rebuild`` resumes the staging folder when builder,
    variant and model match). Every build ends by checking ``index.md`` against the page files.
    Raises ``EmptyInputError`` when there are no articles, ``UserError`` when the existing layer was
    built with another builder or variant (pass ``rebuild=True`` to replace it) or when the llm
    builder has no model, ``ModelError`` when the model cannot be reached (before anything is written).
    """
    import time

    t0 = time.perf_counter()
    cfg = ws.config.wiki
    builder = builder or cfg.builder
    variant = variant or cfg.variant
    if variant not in VARIANTS:
        raise UserError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
    if builder == "agent":
        raise UserError("the agent builder is worked by coding agents: `skillrag wiki build --builder agent` "
                        "prepares the build and exports the wiki-maintainer skill they run")
    if builder not in ("extractive", "llm"):
        raise UserError(f"unknown builder {builder!r} (choose extractive, llm or agent)")
    store = ArticleStore(ws)
    articles = store.list(split_documents=False)  # a split document is covered by its sections
    if not articles:
        raise EmptyInputError("no articles in the workspace: run `skillrag ingest` first")
    recover_swap(ws)
    spec = None
    resolved = None
    model_name = None
    if builder == "llm":
        from skillrag.models import model_id, resolve_model

        spec = model if model is not None else (cfg.model or ws.config.models.default)
        if spec is None:
            raise UserError("the llm builder needs a model: pass --model ID or set wiki.model in skillrag.yaml")
        resolved = resolve_model(spec, settings=ws.config.models)  # a missing key fails here, before any write
        model_name = model_id(spec)
    journal_table = "wiki_journal"
    if rebuild:
        from skillrag.wiki.agent import open_build

        if open_build(ws) is not None:  # its staging layer is the agents' work: never overwritten here
            raise UserError("an agent build is in progress in the staging folder: finish it (`skillrag wiki agent "
                            "finish`) or drop it (`skillrag wiki build --builder agent --discard`) first")
        layer, resumed = _prepare_staging(ws, builder, variant, model_name)
        journal_table = "wiki_journal_rebuild"
        man = layer.manifest() if resumed else None
    else:
        layer = Layer(ws)
        man = layer.manifest()
        if man and (man.builder != builder or man.variant != variant):
            raise UserError(
                f"the layer was built with builder {man.builder!r}, variant {man.variant!r}; "
                f"pass --rebuild to replace it with builder {builder!r}, variant {variant!r}"
            )
        if man is None and layer.exists():
            raise UserError(f"{layer.pages_dir} holds pages but no manifest; pass --rebuild to rebuild the layer")
    scope = man.scope if man is not None else None  # a layer built over a scope stays over it
    if scope is not None:
        articles = [a for a in articles if man.in_scope(a.id)]
    if man is None:  # recorded first, so an interrupted first build resumes instead of refusing
        if builder == "llm":  # a journal without a layer belongs to another layer (e.g. a copied store)
            from skillrag.wiki.llm import Journal

            Journal(ws, table=journal_table).clear()
        layer.write_manifest(Manifest(library_version=library_version(), builder=builder, variant=variant,
                                      model=model_name, built_at=now_iso()))
    pages = layer.pages()
    hashes = {a.id: a.content_hash for a in articles}
    diff = diff_articles(layer, hashes, pages)
    report = BuildReport(builder=builder, variant=variant, model=model_name, articles=len(articles),
                         pages=len(pages), diff=diff)
    if diff.empty() and man is not None and man.articles:
        report.up_to_date = True
        report.model = man.model
        report.index_repaired = layer.sync_index()
        if rebuild:  # finished earlier, but not swapped in (the process stopped in between)
            swap_in(ws, layer.root)
            report.swapped = True
        report.seconds = time.perf_counter() - t0
        return report
    first = not (man is not None and man.articles)
    if builder == "extractive":
        mg, ms = max_group or cfg.max_group, max_steps or cfg.max_steps
        _build_extractive(layer, articles, pages, diff, variant, mg, ms, first, report)
        params: dict[str, Any] = {"max_group": mg, "max_steps": ms}
    else:
        from skillrag.wiki.llm import Journal, LLMBuilder, LLMBuildLimits

        limits = LLMBuildLimits.from_settings(cfg)
        journal = Journal(ws, table=journal_table)

        def make_builder() -> LLMBuilder:
            return LLMBuilder(ws, resolved, variant=variant, limits=limits, concurrency=concurrency or cfg.concurrency,
                              progress=progress, layer=layer, journal=journal, model_name=model_name)

        llm = make_builder()
        if diff.removed:
            drop_removed(layer, pages, diff.removed, journal, report)
            llm = make_builder()
        journal.forget(diff.unreferenced)
        todo = [a for a in articles if a.id in set(diff.new) | set(diff.changed) | set(diff.unreferenced)]
        res = llm.run(todo)
        report.created += [p for p in dict.fromkeys(res.created) if p not in report.created]
        report.updated += [p for p in dict.fromkeys(res.updated) if p not in report.updated and p not in res.created]
        report.deleted += [p for p in res.deleted if p not in report.deleted]
        report.failed = res.failed
        report.input_tokens, report.output_tokens, report.requests = res.input_tokens, res.output_tokens, res.requests
        params = limits.params()
    pages = layer.pages()
    covered = {aid for p in pages for aid in p.article_ids()}
    prev = man.articles if man else {}
    recorded = {aid: h for aid, h in hashes.items() if aid in covered}
    # an article the llm builder failed on keeps its old hash, so the next build retries it
    for aid in report.failed:
        recorded.pop(aid, None)
        if aid in prev and aid in covered:
            recorded[aid] = prev[aid]
    layer.write_manifest(Manifest(
        library_version=library_version(), builder=builder, variant=variant, model=model_name,
        params=params, articles=dict(sorted(recorded.items())), built_at=now_iso(), scope=scope,
    ))
    report.index_repaired = layer.sync_index(pages)
    report.model = model_name
    report.pages = len(pages)
    if rebuild and not report.failed:
        swap_in(ws, layer.root)
        if builder == "llm":
            Journal(ws, table=journal_table).move_to(Journal(ws))
        report.swapped = True
    report.seconds = time.perf_counter() - t0
    return report


def estimate_build(ws: Workspace, *, variant: str | None = None, model: Any = None) -> dict[str, int]:
    """``--dry-run``: the token estimate of an llm build of what is not yet built (no model call)."""
    from skillrag.wiki.llm import LLMBuilder, LLMBuildLimits

    cfg = ws.config.wiki
    spec = model if model is not None else (cfg.model or ws.config.models.default or "test")
    articles = ArticleStore(ws).list(split_documents=False)
    if not articles:
        raise EmptyInputError("no articles in the workspace: run `skillrag ingest` first")
    limits = LLMBuildLimits.from_settings(cfg)
    return LLMBuilder(ws, spec, variant=variant or cfg.variant, limits=limits).estimate(articles)

