"""The page builder of the update-or-create loop (paper appendix D) and its model driver.

One pass per article, then one page per aspect. For each article code selects a few candidate
pages (the entity page of the article's family, every page that already cites the article, then
BM25 over the pages) and the ``index.md`` lines of the next closest pages, renders one bounded
prompt (schema + family + candidates + index lines + article), and takes back a structured
:class:`PageDraft`. Code validates the draft (schema, every cited id exists, the article is cited,
an update keeps the page's sources, an article of a product family goes on that family's one entity
page, size caps) and sends the reasons back for a retry; an article that still fails is recorded
and retried in a later pass, then reported. Families and aspects are found by code
(``skillrag.wiki.families`` / ``aspects``), exactly as for the extractive builder, so both builders
write the same page kinds: after the article pass, each aspect shared by sibling entities gets one
``aspect`` page written from its member articles (code checks that every member is cited).

One builder, two drivers. :class:`PageBuilder` holds everything above (state, prompts, validation,
the journalled write); :class:`LLMBuilder` drives it with a model, and ``skillrag.wiki.agent`` drives
it with coding agents working through an exported skill's scripts. Neither has pages, validation or
a journal of its own.

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

from skillrag.corpus import Article, ArticleStore, content_hash
from skillrag.text import BM25
from skillrag.tracing import traced
from skillrag.wiki import _spans
from skillrag.wiki._prompts import load_prompt
from skillrag.wiki._statements import summary_line
from skillrag.wiki.aspects import Aspect, find_aspects
from skillrag.wiki.candidates import PageSearch
from skillrag.wiki.extractive import aspect_page_id, aspect_title
from skillrag.wiki.families import Family, find_families
from skillrag.wiki.layer import Layer, index_line
from skillrag.wiki.page import (
    LINK_TYPES,
    Link,
    LinkType,
    Page,
    PageKind,
    SourceRef,
    Step,
    render_page,
    slugify,
)
from skillrag.wiki.variants import apply_variant
from skillrag.workspace import Schema, Workspace

__all__ = [
    "AGENT_INDEX_RULE",
    "CHARS_PER_TOKEN",
    "DraftLink",
    "DraftSource",
    "DraftStep",
    "Journal",
    "LLMBuildLimits",
    "LLMBuildResult",
    "LLMBuilder",
    "PageBuilder",
    "PageDraft",
    "candidate_text",
    "parse_draft",
    "validate_aspect_draft",
    "validate_draft",
]

#: Token estimates use this many characters per token (a common rule of thumb for English text).
CHARS_PER_TOKEN = 4
#: A list of article ids in a prompt (a page's sources, a family) is cut to this many characters.
ID_LIST_CHARS = 2500
#: One ``index.md`` line shown in a prompt is cut to this many characters.
INDEX_LINE_CHARS = 300
#: What the prompt says of the pages shown by their index line only, for a model (which sees only the
#: prompt) and for an agent (which can read a page with the maintainer skill's ``read_page.py``).
LLM_INDEX_RULE = "only the candidate pages above can be updated here"
AGENT_INDEX_RULE = ("to update one of them, read it first with read_page.py PAGE_ID --claim CLAIM: "
                    "a page you read counts as a candidate")


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 2].rstrip() + " …"


def _id_list(ids: list[str] | tuple[str, ...]) -> str:
    """``ids`` comma-separated, cut to ``ID_LIST_CHARS`` characters with the number left out."""
    out: list[str] = []
    used = 0
    for i in ids:
        if used + len(i) + 2 > ID_LIST_CHARS:
            return ", ".join(out) + f", … ({len(ids) - len(out)} more)"
        out.append(i)
        used += len(i) + 2
    return ", ".join(out)


class DraftLink(BaseModel):
    type: LinkType = Field(description="What the article contributes: " + ", ".join(LINK_TYPES) + ".")
    article_id: str


class DraftStep(BaseModel):
    text: str = Field(description="One claim or step, in your own words.")
    links: list[DraftLink] = Field(default_factory=list)


class DraftSource(BaseModel):
    id: str
    summary: str = Field("", description="One line on what the article covers (aspect pages: its key line).")


class PageDraft(BaseModel):
    """What the model returns for one article or aspect (the page schema shown in the prompt)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "update"]
    page_id: str | None = Field(None, description="Candidate page id to update; null to create.")
    kind: PageKind = Field("topic", description="entity, aspect or topic.")
    title: str
    intent: str
    solves: list[str] = Field(default_factory=list)
    does_not_solve: list[str] = Field(default_factory=list)
    steps: list[DraftStep] = Field(default_factory=list)
    sources: list[DraftSource] = Field(default_factory=list)

    def source_ids(self) -> list[str]:
        return [s.id for s in self.sources]


def parse_draft(text: str) -> tuple[PageDraft | None, list[str]]:
    """A draft from its JSON text, or ``(None, reasons)``: one reason per schema error, naming the
    field (``steps.0.links.0.type: Input should be 'procedure', ...``). The model driver gets the same
    check from its structured output."""
    import json as _json

    try:
        data = _json.loads(text)
    except ValueError as exc:
        return None, [f"not JSON ({exc})"]
    if not isinstance(data, dict):
        return None, [f"the page draft must be a JSON object, not {type(data).__name__}"]
    try:
        return PageDraft.model_validate(data), []
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "(draft)"
            out.append(f"{loc}: {err['msg']}")
        return None, out


