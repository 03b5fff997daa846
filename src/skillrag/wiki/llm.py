"""The LLM builder: one pass per article in an update-or-create loop (paper appendix D).

For each article code selects a few candidate pages (BM25 over the pages, plus every page that already
cites the article), renders one bounded prompt (schema + candidates + article), and asks the model for a
structured :class:`PageDraft`. Code validates the draft (schema, every cited id exists, the article is
cited, an update keeps the page's sources, size caps) and sends the reasons back for a retry; an article
that still fails is recorded and retried in a later pass, then reported.

Resumable: every decision goes through a journal table in the workspace store (``wiki_journal``) with
the pages to write stored *before* the files are written, so a kill at any point loses nothing and a
rerun neither duplicates nor skips a page. Concurrency: model calls run ``concurrency`` at once;
results are applied one at a time, and a result whose target page changed meanwhile is recomputed.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillrag.corpus import Article, ArticleStore
from skillrag.wiki._prompts import load_prompt
from skillrag.wiki.candidates import PageSearch
from skillrag.wiki.layer import Layer
from skillrag.wiki.page import LINK_TYPES, Link, LinkType, Page, SourceRef, Step, render_page, slugify
from skillrag.wiki.variants import apply_variant
from skillrag.workspace import Workspace

__all__ = [
    "CHARS_PER_TOKEN",
    "DraftLink",
    "DraftStep",
    "Journal",
    "LLMBuildLimits",
    "LLMBuildResult",
    "LLMBuilder",
    "PageDraft",
    "validate_draft",
]

#: Token estimates use this many characters per token (a common rule of thumb for English text).
CHARS_PER_TOKEN = 4


class DraftLink(BaseModel):
    type: LinkType = Field(description="What the article contributes: " + ", ".join(LINK_TYPES) + ".")
    article_id: str


class DraftStep(BaseModel):
    text: str = Field(description="One claim or step, in your own words.")
    links: list[DraftLink] = Field(default_factory=list)


class PageDraft(BaseModel):
    """What the model returns for one article (the page schema shown in the prompt)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "update"]
    page_id: str | None = Field(None, description="Candidate page id to update; null to create.")
    title: str
    intent: str
    solves: list[str] = Field(default_factory=list)
    does_not_solve: list[str] = Field(default_factory=list)
    steps: list[DraftStep] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class LLMBuildLimits:
    """Bounds that keep every prompt and page a fixed size, whatever the corpus size."""

    candidate_pages: int = 5
    max_candidate_chars: int = 3000  # per candidate page shown, in characters
    max_article_chars: int = 12000  # of the article body shown, in characters
    max_steps: int = 30
    max_sources: int = 25
    max_page_chars: int = 12000  # rendered page, in characters
    max_retries: int = 2  # model retries per attempt after an invalid page
    passes: int = 2  # passes over failed articles before reporting them

    def prompt_cap(self) -> int:
        """An upper bound on one build prompt, in characters (retry text excluded)."""
        return 4000 + self.candidate_pages * (self.max_candidate_chars + 40) + self.max_article_chars + 600


@dataclass
class LLMBuildResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)  # article id -> last reasons
    skipped: int = 0  # already done with the same content hash
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    conflicts: int = 0
    max_prompt_chars: int = 0


JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS wiki_journal (
    article_id    TEXT PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('applying', 'done', 'failed')),
    action        TEXT,
    page_id       TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    reasons       TEXT NOT NULL DEFAULT '[]',
    payload       TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""


