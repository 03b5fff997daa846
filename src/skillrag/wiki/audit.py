"""Audits of the navigation layer: structural (code only) and semantic (an LLM judge per link).

Structural: every active article cited by at least one page, no dangling ids (cited articles that do
not exist or were removed), no page without sources, every page in ``index.md`` and no index line
without a page, no malformed page file, and pages built from an older version of an article (stale).

Semantic (paper appendix D, "navigation-layer audit"): for every page -> article link, a judge model
decides whether the article supports what the page attributes to it and gives a reason. Verdicts are
cached in the store per (page hash, article hash, model), so a rerun only judges what changed.
``fix_links`` removes the flagged links (a page left without sources is deleted); articles left
uncited are re-placed by the next ``skillrag wiki build``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from skillrag.corpus import ArticleStore
from skillrag.wiki._prompts import load_prompt
from skillrag.wiki.layer import Layer, in_scope
from skillrag.wiki.page import Page, render_page
from skillrag.workspace import Schema, Workspace

__all__ = [
    "LinkAudit",
    "LinkJob",
    "LinkJudgement",
    "LinkVerdict",
    "StructuralAudit",
    "audit_links",
    "audit_structure",
    "fix_links",
    "link_jobs",
    "page_links",
]


@dataclass
class StructuralAudit:
    """Result of the structural audit. ``ok`` is true when no check failed (stale pages only warn)."""

    pages: int
    articles: int
    links: int
    referenced: int
    unreferenced: list[str] = field(default_factory=list)
    dangling: list[tuple[str, str]] = field(default_factory=list)  # (page id, article id)
    no_sources: list[str] = field(default_factory=list)
    not_in_index: list[str] = field(default_factory=list)
    index_orphans: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    stale: list[tuple[str, str]] = field(default_factory=list)  # (page id, article id)
    scope: list[str] | None = None  # the article id prefixes the layer was built over (None: all articles)
    out_of_scope: int = 0  # active articles outside the scope (not expected on any page)

    @property
    def coverage(self) -> float:
        """Share of active articles cited by at least one page, in [0, 1]."""
        return self.referenced / self.articles if self.articles else 0.0

    @property
    def ok(self) -> bool:
        return not (self.unreferenced or self.dangling or self.no_sources or self.not_in_index
                    or self.index_orphans or self.malformed)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(coverage=self.coverage, ok=self.ok)
        return d


def audit_structure(ws: Workspace, layer: Layer | None = None) -> StructuralAudit:
    """Run the structural checks over the workspace's layer (``layer``: another one, e.g. a build's
    staging layer) and articles (no model). A layer built over a scope (its manifest's ``scope``) is
    checked against the articles of that scope; the others are counted in ``out_of_scope``."""
    layer = layer or Layer(ws)
    every = ArticleStore(ws).hashes()
    man = layer.manifest() if layer.manifest_path.is_file() else None
    scope = man.scope if man is not None else None
    hashes = {a: h for a, h in every.items() if in_scope(a, scope)}
    malformed = layer.bad_pages()
    pages = layer.pages(skip_bad=True)
    index = layer.index_entries()
    cited: set[str] = set()
    rep = StructuralAudit(pages=len(pages), articles=len(hashes), links=0, referenced=0, malformed=malformed,
                          scope=scope, out_of_scope=len(every) - len(hashes))
    page_ids = {p.id for p in pages}
    for p in pages:
        ids = p.article_ids()
        rep.links += len(ids)
        if not p.sources:
            rep.no_sources.append(p.id)
        for aid in ids:
            if aid not in every:
                rep.dangling.append((p.id, aid))
            else:
                cited.add(aid)
                if aid in p.built_from and p.built_from[aid] != every[aid]:
                    rep.stale.append((p.id, aid))
        if p.id not in index:
            rep.not_in_index.append(p.id)
    bad_stems = {line.split(":", 1)[0].rsplit("/", 1)[-1].removesuffix(".md") for line in malformed}
    rep.index_orphans = sorted(pid for pid in index if pid not in page_ids and pid not in bad_stems)
    rep.referenced = len(cited & set(hashes))
    rep.unreferenced = sorted(set(hashes) - cited)
    return rep


class LinkVerdict(BaseModel):
    """The judge's structured answer for one link."""

    supported: bool = Field(description="Does the article support what the page attributes to it?")
    reason: str = Field(description="One sentence.")


@dataclass
class LinkJudgement:
    page_id: str
    article_id: str
    link_type: str
    supported: bool
    reason: str


@dataclass
class LinkAudit:
    """Semantic audit result: one judgement per page -> article link."""

    model: str
    judgements: list[LinkJudgement] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def flagged(self) -> list[LinkJudgement]:
        return [j for j in self.judgements if not j.supported]

    @property
    def pass_rate(self) -> float:
        """Share of judged links the judge found supported, in [0, 1] (0 when none was judged)."""
        return sum(j.supported for j in self.judgements) / len(self.judgements) if self.judgements else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "links": len(self.judgements), "passed": len(self.judgements) - len(self.flagged),
                "pass_rate": self.pass_rate, "cached": self.cached, "errors": self.errors,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "flagged": [asdict(j) for j in self.flagged], "judgements": [asdict(j) for j in self.judgements]}