@dataclass(frozen=True)
class LLMBuildLimits:
    """Bounds that keep every prompt and page a fixed size, whatever the corpus size."""

    candidate_pages: int = 5
    max_candidate_chars: int = 3000  # per candidate page shown, in characters
    max_article_chars: int = 12000  # of the article body shown, in characters
    max_steps: int = 30
    max_sources: int = 25
    max_page_chars: int = 12000  # rendered page without its source list and their hashes, in characters
    per_source_chars: int = 500  # entity pages: room per article of the family, when that is more than max_page_chars
    max_retries: int = 2  # model retries per attempt after an invalid page
    passes: int = 2  # passes over failed articles before reporting them
    index_lines: int = 15  # index.md lines of the next closest pages shown after the candidates

    def page_room(self, n_sources: int) -> int:
        """Characters a page for ``n_sources`` articles may hold without its source list: ``max_page_chars``,
        or ``per_source_chars`` per article when that is more (an entity page lists every article of its
        family, so a 47-article family's page needs room a 10-article page does not; counted from the
        family's size, so the room is there from the family's first article on)."""
        return max(self.max_page_chars, self.per_source_chars * n_sources)

    def step_room(self, n_sources: int) -> int:
        """Steps a page citing ``n_sources`` articles may hold: ``max_steps``, plus one per two sources past
        ``max_sources``."""
        return self.max_steps + max(0, n_sources - self.max_sources) // 2

    @classmethod
    def from_settings(cls, wiki: Any) -> LLMBuildLimits:
        """The limits a build uses with the workspace's ``wiki:`` settings (``WikiSettings``)."""
        return cls(candidate_pages=wiki.candidate_pages, max_retries=wiki.max_retries)

    def params(self) -> dict[str, int]:
        """The limits recorded in the layer's manifest."""
        return {"candidate_pages": self.candidate_pages, "max_retries": self.max_retries, "passes": self.passes,
                "max_page_chars": self.max_page_chars, "per_source_chars": self.per_source_chars,
                "max_candidate_chars": self.max_candidate_chars, "max_article_chars": self.max_article_chars}

    def prompt_cap(self) -> int:
        """An upper bound on one build prompt, in characters (retry text excluded): the fixed text,
        the candidate pages each with its id list, the index lines, the family block and the article."""
        per_page = self.max_candidate_chars + 80 + ID_LIST_CHARS
        index = self.index_lines * (INDEX_LINE_CHARS + 1) + 300
        return 4000 + self.candidate_pages * per_page + index + (600 + ID_LIST_CHARS) + self.max_article_chars + 600


@dataclass
class LLMBuildResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)  # article id -> last reasons
    skipped: int = 0  # already done with the same content hash
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    conflicts: int = 0
    max_prompt_chars: int = 0


JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
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


JOURNAL_TABLES = ("wiki_journal", "wiki_journal_rebuild")
#: The journal tables (one per entry of ``JOURNAL_TABLES``) in the workspace store, by version
#: (``skillrag.workspace.schema``: append only).
JOURNAL = Schema("wiki.journal", ("".join(JOURNAL_SCHEMA.format(table=t) for t in JOURNAL_TABLES),))


class Journal:
    """The LLM build's per-article journal in the workspace store (``table``: ``wiki_journal`` for
    the live layer, ``wiki_journal_rebuild`` for a rebuild's staging layer). Aspect pages are
    journalled under the key ``aspect:<page id>``."""

    def __init__(self, ws: Workspace, table: str = "wiki_journal") -> None:
        if table not in JOURNAL_TABLES:
            raise ValueError(f"unknown journal table {table!r}")
        self.ws = ws
        self.table = table
        with ws.connect(JOURNAL):
            pass

    def rows(self) -> dict[str, sqlite3.Row]:
        with self.ws.connect() as conn:
            return {r["article_id"]: r for r in conn.execute(f"SELECT * FROM {self.table}")}

    def move_to(self, other: Journal) -> None:
        """Replace ``other``'s rows with this journal's, and empty this one (one transaction)."""
        with self.ws.connect() as conn, conn:
            conn.execute(f"DELETE FROM {other.table}")
            conn.execute(f"INSERT INTO {other.table} SELECT * FROM {self.table}")
            conn.execute(f"DELETE FROM {self.table}")

    def copy_to(self, other: Journal) -> None:
        """Replace ``other``'s rows with a copy of this journal's (one transaction)."""
        with self.ws.connect() as conn, conn:
            conn.execute(f"DELETE FROM {other.table}")
            conn.execute(f"INSERT INTO {other.table} SELECT * FROM {self.table}")

    def begin_apply(self, key: str, chash: str, action: str, page: Page, usage: tuple[int, int],
                    attempts: int) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(
                f"INSERT OR REPLACE INTO {self.table} (article_id, content_hash, status, action, page_id, attempts,"
                " reasons, payload, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (key, chash, "applying", action, page.id, attempts, "[]", page.model_dump_json(), usage[0], usage[1]),
            )

    def finish(self, key: str) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(f"UPDATE {self.table} SET status='done', payload=NULL WHERE article_id=?", (key,))

    def fail(self, key: str, chash: str, reasons: list[str], usage: tuple[int, int], attempts: int) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(
                f"INSERT OR REPLACE INTO {self.table} (article_id, content_hash, status, attempts, reasons,"
                " input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?)",
                (key, chash, "failed", attempts, json.dumps(reasons), usage[0], usage[1]),
            )

    def forget(self, keys: list[str]) -> None:
        with self.ws.connect() as conn, conn:
            conn.executemany(f"DELETE FROM {self.table} WHERE article_id=?", [(i,) for i in keys])

    def clear(self) -> None:
        with self.ws.connect() as conn, conn:
            conn.execute(f"DELETE FROM {self.table}")