class Journal:
    """The LLM build's per-article journal in the workspace store."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        with ws.connect() as conn:
            conn.executescript(JOURNAL_SCHEMA)

    def rows(self) -> dict[str, sqlite3.Row]:
        with self.ws.connect() as conn:
            return {r["article_id"]: r for r in conn.execute("SELECT * FROM wiki_journal")}

    def begin_apply(self, article: Article, action: str, page: Page, usage: tuple[int, int], attempts: int) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO wiki_journal (article_id, content_hash, status, action, page_id, attempts,"
                " reasons, payload, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (article.id, article.content_hash, "applying", action, page.id, attempts, "[]",
                 page.model_dump_json(), usage[0], usage[1]),
            )

    def finish(self, article_id: str) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute("UPDATE wiki_journal SET status='done', payload=NULL WHERE article_id=?", (article_id,))

    def fail(self, article: Article, reasons: list[str], usage: tuple[int, int], attempts: int) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO wiki_journal (article_id, content_hash, status, attempts, reasons,"
                " input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?)",
                (article.id, article.content_hash, "failed", attempts, json.dumps(reasons), usage[0], usage[1]),
            )

    def forget(self, article_ids: list[str]) -> None:
        with self.ws.connect() as conn, conn:
            conn.executemany("DELETE FROM wiki_journal WHERE article_id=?", [(i,) for i in article_ids])

    def clear(self) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute("DELETE FROM wiki_journal")


def validate_draft(
    draft: PageDraft,
    *,
    article: Article,
    known_ids: Callable[[list[str]], set[str]],
    candidates: Mapping[str, Page],
    limits: LLMBuildLimits,
    allow_update: bool = True,
    citing: frozenset[str] = frozenset(),
) -> list[str]:
    """Every reason the draft cannot be written (empty list = acceptable).

    ``known_ids(ids)`` returns the subset of ``ids`` that are active articles; ``citing`` the candidate
    pages that already cite the article (a changed article must update one of them, not start a twin).
    """
    reasons: list[str] = []
    if citing and (draft.action != "update" or draft.page_id not in citing):
        reasons.append(f"pages {', '.join(sorted(citing))} already cite {article.id}: update one of them")
    if draft.action == "update":
        if not allow_update and draft.page_id not in citing:
            reasons.append("this build makes one page per article: create one, or update the page citing it")
        elif draft.page_id not in candidates:
            shown = ", ".join(sorted(candidates)) or "none"
            reasons.append(f"page_id {draft.page_id!r} is not one of the candidate pages ({shown})")
    if not draft.title.strip():
        reasons.append("title is empty")
    if not draft.intent.strip():
        reasons.append("intent is empty: say what problem the workflow solves")
    if not draft.steps:
        reasons.append("steps is empty")
    for i, s in enumerate(draft.steps, 1):
        if not s.text.strip():
            reasons.append(f"step {i} has no text")
        if not s.links:
            reasons.append(f"step {i} has no typed link to an article")
    cited = [ln.article_id for s in draft.steps for ln in s.links] + list(draft.sources)
    unknown = sorted(set(cited) - known_ids(sorted(set(cited))))
    for aid in unknown:
        reasons.append(f"unknown article id {aid!r}: cite only ids shown in the prompt")
    linked = {ln.article_id for s in draft.steps for ln in s.links}
    if article.id not in linked:
        reasons.append(f"no step links to the article being processed ({article.id})")
    if draft.action == "update" and draft.page_id in candidates:
        kept = set(draft.sources) | linked
        dropped = [sid for sid in candidates[draft.page_id].source_ids() if sid not in kept]
        if dropped:
            reasons.append(f"the update drops existing sources {', '.join(dropped)}: keep every source")
    n_sources = len(set(draft.sources) | linked)
    if len(draft.steps) > limits.max_steps:
        reasons.append(f"{len(draft.steps)} steps > {limits.max_steps}: condense, or create a new page")
    if n_sources > limits.max_sources:
        reasons.append(f"{n_sources} sources > {limits.max_sources}: create a new page instead")
    return reasons


def _candidate_text(page: Page, max_chars: int) -> str:
    text = render_page(page).split("\n---\n", 1)[-1].strip()
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + "\n… (truncated)"
    return f"<page id={page.id}>\n{text}\n</page>"


class LLMBuilder:
    """Runs the update-or-create loop over a workspace's articles.

    ``model``: a pydantic-ai ``Model`` (or a spec for ``skillrag.models.resolve_model``).
    ``progress(done, total, input_tokens, output_tokens)`` is called after each article.
    """

    def __init__(
        self,
        ws: Workspace,
        model: Any,
        *,
        variant: str = "full",
        limits: LLMBuildLimits | None = None,
        concurrency: int = 1,
        progress: Callable[[int, int, int, int], None] | None = None,
    ) -> None:
        from skillrag.models import model_id, resolve_model

        self.ws = ws
        self.model = resolve_model(model, settings=ws.config.models)
        self.model_name = model_id(model)
        self.variant = variant
        self.limits = limits or LLMBuildLimits()
        self.concurrency = max(1, concurrency)
        self.progress = progress
        self.layer = Layer(ws)
        self.store = ArticleStore(ws)
        self.journal = Journal(ws)
        self._hashes = self.store.hashes()
        self._pages: dict[str, Page] = {p.id: p for p in self.layer.pages()}
        self._search = PageSearch(self._pages.values())
        self._versions: dict[str, int] = {pid: 0 for pid in self._pages}
        self._epoch = 0
        self._changed_at: dict[str, int] = {}
        self._build_prompt = load_prompt("build_page.md")
        self._retry_prompt = load_prompt("retry.md")

    # -- prompt --------------------------------------------------------------------------------

    def candidates_for(self, article: Article) -> list[Page]:
        """Pages already citing the article, then up to two pages sharing its id stem, then BM25
        matches; at most ``candidate_pages``.

        The ``no-merge`` variant shows only the pages citing the article (its own page, if it changed)."""
        citing = self._search.citing(article.id)
        if self.variant == "no-merge":  # only the article's own page (after it changed)
            return [self._pages[pid] for pid in citing]
        k = self.limits.candidate_pages
        query = f"{article.title}\n{article.body[:2000]}"
        # pages citing the article, then at most two pages of its id stem (the same product or topic,
        # smallest first so a full page is not the only choice), then BM25 matches
        sib = sorted((p for p in self._search.siblings(article.id) if p not in citing),
                     key=lambda p: (len(self._pages[p].sources), p))[:2]
        ranked = list(dict.fromkeys([*citing, *sib, *self._search.search(query, k + len(citing) + len(sib))]))
        return [self._pages[pid] for pid in ranked[:k]]

    def prompt_for(self, article: Article, candidates: list[Page]) -> str:
        """The bounded build prompt for ``article`` (at most ``limits.prompt_cap()`` characters)."""
        lim = self.limits
        body = article.body
        if len(body) > lim.max_article_chars:
            body = body[: lim.max_article_chars] + "\n… (truncated)"
        cand = "\n\n".join(_candidate_text(p, lim.max_candidate_chars) for p in candidates) or "(none)"
        merge_rule = (
            "In this build every article gets its own page: CREATE it, or UPDATE the candidate page only if it"
            " already cites this article." if self.variant == "no-merge" else ""
        )
        return self._build_prompt.render(
            merge_rule=merge_rule,
            link_types=", ".join(LINK_TYPES),
            article_id=article.id,
            max_steps=lim.max_steps,
            max_sources=lim.max_sources,
            candidates=cand,
            article_title=article.title[:300],
            article_source=article.source_path[:300],
            article_body=body,
        )

    # -- one article ---------------------------------------------------------------------------

    def _known(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self._hashes}

    def _to_page(self, draft: PageDraft, article: Article, page_id: str) -> Page:
        linked = [ln.article_id for s in draft.steps for ln in s.links]
        ids = list(dict.fromkeys([*draft.sources, *linked]))
        old = self._pages.get(page_id)
        if old is not None:  # keep the old order, append what is new
            ids = list(dict.fromkeys([*old.source_ids(), *ids]))
        arts = self.store.get_many(ids)
        page = Page(
            id=page_id,
            title=draft.title,
            intent=draft.intent,
            solves=tuple(draft.solves),
            does_not_solve=tuple(draft.does_not_solve),
            steps=tuple(
                Step(text=s.text, links=tuple(Link(type=ln.type, article_id=ln.article_id) for ln in s.links))
                for s in draft.steps
            ),
            sources=tuple(SourceRef(id=i, title=arts[i].title if i in arts else "") for i in ids),
            variant=self.variant,
            builder="llm",
            model=self.model_name,
            built_from={i: arts[i].content_hash for i in ids if i in arts},
        )
        return apply_variant(page, self.variant, arts)

    async def _attempt(self, article: Article, candidates: list[Page], usage: list[int]) -> tuple[PageDraft | None, list[str], int]:
        from pydantic_ai import Agent

        from skillrag.models import model_errors

        agent = Agent(self.model, output_type=PageDraft)
        prompt = self.prompt_for(article, candidates)
        usage[2] = max(usage[2], len(prompt))
        cmap = {p.id: p for p in candidates}
        reasons: list[str] = []
        attempts = 0
        for _ in range(self.limits.max_retries + 1):
            attempts += 1
            text = prompt if not reasons else prompt + "\n\n" + self._retry_prompt.render(
                reasons="\n".join(f"- {r}" for r in reasons), article_id=article.id
            )
            try:
                with model_errors(self.model_name):
                    result = await agent.run(text)
            except ValidationError as exc:  # pragma: no cover - pydantic-ai normally retries these itself
                reasons = [f"output does not match the page schema: {exc.errors()[0]['msg']}"]
                continue
            except Exception as exc:
                from pydantic_ai.exceptions import UnexpectedModelBehavior

                if isinstance(exc, UnexpectedModelBehavior):
                    reasons = [f"output does not match the page schema ({str(exc).splitlines()[0]})"]
                    continue
                raise
            u = result.usage
            usage[0] += u.input_tokens or 0
            usage[1] += u.output_tokens or 0
            usage[3] += u.requests or 1
            draft = result.output
            reasons = validate_draft(
                draft, article=article, known_ids=self._known, candidates=cmap, limits=self.limits,
                allow_update=self.variant != "no-merge",
                citing=frozenset(p.id for p in candidates if article.id in p.article_ids()),
            )
            if not reasons:
                pid = draft.page_id if draft.action == "update" and draft.page_id else self._new_id(draft.title)
                page = self._to_page(draft, article, pid)
                if len(render_page(page)) > self.limits.max_page_chars:
                    reasons = [f"page longer than {self.limits.max_page_chars} characters: condense it"]
                    continue
                return draft, [], attempts
        return None, reasons, attempts

    def _new_id(self, title: str) -> str:
        base = slugify(title)
        pid, n = base, 2
        while pid in self._pages:
            pid, n = f"{base}-{n}", n + 1
        return pid

    def _apply(self, article: Article, page: Page, action: str) -> None:
        """Write one accepted page (journal first, then the file, index line and log line)."""
        self.layer.write(page)
        self._pages[page.id] = page
        self._versions[page.id] = self._versions.get(page.id, 0) + 1
        self._epoch += 1
        self._changed_at[page.id] = self._epoch
        self._search.set(page)
        self.layer.log([
            f"{article.id} {action}d page {page.id} (builder llm, model {self.model_name}, variant {self.variant})"
        ])
        self.journal.finish(article.id)

    def replay(self) -> list[str]:
        """Re-apply pages journalled but maybe not written before an interruption; returns their ids."""
        done = []
        for aid, row in self.journal.rows().items():
            if row["status"] == "applying" and row["payload"]:
                page = Page.model_validate_json(row["payload"])
                self.layer.write(page)
                self._pages[page.id] = page
                self._search.set(page)
                self.journal.finish(aid)
                done.append(page.id)
        return done

    async def _process(self, article: Article, sem: asyncio.Semaphore, lock: asyncio.Lock,
                       result: LLMBuildResult) -> None:
        for _ in range(5):  # recompute when a concurrent write changed the target page
            usage = [0, 0, 0, 0]
            async with sem:
                cands = self.candidates_for(article)
                seen = {p.id: self._versions.get(p.id, 0) for p in cands}
                epoch = self._epoch
                draft, reasons, attempts = await self._attempt(article, cands, usage)
            async with lock:
                result.input_tokens += usage[0]
                result.output_tokens += usage[1]
                result.max_prompt_chars = max(result.max_prompt_chars, usage[2])
                result.requests += usage[3]
                if draft is None:
                    self.journal.fail(article, reasons, (usage[0], usage[1]), attempts)
                    result.failed[article.id] = reasons
                    return
                stale = any(self._versions.get(pid, 0) != v for pid, v in seen.items())
                if draft.action == "create":
                    pid = self._new_id(draft.title)
                    twin = slugify(draft.title)  # a same-named page written while this call ran
                    stale = stale or (twin not in seen and self._changed_at.get(twin, 0) > epoch)
                else:
                    pid = draft.page_id or ""
                if stale:
                    result.conflicts += 1
                    continue
                page = self._to_page(draft, article, pid)
                self.journal.begin_apply(article, draft.action, page, (usage[0], usage[1]), attempts)
                self._apply(article, page, draft.action)
                result.failed.pop(article.id, None)
                (result.created if draft.action == "create" else result.updated).append(pid)
                return
        result.failed[article.id] = ["gave up after repeated concurrent conflicts"]

    async def run_async(self, articles: list[Article]) -> LLMBuildResult:
        """Process ``articles`` (those already done with the same hash are skipped)."""
        result = LLMBuildResult()
        self.replay()
        rows = self.journal.rows()
        todo = [a for a in articles
                if not (a.id in rows and rows[a.id]["status"] == "done" and rows[a.id]["content_hash"] == a.content_hash)]
        result.skipped = len(articles) - len(todo)
        total, done = len(todo), 0
        sem, lock = asyncio.Semaphore(self.concurrency), asyncio.Lock()
        for _pass in range(max(1, self.limits.passes)):
            batch = todo if _pass == 0 else [a for a in todo if a.id in result.failed]
            if not batch:
                break

            async def one(a: Article, first_pass: bool) -> None:
                nonlocal done
                await self._process(a, sem, lock, result)
                if first_pass:
                    done += 1
                    if self.progress:
                        self.progress(done, total, result.input_tokens, result.output_tokens)

            if self.concurrency == 1:
                for a in batch:
                    await one(a, _pass == 0)
            else:
                await asyncio.gather(*(one(a, _pass == 0) for a in batch))
        return result

    def run(self, articles: list[Article]) -> LLMBuildResult:
        return asyncio.run(self.run_async(articles))

    def estimate(self, articles: list[Article]) -> dict[str, int]:
        """Token estimate before a build (``CHARS_PER_TOKEN`` characters per token).

        Input: the real prompt against the current layer, with the candidate slots not yet filled
        counted at ``max_candidate_chars`` each. Output: one page of ``max_page_chars / 3`` per article.
        """
        rows = self.journal.rows()
        todo = [a for a in articles
                if not (a.id in rows and rows[a.id]["status"] == "done" and rows[a.id]["content_hash"] == a.content_hash)]
        chars_in = 0
        slots = 0 if self.variant == "no-merge" else self.limits.candidate_pages
        for a in todo:
            cands = self.candidates_for(a)
            chars_in += len(self.prompt_for(a, cands)) + (slots - len(cands)) * self.limits.max_candidate_chars
        chars_out = len(todo) * (self.limits.max_page_chars // 3)
        return {
            "articles": len(todo),
            "skipped": len(articles) - len(todo),
            "input_tokens": chars_in // CHARS_PER_TOKEN,
            "output_tokens": chars_out // CHARS_PER_TOKEN,
            "requests": len(todo),
        }