def page_links(page: Page) -> list[tuple[str, str, list[str]]]:
    """``(article id, link type, claims)`` per cited article of ``page``, in page order.

    Claims are the steps that link to the article; an article cited only at page level (sources or
    pooled links) is judged against the page's intent and solves lines.
    """
    out = []
    for aid in page.article_ids():
        steps = [s for s in page.steps if any(ln.article_id == aid for ln in s.links)]
        types = [ln.type.value for s in steps for ln in s.links if ln.article_id == aid]
        types += [ln.type.value for ln in page.pooled_links if ln.article_id == aid]
        claims = [s.text for s in steps] or [c for c in (page.intent, *page.solves) if c]
        out.append((aid, types[0] if types else "reference", claims or [page.title]))
    return out


AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS wiki_link_audit (
    page_hash    TEXT NOT NULL,
    article_hash TEXT NOT NULL,
    page_id      TEXT NOT NULL,
    article_id   TEXT NOT NULL,
    model        TEXT NOT NULL,
    supported    INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    PRIMARY KEY (page_hash, article_hash, article_id, model)
);
"""
#: The link audit's cache table in the workspace store, by version (``skillrag.workspace.schema``).
SCHEMA = Schema("wiki.audit", (AUDIT_SCHEMA,))


@dataclass(frozen=True)
class LinkJob:
    """One page -> article link to judge, with the judge's prompt (``prompts/judge_link.md``) filled in."""

    page_id: str
    page_hash: str  # sha256 of the rendered page
    article_id: str
    article_hash: str
    link_type: str
    prompt: str


def link_jobs(ws: Workspace, *, max_article_chars: int = 12000) -> list[LinkJob]:
    """Every page -> article link of the workspace's layer with its judge prompt, in page order (pages by
    id). Dangling links are left out (the structural audit reports them). The model judge
    (``audit_links``) and external judges (``skillrag.evaluation.link_packets``) judge these same prompts."""
    prompt = load_prompt("judge_link.md")
    pages = Layer(ws).pages(skip_bad=True)
    arts = ArticleStore(ws).get_many(sorted({aid for p in pages for aid in p.article_ids()}))
    jobs = []
    for p in pages:
        ph = hashlib.sha256(render_page(p).encode()).hexdigest()
        for aid, ltype, claims in page_links(p):
            if aid not in arts:
                continue
            art = arts[aid]
            body = art.body if len(art.body) <= max_article_chars else art.body[:max_article_chars] + "\n…"
            text = prompt.render(page_title=p.title, page_id=p.id, link_type=ltype, article_id=aid,
                                 claims="\n".join(f"- {c}" for c in claims), article_title=art.title,
                                 article_body=body)
            jobs.append(LinkJob(page_id=p.id, page_hash=ph, article_id=aid, article_hash=art.content_hash,
                                link_type=ltype, prompt=text))
    return jobs