@dataclass(frozen=True)
class FamilyContext:
    """What code knows about the family of the article being placed (``skillrag.wiki.families``)."""

    key: str
    title: str
    ids: tuple[str, ...]
    entity: bool  # a product/topic family (its articles go on one entity page), not a cluster or a loner
    entity_page: str | None = None  # the family's entity page, once one exists

    def render(self) -> str:
        if not self.entity:
            return "This article belongs to no product family: place it on a topic page (kind \"topic\")."
        ids = _id_list(self.ids)
        head = f"This article belongs to the family \"{self.title}\" ({len(self.ids)} articles: {ids})."
        if self.entity_page:
            return (f"{head} Its entity page is {self.entity_page}: UPDATE it (action \"update\", page_id "
                    f"{self.entity_page}) so that it lists this article too.")
        return (f"{head} It has no entity page yet: CREATE it (action \"create\", kind \"entity\", title "
                f"\"{self.title}\"); the family's other articles will be added to it.")


def validate_draft(
    draft: PageDraft,
    *,
    article: Article,
    known_ids: Callable[[list[str]], set[str]],
    candidates: Mapping[str, Page],
    limits: LLMBuildLimits,
    allow_update: bool = True,
    citing: frozenset[str] = frozenset(),
    family: FamilyContext | None = None,
) -> list[str]:
    """Every reason the draft cannot be written (empty list = acceptable).

    ``known_ids(ids)`` returns the subset of ``ids`` that are active articles; ``citing`` the candidate
    pages that already cite the article (a changed article must update one of them, not start a twin);
    ``family`` the article's family: an article of a product family goes on the family's one entity
    page (created with kind ``entity`` by its first article). Sources an update does not repeat are
    kept by code, so an update never loses one.
    """
    reasons: list[str] = []
    on_entity = family is not None and family.entity and allow_update
    if on_entity and family.entity_page:
        if draft.action != "update" or draft.page_id != family.entity_page:
            reasons.append(f"{article.id} belongs to {family.title!r}: update its entity page {family.entity_page} "
                           "(one page lists every article of the family)")
    elif on_entity and (draft.action != "create" or draft.kind != "entity"):
        reasons.append(f"{family.title!r} has no entity page yet: create it with kind \"entity\"")
    elif citing and (draft.action != "update" or draft.page_id not in citing):
        reasons.append(f"pages {', '.join(sorted(citing))} already cite {article.id}: update one of them")
    if draft.kind == "aspect":
        reasons.append("aspect pages are written from their member articles after this pass: use kind "
                       "\"entity\" or \"topic\"")
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
    reasons += _step_reasons(draft, known_ids)
    linked = {ln.article_id for s in draft.steps for ln in s.links}
    if article.id not in linked:
        reasons.append(f"no step links to the article being processed ({article.id})")
    old = candidates.get(draft.page_id or "") if draft.action == "update" else None
    kind = old.kind if old is not None else draft.kind
    n_sources = len(set(draft.source_ids()) | linked | set(old.source_ids() if old is not None else ()))
    family_n = len(family.ids) if family is not None and family.entity else 0
    max_steps = limits.step_room(max(n_sources, family_n)) if kind == "entity" else limits.max_steps
    if len(draft.steps) > max_steps:
        how = ("merge steps (an entity page lists every article of its family: a step may link several)"
               if kind == "entity" else "condense, or create a new page")
        reasons.append(f"{len(draft.steps)} steps > {max_steps}: {how}")
    if kind != "entity" and n_sources > limits.max_sources:
        reasons.append(f"{n_sources} sources > {limits.max_sources}: create a new page instead")
    return reasons


def _step_reasons(draft: PageDraft, known_ids: Callable[[list[str]], set[str]]) -> list[str]:
    reasons = []
    if not draft.steps:
        reasons.append("steps is empty")
    for i, s in enumerate(draft.steps, 1):
        if not s.text.strip():
            reasons.append(f"step {i} has no text")
        if not s.links:
            reasons.append(f"step {i} has no typed link to an article")
    cited = [ln.article_id for s in draft.steps for ln in s.links] + draft.source_ids()
    for aid in sorted(set(cited) - known_ids(sorted(set(cited)))):
        reasons.append(f"unknown article id {aid!r}: cite only ids shown in the prompt")
    return reasons


def validate_aspect_draft(draft: PageDraft, *, members: list[str], known_ids: Callable[[list[str]], set[str]],
                          limits: LLMBuildLimits) -> list[str]:
    """Every reason an aspect page draft cannot be written: it must cite every member article (in its
    sources or links) and nothing outside them."""
    reasons = _step_reasons(draft, known_ids)
    if not draft.title.strip():
        reasons.append("title is empty")
    if not draft.intent.strip():
        reasons.append("intent is empty: say what comparing this aspect answers")
    cited = {ln.article_id for s in draft.steps for ln in s.links} | set(draft.source_ids())
    missing = [m for m in members if m not in cited]
    if missing:
        reasons.append(f"the page must list every article of the aspect; missing {', '.join(missing)}")
    extra = sorted(cited - set(members))
    if extra:
        reasons.append(f"cite only the articles listed for this aspect, not {', '.join(extra)}")
    if len(draft.steps) > max(limits.max_steps, len(members)):
        reasons.append(f"{len(draft.steps)} steps > {max(limits.max_steps, len(members))}: one step per product")
    return reasons