def audit_links(
    ws: Workspace,
    model: Any,
    *,
    concurrency: int = 1,
    max_article_chars: int = 12000,
    progress: Callable[[int, int], None] | None = None,
) -> LinkAudit:
    """Judge every page -> article link (``link_jobs``) with ``model`` (a ``Model`` or a spec for
    ``resolve_model``). Raises ``ModelError`` when the provider fails.
    """
    from skillrag.models import make_agent, model_errors, model_id

    agent = make_agent(model, LinkVerdict, settings=ws.config.models)
    name = model_id(model)
    with ws.connect(SCHEMA) as conn:
        cache = {(r["page_hash"], r["article_hash"], r["article_id"]): (bool(r["supported"]), r["reason"])
                 for r in conn.execute("SELECT * FROM wiki_link_audit WHERE model=?", (name,))}
    jobs = link_jobs(ws, max_article_chars=max_article_chars)
    report = LinkAudit(model=name)
    results: list[LinkJudgement | None] = [None] * len(jobs)
    sem = asyncio.Semaphore(max(1, concurrency))
    done = 0

    async def judge(i: int) -> None:
        nonlocal done
        job = jobs[i]
        key = (job.page_hash, job.article_hash, job.article_id)
        if key in cache:
            ok, reason = cache[key]
            report.cached += 1
        else:
            async with sem:
                with model_errors(name):
                    res = await agent.run(job.prompt)
            report.input_tokens += res.usage.input_tokens or 0
            report.output_tokens += res.usage.output_tokens or 0
            ok, reason = res.output.supported, res.output.reason.strip()
            with ws.connect() as conn, conn:
                conn.execute("INSERT OR REPLACE INTO wiki_link_audit VALUES (?,?,?,?,?,?,?)",
                             (job.page_hash, job.article_hash, job.page_id, job.article_id, name, int(ok), reason))
        results[i] = LinkJudgement(page_id=job.page_id, article_id=job.article_id, link_type=job.link_type,
                                   supported=ok, reason=reason)
        done += 1
        if progress:
            progress(done, len(jobs))

    async def run_all() -> None:
        await asyncio.gather(*(judge(i) for i in range(len(jobs))))

    asyncio.run(run_all())
    report.judgements = [r for r in results if r is not None]
    return report


@dataclass
class FixReport:
    links_removed: int = 0
    pages_updated: list[str] = field(default_factory=list)
    pages_deleted: list[str] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)  # articles no page cites any more

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fix_links(ws: Workspace, flagged: list[LinkJudgement]) -> FixReport:
    """Remove each flagged page -> article link (its step links, pooled links and source entry)."""
    layer = Layer(ws)
    by_page: dict[str, set[str]] = {}
    for j in flagged:
        by_page.setdefault(j.page_id, set()).add(j.article_id)
    rep = FixReport()
    for pid, drop in sorted(by_page.items()):
        from skillrag.wiki.build import _strip_removed

        page = layer.read(pid)
        new = _strip_removed(page, drop)
        rep.links_removed += len(drop & set(page.article_ids()))
        if new is None:
            layer.delete(pid)
            rep.pages_deleted.append(pid)
        else:
            layer.write(new)
            rep.pages_updated.append(pid)
        layer.log([f"{aid} link removed from page {pid} (semantic audit)" for aid in sorted(drop)])
    cited = {aid for p in layer.pages(skip_bad=True) for aid in p.article_ids()}
    rep.uncited = sorted({j.article_id for j in flagged} - cited)
    return rep