def candidate_text(page: Page, max_chars: int) -> str:
    """A candidate page as the model sees it: the page cut to ``max_chars`` characters, then its
    source ids (up to ``ID_LIST_CHARS`` characters of them), so a long entity page's list is shown."""
    body = render_page(page.model_copy(update={"sources": ()})).split("\n---\n", 1)[-1]
    body = body.rsplit("## Sources", 1)[0].strip()
    if len(body) > max_chars:
        body = body[:max_chars].rsplit("\n", 1)[0] + "\n… (truncated)"
    ids = page.source_ids()
    return f"<page id={page.id} kind={page.kind}>\n{body}\n\nSources ({len(ids)}): {_id_list(ids)}\n</page>"


class PageBuilder:
    """The one builder behind both drivers: its state (the layer's pages, the corpus's families, the
    page search), the bounded prompts, the validation of a draft and the journalled write of a page.

    The model driver (:class:`LLMBuilder`) asks a model for each draft; the agent driver
    (``skillrag.wiki.agent``) hands the same prompts to coding agents through a skill's scripts and
    takes their drafts back. Both validate with :meth:`check_draft` / :meth:`check_aspect_draft`,
    turn a valid draft into a page with :meth:`page_for` and write it with :meth:`apply`.

    ``articles``: the articles the build covers (default: every article of the store, a split document
    by its sections); families, aspects and the ids a page may cite come from them alone, so a build
    over a subset is the build of a corpus holding only that subset. ``builder`` / ``model_name`` are
    recorded on every page (``builder: llm``, ``model: openai:gpt-4.1``; ``builder: agent``,
    ``model``: the agent's name). ``structure``: the families and aspects, when the caller has them
    (the agent driver keeps them per build, so each script call need not find them again).
    """

    def __init__(
        self,
        ws: Workspace,
        *,
        variant: str = "full",
        limits: LLMBuildLimits | None = None,
        layer: Layer | None = None,
        journal: Journal | None = None,
        builder: str = "llm",
        model_name: str | None = None,
        articles: list[Article] | None = None,
        structure: tuple[list[Family], list[Aspect]] | None = None,
    ) -> None:
        self.ws = ws
        self.builder = builder
        self.model_name = model_name
        self.variant = variant
        self.limits = limits or LLMBuildLimits()
        self.layer = layer or Layer(ws)
        self.store = ArticleStore(ws)
        self.journal = journal or Journal(ws)
        self.articles = articles if articles is not None else self.store.list(split_documents=False)
        self._hashes = {a.id: a.content_hash for a in self.articles}
        self._families: list[Family] = []
        self._aspects: list[Aspect] | None = None
        self._reserved: frozenset[str] | None = None
        self._family_of: dict[str, Family] = {}
        if variant != "no-merge":
            if structure is not None:
                self._families, self._aspects = list(structure[0]), list(structure[1])
            else:
                self._families = find_families(self.articles, max_group=ws.config.wiki.max_group)
            self._family_of = {a.id: f for f in self._families for a in f.articles}
        self._build_prompt = load_prompt("build_page.md")
        self._retry_prompt = load_prompt("retry.md")
        self._aspect_prompt = load_prompt("build_aspect.md")
        self.reload()

    def reload(self) -> None:
        """Read the layer's pages again (another process may have written some)."""
        self._pages: dict[str, Page] = {p.id: p for p in self.layer.pages()}
        self._entity_page: dict[str, str] = {}
        for p in sorted(self._pages.values(), key=lambda p: p.id):
            self._note_entity(p)
        self._search = PageSearch(self._pages.values(), bm25=BM25.of(self.ws.config.search))
        self._versions: dict[str, int] = {pid: 0 for pid in self._pages}
        self._epoch = 0
        self._changed_at: dict[str, int] = {}

    @property
    def pages(self) -> Mapping[str, Page]:
        """The layer's pages as this builder knows them, by id."""
        return self._pages

    # -- families ------------------------------------------------------------------------------

    def _note_entity(self, page: Page) -> None:
        """Record ``page`` as the entity page of its family (the first one seen per family)."""
        if page.kind != "entity":
            return
        for aid in page.source_ids():
            fam = self._family_of.get(aid)
            if fam is not None:
                self._entity_page.setdefault(fam.key, page.id)
                return

    def family_of(self, article: Article) -> FamilyContext | None:
        """The article's family as the prompt and the validator see it (None for ``no-merge``)."""
        fam = self._family_of.get(article.id)
        if fam is None:
            return None
        entity = fam.found_by not in ("cluster", "single")
        return FamilyContext(key=fam.key, title=fam.title, ids=tuple(fam.ids()), entity=entity,
                             entity_page=self._entity_page.get(fam.key) if entity else None)

    # -- what is left to do --------------------------------------------------------------------

    def todo(self, articles: list[Article]) -> list[Article]:
        """``articles`` not yet done with their current content hash (the journal says)."""
        rows = self.journal.rows()
        return [a for a in articles
                if not (a.id in rows and rows[a.id]["status"] == "done" and rows[a.id]["content_hash"] == a.content_hash)]

    def aspect_todo(self, targets: Mapping[str, Aspect] | None = None) -> list[tuple[str, Aspect]]:
        """``(page id, aspect)`` of the aspect pages that are new or whose members changed."""
        targets = self.aspect_targets() if targets is None else targets
        rows = self.journal.rows()
        return [(pid, asp) for pid, asp in sorted(targets.items())
                if not (rows.get(f"aspect:{pid}") is not None and rows[f"aspect:{pid}"]["status"] == "done"
                        and rows[f"aspect:{pid}"]["content_hash"] == self._aspect_hash(asp) and pid in self._pages)]

    # -- prompt --------------------------------------------------------------------------------

    def candidates_for(self, article: Article) -> list[Page]:
        """The entity page of the article's family, then pages already citing the article, then up to
        two pages sharing its id stem, then BM25 matches; at most ``candidate_pages``.

        The ``no-merge`` variant shows only the pages citing the article (its own page, if it changed)."""
        citing = self._search.citing(article.id)
        if self.variant == "no-merge":  # only the article's own page (after it changed)
            return [self._pages[pid] for pid in citing]
        k = self.limits.candidate_pages
        fam = self.family_of(article)
        own = [fam.entity_page] if fam is not None and fam.entity_page in self._pages else []
        query = f"{article.title}\n{article.body[:2000]}"
        # pages citing the article, then at most two pages of its id stem (the same product or topic,
        # smallest first so a full page is not the only choice), then BM25 matches
        sib = sorted((p for p in self._search.siblings(article.id) if p not in citing and p not in own),
                     key=lambda p: (len(self._pages[p].sources), p))[:2]
        found = self._search.search(query, k + len(citing) + len(sib) + 1)
        ranked = list(dict.fromkeys([*own, *citing, *sib, *found]))
        return [self._pages[pid] for pid in ranked[:k]]

    def index_lines_for(self, article: Article, candidates: list[Page]) -> list[str]:
        """The ``index.md`` lines of the next closest pages after ``candidates`` (BM25 over the pages),
        at most ``limits.index_lines``, each cut to ``INDEX_LINE_CHARS`` characters (none for ``no-merge``)."""
        n = self.limits.index_lines
        if self.variant == "no-merge" or n <= 0:
            return []
        shown = {p.id for p in candidates}
        query = f"{article.title}\n{article.body[:2000]}"
        found = [pid for pid in self._search.search(query, n + len(shown)) if pid not in shown][:n]
        return [_cut(index_line(self._pages[pid]), INDEX_LINE_CHARS) for pid in found]

    def prompt_for(self, article: Article, candidates: list[Page], *, index_rule: str = LLM_INDEX_RULE) -> str:
        """The bounded build prompt for ``article`` (at most ``limits.prompt_cap()`` characters).

        ``index_rule`` says what the reader may do with the pages listed by index line only (the model
        may update only the candidates; an agent may read one first)."""
        lim = self.limits
        body = article.body
        if len(body) > lim.max_article_chars:
            body = body[: lim.max_article_chars] + "\n… (truncated)"
        cand = "\n\n".join(candidate_text(p, lim.max_candidate_chars) for p in candidates) or "(none)"
        merge_rule = (
            "In this build every article gets its own page: CREATE it, or UPDATE the candidate page only if it"
            " already cites this article." if self.variant == "no-merge" else ""
        )
        fam = self.family_of(article)
        return self._build_prompt.render(
            merge_rule=merge_rule,
            family=fam.render() if fam is not None else "Every article gets a page of kind \"topic\".",
            link_types=", ".join(LINK_TYPES),
            article_id=article.id,
            max_steps=lim.max_steps,
            max_sources=lim.max_sources,
            candidates=cand,
            index="\n".join(self.index_lines_for(article, candidates)) or "(none)",
            index_rule=index_rule,
            article_title=article.title[:300],
            article_source=article.source_path[:300],
            article_body=body,
        )

    def retry_text(self, reasons: list[str], article_id: str) -> str:
        """The text sent back after a rejected draft: every reason, one per line."""
        return self._retry_prompt.render(reasons="\n".join(f"- {r}" for r in reasons), article_id=article_id)

    # -- validation and writing ----------------------------------------------------------------

    def _known(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self._hashes}

    def check_draft(self, draft: PageDraft, article: Article, candidates: Mapping[str, Page]) -> list[str]:
        """Every reason ``draft`` cannot be written for ``article`` (empty = acceptable): the rules of
        :func:`validate_draft` against the pages ``candidates`` the writer was shown, then the size
        of the page it makes."""
        reasons = validate_draft(
            draft, article=article, known_ids=self._known, candidates=candidates, limits=self.limits,
            allow_update=self.variant != "no-merge",
            citing=frozenset(pid for pid, p in candidates.items() if article.id in p.article_ids()),
            family=self.family_of(article),
        )
        if reasons:
            return reasons
        size, room = self.page_size(self.page_for(draft))
        if size > room:
            return [(f"page longer than {room} characters without its source list ({size}): "
                     "condense its steps, intent and solves lines")]
        return []

    def page_size(self, page: Page) -> tuple[int, int]:
        """``(size, room)`` of ``page`` in characters: the rendered page without its source list (and the hash
        of each source), which is code's to keep, against :meth:`LLMBuildLimits.page_room` for its sources."""
        size = len(render_page(page.model_copy(update={"sources": (), "built_from": {}})))
        if page.kind != "entity":
            return size, self.limits.max_page_chars
        fams = {self._family_of[i].key: len(self._family_of[i].ids()) for i in page.source_ids() if i in self._family_of}
        return size, self.limits.page_room(max([len(page.sources), *fams.values()]))

    def check_aspect_draft(self, draft: PageDraft, asp: Aspect) -> list[str]:
        """Every reason an aspect page draft cannot be written (:func:`validate_aspect_draft`)."""
        return validate_aspect_draft(draft, members=asp.ids(), known_ids=self._known, limits=self.limits)

    def new_id(self, title: str) -> str:
        """A page id for a new page titled ``title``, unused in the layer and not one the build's aspect
        pages take (so an aspect page can be written before or after the article pages)."""
        base = slugify(title)
        pid, n = base, 2
        reserved = self._aspect_ids()
        while pid in self._pages or pid in reserved:
            pid, n = f"{base}-{n}", n + 1
        return pid

    def _aspect_ids(self) -> frozenset[str]:
        if self._reserved is None:
            out: set[str] = set()
            for asp in self.structure()[1]:
                base = aspect_page_id(asp)
                pid, n = base, 2
                while pid in out:
                    pid, n = f"{base}-{n}", n + 1
                out.add(pid)
            self._reserved = frozenset(out)
        return self._reserved

    def page_for(self, draft: PageDraft, page_id: str | None = None, *, author: str | None = None) -> Page:
        """The page a valid article draft makes: the page it updates, or a new id from its title."""
        pid = page_id or (draft.page_id if draft.action == "update" and draft.page_id else self.new_id(draft.title))
        return self._to_page(draft, pid, author=author)

    def aspect_page_for(self, draft: PageDraft, pid: str, asp: Aspect, *, author: str | None = None) -> Page:
        """The aspect page a valid aspect draft makes: title and kind set by code, sources the draft's."""
        draft = draft.model_copy(update={"title": aspect_title(asp), "kind": "aspect",
                                         "action": "update" if pid in self._pages else "create"})
        return self._to_page(draft, pid, kind="aspect", keep_old=False, author=author)

    def _to_page(self, draft: PageDraft, page_id: str, *, kind: str | None = None, keep_old: bool = True,
                 author: str | None = None) -> Page:
        """The page a valid draft makes: an update keeps every old source (in the old order, new ones
        appended) and the page's kind; a source without a summary keeps its old one, else gets the
        article's own one-line summary. ``keep_old=False`` (aspect pages, whose members code sets)
        takes the draft's sources only. ``author`` (default ``model_name``) is recorded as the page's model."""
        linked = [ln.article_id for s in draft.steps for ln in s.links]
        ids = list(dict.fromkeys([*draft.source_ids(), *linked]))
        old = self._pages.get(page_id) if keep_old else None
        summaries = {s.id: s.summary.strip() for s in draft.sources if s.summary.strip()}
        if old is not None:  # keep the old order, append what is new
            ids = list(dict.fromkeys([*old.source_ids(), *ids]))
            for s in old.sources:
                if s.summary:
                    summaries.setdefault(s.id, s.summary)
        arts = self.store.get_many(ids)
        page = Page(
            id=page_id,
            title=draft.title,
            kind=kind or (old.kind if old is not None else draft.kind),
            intent=draft.intent,
            solves=tuple(draft.solves),
            does_not_solve=tuple(draft.does_not_solve),
            steps=tuple(
                Step(text=s.text, links=tuple(Link(type=ln.type, article_id=ln.article_id) for ln in s.links))
                for s in draft.steps
            ),
            sources=tuple(SourceRef(id=i, title=arts[i].title if i in arts else "",
                                    summary=summaries.get(i) or (summary_line(arts[i]) if i in arts else ""))
                          for i in ids),
            variant=self.variant,
            builder=self.builder,
            model=author or self.model_name,
            built_from={i: arts[i].content_hash for i in ids if i in arts},
        )
        return apply_variant(page, self.variant, arts)

    def apply(self, key: str, chash: str, action: str, page: Page, *, usage: tuple[int, int] = (0, 0),
              attempts: int = 1, by: str | None = None) -> None:
        """Write one accepted page: the journal first (the page stored in it), then the file, its index
        line and a log line, then the journal marks it done. ``by`` names the writer in the log
        (default ``model <model_name>``)."""
        self.journal.begin_apply(key, chash, action, page, usage, attempts)
        self.layer.write(page)
        self._pages[page.id] = page
        self._note_entity(page)
        self._versions[page.id] = self._versions.get(page.id, 0) + 1
        self._epoch += 1
        self._changed_at[page.id] = self._epoch
        self._search.set(page)
        who = by or f"model {self.model_name}"
        line = f"{key} {action}d {page.kind} page {page.id} (builder {self.builder}, {who}, variant {self.variant})"
        self.layer.log([line])
        self.journal.finish(key)

    def replay(self) -> list[str]:
        """Re-apply pages journalled but maybe not written before an interruption; returns their ids."""
        done = []
        for aid, row in self.journal.rows().items():
            if row["status"] == "applying" and row["payload"]:
                page = Page.model_validate_json(row["payload"])
                self.layer.write(page)
                self._pages[page.id] = page
                self._note_entity(page)
                self._search.set(page)
                self.journal.finish(aid)
                done.append(page.id)
        return done

    # -- aspect pages --------------------------------------------------------------------------

    def aspect_targets(self) -> dict[str, Aspect]:
        """``page id -> aspect`` for every aspect of the build's families (none for ``no-merge``);
        ids come from the aspect's name and category (``aspect_page_id``), so a page keeps its id while
        its members change."""
        if self.variant == "no-merge":
            return {}
        out: dict[str, Aspect] = {}
        for asp in self.structure()[1]:
            base = aspect_page_id(asp)
            pid, n = base, 2
            while pid in out or (pid in self._pages and self._pages[pid].kind != "aspect"):
                pid, n = f"{base}-{n}", n + 1
            out[pid] = asp
        return out

    def structure(self) -> tuple[list[Family], list[Aspect]]:
        """The build's families and aspects, found by code from its articles (computed once)."""
        if self._aspects is None:
            self._aspects = find_aspects(self._families) if self.variant != "no-merge" else []
        return self._families, self._aspects

    @staticmethod
    def _aspect_hash(asp: Aspect) -> str:
        return content_hash(asp.name + "\n" + "\n".join(f"{m.article.id}:{m.article.content_hash}" for m in asp.members))

    def aspect_hash(self, asp: Aspect) -> str:
        """The hash an aspect page is journalled under: its name and its members' content hashes."""
        return self._aspect_hash(asp)

    def aspect_prompt(self, asp: Aspect, page_id: str) -> str:
        """The bounded prompt for one aspect page: each member with its product, title, key line and
        an excerpt of the section or article (``max_article_chars`` in all)."""
        per = max(200, self.limits.max_article_chars // max(1, len(asp.members)))
        rows = []
        for m in asp.members:
            text = m.article.body
            if m.heading is not None:
                i = text.find(m.heading)
                text = text[max(0, i - 4):] if i >= 0 else text
            excerpt = " ".join(text.split())[:per]
            rows.append(f"- product: {m.family.name}\n  id: {m.article.id}\n  title: {m.article.title[:200]}\n"
                        f"  key line found by code: {m.key_line}\n  excerpt: {excerpt}")
        return self._aspect_prompt.render(
            aspect=asp.name, category=asp.category or "sibling products", title=aspect_title(asp),
            page_id=page_id, exists="yes" if page_id in self._pages else "no", link_types=", ".join(LINK_TYPES),
            max_steps=max(self.limits.max_steps, len(asp.members)), members="\n".join(rows),
        )

    def delete_gone_aspects(self, targets: Mapping[str, Aspect] | None = None) -> list[str]:
        """Delete the aspect pages whose aspect is gone (log and journal too); returns their ids."""
        targets = self.aspect_targets() if targets is None else targets
        gone = sorted(p.id for p in self._pages.values() if p.kind == "aspect" and p.id not in targets)
        for pid in gone:
            self.layer.delete(pid)
            self._pages.pop(pid, None)
            self._search.remove(pid)
            self.journal.forget([f"aspect:{pid}"])
            self.layer.log([f"aspect page {pid} deleted (its aspect is gone)"])
        return gone


class LLMBuilder(PageBuilder):
    """The model driver: runs the update-or-create loop over a workspace's articles with a model.

    ``model``: a pydantic-ai ``Model`` (or a spec for ``skillrag.models.resolve_model``).
    ``progress(done, total, input_tokens, output_tokens)`` is called after each article.
    ``layer`` / ``journal``: where pages and decisions go (default: the workspace's layer and
    journal; a rebuild passes its staging layer and journal); ``model_name`` overrides the id
    recorded on pages.
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
        layer: Layer | None = None,
        journal: Journal | None = None,
        model_name: str | None = None,
        articles: list[Article] | None = None,
    ) -> None:
        from skillrag.models import model_id, resolve_model

        self.model = resolve_model(model, settings=ws.config.models)
        super().__init__(ws, variant=variant, limits=limits, layer=layer, journal=journal, builder="llm",
                         model_name=model_name or model_id(model), articles=articles)
        self.concurrency = max(1, concurrency)
        self.progress = progress

    async def _attempt(self, article: Article, candidates: list[Page], usage: list[int]) -> tuple[PageDraft | None, list[str], int]:
        from skillrag.models import make_agent, model_errors

        agent = make_agent(self.model, PageDraft)
        prompt = self.prompt_for(article, candidates)
        usage[2] = max(usage[2], len(prompt))
        cmap = {p.id: p for p in candidates}
        reasons: list[str] = []
        attempts = 0
        for _ in range(self.limits.max_retries + 1):
            attempts += 1
            text = prompt if not reasons else prompt + "\n\n" + self.retry_text(reasons, article.id)
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
            reasons = self.check_draft(draft, article, cmap)
            if not reasons:
                return draft, [], attempts
        return None, reasons, attempts

    @traced("skillrag.wiki.article", _spans.article_before, after=_spans.article_after)
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
                    self.journal.fail(article.id, article.content_hash, reasons, (usage[0], usage[1]), attempts)
                    result.failed[article.id] = reasons
                    return
                stale = any(self._versions.get(pid, 0) != v for pid, v in seen.items())
                if draft.action == "create":
                    pid = self.new_id(draft.title)
                    twin = slugify(draft.title)  # a same-named page written while this call ran
                    stale = stale or (twin not in seen and self._changed_at.get(twin, 0) > epoch)
                else:
                    pid = draft.page_id or ""
                if stale:
                    result.conflicts += 1
                    continue
                fam = self.family_of(article)  # another article of the family may have created it meanwhile
                if fam is not None and fam.entity and draft.action == "create" and fam.entity_page:
                    result.conflicts += 1
                    continue
                page = self.page_for(draft, pid)
                self.apply(article.id, article.content_hash, draft.action, page, usage=(usage[0], usage[1]),
                           attempts=attempts)
                result.failed.pop(article.id, None)
                (result.created if draft.action == "create" else result.updated).append(pid)
                return
        result.failed[article.id] = ["gave up after repeated concurrent conflicts"]

    async def run_async(self, articles: list[Article]) -> LLMBuildResult:
        """Process ``articles`` (those already done with the same hash are skipped)."""
        result = LLMBuildResult()
        self.replay()
        todo = self.todo(articles)
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
        await self._aspect_pass(sem, lock, result)
        return result

    # -- aspect pages --------------------------------------------------------------------------

    @traced("skillrag.wiki.aspects", after=_spans.aspects_after)
    async def _aspect_pass(self, sem: asyncio.Semaphore, lock: asyncio.Lock, result: LLMBuildResult) -> None:
        """Write the aspect pages that are new or whose members changed; delete those of aspects gone."""
        targets = self.aspect_targets()
        result.deleted += self.delete_gone_aspects(targets)
        todo = self.aspect_todo(targets)

        async def one(pid: str, asp: Aspect) -> None:
            await self._aspect(pid, asp, sem, lock, result)

        if self.concurrency == 1:
            for pid, asp in todo:
                await one(pid, asp)
        else:
            await asyncio.gather(*(one(pid, asp) for pid, asp in todo))

    async def _aspect(self, pid: str, asp: Aspect, sem: asyncio.Semaphore, lock: asyncio.Lock,
                      result: LLMBuildResult) -> None:
        from pydantic_ai.exceptions import UnexpectedModelBehavior

        from skillrag.models import make_agent, model_errors

        key, chash, members = f"aspect:{pid}", self._aspect_hash(asp), asp.ids()
        draft: PageDraft | None = None
        prompt = self.aspect_prompt(asp, pid)
        agent = make_agent(self.model, PageDraft)
        reasons: list[str] = []
        usage = [0, 0]
        attempts = 0
        async with sem:
            for _ in range(self.limits.max_retries + 1):
                attempts += 1
                text = prompt if not reasons else prompt + "\n\n" + self.retry_text(reasons, ", ".join(members))
                try:
                    with model_errors(self.model_name):
                        res = await agent.run(text)
                except UnexpectedModelBehavior as exc:
                    reasons = [f"output does not match the page schema ({str(exc).splitlines()[0]})"]
                    continue
                usage[0] += res.usage.input_tokens or 0
                usage[1] += res.usage.output_tokens or 0
                result.requests += res.usage.requests or 1
                result.max_prompt_chars = max(result.max_prompt_chars, len(prompt))
                draft = res.output
                reasons = self.check_aspect_draft(draft, asp)
                if not reasons:
                    break
        async with lock:
            result.input_tokens += usage[0]
            result.output_tokens += usage[1]
            if reasons or draft is None:
                self.journal.fail(key, chash, reasons, (usage[0], usage[1]), attempts)
                result.failed[key] = reasons
                return
            action = "update" if pid in self._pages else "create"
            page = self.aspect_page_for(draft, pid, asp)
            self.apply(key, chash, action, page, usage=(usage[0], usage[1]), attempts=attempts)
            (result.created if action == "create" else result.updated).append(pid)

    def run(self, articles: list[Article]) -> LLMBuildResult:
        return asyncio.run(self.run_async(articles))

    def estimate(self, articles: list[Article]) -> dict[str, int]:
        """Token estimate before a build (``CHARS_PER_TOKEN`` characters per token).

        Input: the real prompt against the current layer, with the candidate slots not yet filled
        counted at ``max_candidate_chars`` each, plus one prompt per aspect page to write. Output: one
        page of ``max_page_chars / 3`` per article and per aspect page.
        """
        todo = self.todo(articles)
        chars_in = 0
        slots = 0 if self.variant == "no-merge" else self.limits.candidate_pages
        for a in todo:
            cands = self.candidates_for(a)
            chars_in += len(self.prompt_for(a, cands)) + (slots - len(cands)) * self.limits.max_candidate_chars
        rows = self.journal.rows()
        aspects = [(pid, asp) for pid, asp in self.aspect_targets().items()
                   if not (rows.get(f"aspect:{pid}") is not None and rows[f"aspect:{pid}"]["status"] == "done"
                           and rows[f"aspect:{pid}"]["content_hash"] == self._aspect_hash(asp))]
        chars_in += sum(len(self.aspect_prompt(asp, pid)) for pid, asp in aspects)
        chars_out = (len(todo) + len(aspects)) * (self.limits.max_page_chars // 3)
        return {
            "articles": len(todo),
            "skipped": len(articles) - len(todo),
            "aspects": len(aspects),
            "input_tokens": chars_in // CHARS_PER_TOKEN,
            "output_tokens": chars_out // CHARS_PER_TOKEN,
            "requests": len(todo) + len(aspects),
        }
