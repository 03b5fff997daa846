"""The agent driver of the page builder: coding agents write the layer, one article at a time.

``prepare_agent_build`` opens a build: a staging layer (``.wiki.rebuild/``, beside ``wiki/``), the
rebuild journal (``wiki_journal_rebuild``) and the manifest, exactly as ``wiki build --builder llm
--rebuild`` has them; the exported wiki-maintainer skill (``skillrag.skill.maintainer``) gives agents
scripts that call :class:`AgentBuild`:

- ``next(agent)`` claims the next article (or, once no article is left to claim, the next aspect
  page) and returns the task: the prompt :class:`~skillrag.wiki.llm.PageBuilder` renders for a
  model (family, entity page, candidate pages, index lines, schema, article), bounded the same way;
- ``read_page(page_id, claim)`` shows a page as a candidate is shown, and makes it one for the claim;
- ``write_page(claim, draft_json)`` validates the draft with the builder's own checks and writes it
  through its journal, or raises ``PageRejected`` with every reason (the claim is kept for a retry);
- ``release`` gives claims back; ``status`` counts what is done, claimed and left, and the rejected
  writes with their reasons; ``finish`` runs the structural audit and swaps the layer in only when
  every article and aspect page is written and the audit passes.

Several agents work at once. Claims live in the workspace store (``wiki_agent_claims``, taken in one
``BEGIN IMMEDIATE`` transaction, so two agents never hold the same article) with a lease
(``lease_s``, renewed by each call on the claim): a claim whose agent died expires and is handed out
again. Writes take the workspace's write lock, re-read the layer and check the draft against the
pages as they are now: an update of a page another agent changed since this agent read it is
refused (read it again and merge), as the model driver recomputes a stale result. Every claim, release,
expiry, rejection and acceptance is an event (``wiki_agent_events``), which ``status`` reads and
whose sequence numbers order page versions. A killed agent loses nothing: a page is journalled before
its file is written (the journal replays it), and an unwritten claim just expires.

A build may cover a ``scope``: article id prefixes. Families, aspects and the ids a page may cite
come from the articles in scope alone, the manifest records the scope, and the audit checks the layer
against those articles.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from skillrag.corpus import Article, ArticleStore, content_hash
from skillrag.errors import EmptyInputError, PageRejected, UserError, WorkspaceError
from skillrag.wiki.aspects import structure_from_json, structure_to_json
from skillrag.wiki.build import ArticleDiff, BuildReport, diff_articles, drop_removed
from skillrag.wiki.layer import (
    Layer,
    Manifest,
    in_scope,
    library_version,
    now_iso,
    recover_swap,
    staging_dir,
    swap_in,
)
from skillrag.wiki.llm import (
    AGENT_INDEX_RULE,
    Journal,
    LLMBuildLimits,
    PageBuilder,
    candidate_text,
    parse_draft,
)
from skillrag.wiki.page import Page, check_page_id, render_page, slugify
from skillrag.workspace import Schema, Workspace
from skillrag.workspace.schema import statements

__all__ = [
    "DEFAULT_LEASE_S",
    "MAINTAINER_NAME",
    "MAINTAINER_SCRIPTS",
    "AgentBuild",
    "AgentTask",
    "BuildStatus",
    "FinishResult",
    "PrepareReport",
    "check_agent_name",
    "last_finished",
    "maintainer_skill",
    "open_build",
    "page_as_draft",
    "prepare_agent_build",
]

#: How long a claim stays an agent's without a call on it, in seconds (20 minutes).
DEFAULT_LEASE_S = 1200.0
#: How long a write waits for the workspace's write lock, in seconds.
LOCK_WAIT_S = 120.0
JOURNAL_TABLE = "wiki_journal_rebuild"
_AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

AGENT_SQL = """
CREATE TABLE IF NOT EXISTS wiki_agent_builds (
    build_id    TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    variant     TEXT NOT NULL,
    scope       TEXT,
    lease_s     REAL NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('open', 'finished', 'discarded')),
    finished_at REAL,
    structure_key TEXT,
    structure     TEXT,
    summary       TEXT
);
CREATE TABLE IF NOT EXISTS wiki_agent_claims (
    build_id   TEXT NOT NULL,
    key        TEXT NOT NULL,
    claim      TEXT NOT NULL UNIQUE,
    agent      TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    epoch      INTEGER NOT NULL DEFAULT 0,
    seen       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (build_id, key)
);
CREATE TABLE IF NOT EXISTS wiki_agent_events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    build_id TEXT NOT NULL,
    at       REAL NOT NULL,
    agent    TEXT,
    claim    TEXT,
    key      TEXT,
    event    TEXT NOT NULL CHECK (event IN ('claimed', 'released', 'expired', 'rejected', 'accepted')),
    page_id  TEXT,
    reasons  TEXT
);
"""


def _baseline(conn: sqlite3.Connection) -> None:
    """Version 1 of the agent-build tables: ``AGENT_SQL``, and the columns a store from before them
    lacks (``structure_key``, ``structure``, ``summary``)."""
    for stmt in statements(AGENT_SQL):
        conn.execute(stmt)
    have = {r[1] for r in conn.execute("PRAGMA table_info(wiki_agent_builds)")}
    for col in ("structure_key", "structure", "summary"):
        if col not in have:
            conn.execute(f"ALTER TABLE wiki_agent_builds ADD COLUMN {col} TEXT")


#: The agent-build tables in the workspace store, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("wiki.agent", (_baseline,))

_thread_locks: dict[str, threading.Lock] = {}
_thread_guard = threading.Lock()


def check_agent_name(name: str | None) -> str:
    """``name`` if it can name an agent (letters, digits, ``.``, ``_``, ``-``; at most 64), else ``UserError``."""
    if not name or not _AGENT_NAME.match(name):
        raise UserError(f"agent name {name!r}: name yourself with --agent NAME (or $SKILLRAG_AGENT), a name no "
                        "other agent uses: letters, digits, '.', '_' or '-', e.g. agent-2")
    return name


def _scope(scope: Sequence[str] | None) -> list[str] | None:
    if scope is None:
        return None
    out = sorted({s.strip() for s in scope if s and s.strip()})
    if not out:
        return None
    return out


def open_build(ws: Workspace) -> dict[str, Any] | None:
    """The agent build in progress in ``ws`` (its row), or None."""
    with ws.connect(SCHEMA) as conn:
        row = conn.execute("SELECT * FROM wiki_agent_builds WHERE state='open' ORDER BY created_at DESC").fetchone()
    if row is None:
        return None
    out = dict(row)
    out["scope"] = json.loads(out["scope"]) if out["scope"] else None
    return out


def last_finished(ws: Workspace) -> BuildStatus | None:
    """The status a finished agent build recorded when it was swapped in (the latest one), or None."""
    with ws.connect(SCHEMA) as conn:
        row = conn.execute("SELECT summary FROM wiki_agent_builds WHERE state='finished' AND summary IS NOT NULL "
                           "ORDER BY finished_at DESC").fetchone()
    if row is None:
        return None
    data = json.loads(row["summary"])
    data.pop("complete", None)
    return BuildStatus(**data)



def page_as_draft(page: Page) -> dict[str, Any]:
    """``page`` as an update draft (the fields of ``PageDraft``): what an agent edits and sends back to
    update it. Source summaries are included; a summary sent back replaces the page's, an empty one keeps it."""
    return {
        "action": "update", "page_id": page.id, "kind": page.kind, "title": page.title, "intent": page.intent,
        "solves": list(page.solves), "does_not_solve": list(page.does_not_solve),
        "steps": [{"text": st.text, "links": [{"type": ln.type, "article_id": ln.article_id} for ln in st.links]}
                  for st in page.steps],
        "sources": [{"id": src.id, "summary": src.summary} for src in page.sources],
    }


@dataclass
class PrepareReport:
    """What ``prepare_agent_build`` did: a new build, a resumed one, or nothing (layer up to date)."""

    build_id: str | None
    variant: str
    scope: list[str] | None
    staging: str
    articles: int  # in scope
    to_write: int  # articles still to write
    aspects: int  # aspect pages still to write
    resumed: bool = False
    incremental: bool = False  # builds on the live agent layer (only what changed is written)
    up_to_date: bool = False
    diff: ArticleDiff = field(default_factory=ArticleDiff)
    deleted: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prepare_agent_build(
    ws: Workspace,
    *,
    variant: str | None = None,
    scope: Sequence[str] | None = None,
    lease_s: float = DEFAULT_LEASE_S,
    rebuild: bool = False,
    discard: bool = False,
    clock: Callable[[], float] = time.time,
) -> PrepareReport:
    """Open an agent build (see the module doc) and return what is to write.

    A build already open with the same variant and scope is resumed; one with another is refused
    unless ``discard`` (its staging layer and claims are dropped). Over a live layer the agents built
    with the same variant and scope, the build is incremental: the staging layer starts as a copy of
    it and only new, changed, removed and uncited articles are written (``rebuild`` starts from an
    empty layer instead). Raises ``EmptyInputError`` when there are no articles (in the scope) and
    ``UserError`` for a live agent layer of another variant or scope without ``rebuild``.
    """
    from skillrag.wiki.variants import VARIANTS

    variant = variant or ws.config.wiki.variant
    if variant not in VARIANTS:
        raise UserError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
    scope = _scope(scope)
    if lease_s <= 0:
        raise UserError(f"the lease must be positive, got {lease_s} seconds")
    with ws.write_lock("wiki build --builder agent"):
        recover_swap(ws)
        current = open_build(ws)
        if current is not None:
            if discard:
                _discard(ws, current["build_id"], clock())
            elif (current["variant"], current["scope"]) == (variant, scope):
                build = AgentBuild(ws, clock=clock)
                b = build.builder()
                b.replay()  # a write killed between its journal row and its file
                st = build.status(b)
                return PrepareReport(build_id=current["build_id"], variant=variant, scope=scope,
                                     staging=str(build.layer.root), articles=st.articles, to_write=st.articles_left,
                                     aspects=st.aspects_left, resumed=True)
            else:
                st = AgentBuild(ws, clock=clock).status()
                raise UserError(
                    f"an agent build (variant {current['variant']}, scope {_scope_text(current['scope'])}) is in "
                    f"progress: {st.articles - st.articles_left} of {st.articles} articles written; finish it "
                    "(`skillrag wiki agent finish`) or pass --discard to drop it")
        store = ArticleStore(ws)
        articles = [a for a in store.list(split_documents=False) if in_scope(a.id, scope)]
        if not articles:
            if scope is not None:
                raise EmptyInputError(f"no article id starts with {', '.join(repr(s) for s in scope)} "
                                      "(see `skillrag corpus list`)")
            raise EmptyInputError("no articles in the workspace: run `skillrag ingest` first")
        live = Layer(ws).manifest()
        incremental = live is not None and live.builder == "agent" and bool(live.articles) and not rebuild
        if incremental and (live.variant, live.scope) != (variant, scope):
            raise UserError(f"the layer was built by agents with variant {live.variant}, scope "
                            f"{_scope_text(live.scope)}; pass --rebuild to build it with variant {variant}, "
                            f"scope {_scope_text(scope)}")
        root = staging_dir(ws)
        if root.exists():
            shutil.rmtree(root)
        journal = Journal(ws, table=JOURNAL_TABLE)
        layer = Layer(ws, root=root)
        if incremental:
            shutil.copytree(ws.wiki_dir, root)
            Journal(ws).copy_to(journal)
        else:
            root.mkdir(parents=True)
            if Layer(ws).log_path.is_file():
                shutil.copyfile(Layer(ws).log_path, layer.log_path)
            journal.clear()
            layer.write_manifest(Manifest(library_version=library_version(), builder="agent", variant=variant,
                                          built_at=now_iso(), scope=scope))
        pages = layer.pages()
        diff = diff_articles(layer, {a.id: a.content_hash for a in articles}, pages)
        report = PrepareReport(build_id=None, variant=variant, scope=scope, staging=str(root),
                               articles=len(articles), to_write=0, aspects=0, incremental=incremental, diff=diff)
        if incremental and diff.empty():
            shutil.rmtree(root)
            report.up_to_date = True
            return report
        if diff.removed:
            rep = BuildReport(builder="agent", variant=variant, model=None, articles=len(articles), pages=len(pages),
                              diff=diff)
            drop_removed(layer, pages, diff.removed, journal, rep)
            report.deleted += rep.deleted
        journal.forget(diff.unreferenced)
        build_id = f"b-{time.strftime('%Y%m%d-%H%M%S', time.gmtime(clock()))}-{secrets.token_hex(3)}"
        with ws.connect() as conn, conn:
            conn.execute("INSERT INTO wiki_agent_builds (build_id, created_at, variant, scope, lease_s, state) "
                         "VALUES (?,?,?,?,?,'open')",
                         (build_id, clock(), variant, json.dumps(scope) if scope else None, float(lease_s)))
        build = AgentBuild(ws, clock=clock)
        b = build.builder()
        report.deleted += b.delete_gone_aspects()
        report.build_id = build_id
        report.to_write = len(build._article_todo(b))
        report.aspects = len(b.aspect_todo())
        return report


def _scope_text(scope: Sequence[str] | None) -> str:
    return "all articles" if not scope else ", ".join(scope)


def _discard(ws: Workspace, build_id: str, now: float) -> None:
    root = staging_dir(ws)
    if root.exists():
        shutil.rmtree(root)
    Journal(ws, table=JOURNAL_TABLE).clear()
    with ws.connect() as conn, conn:
        conn.execute("DELETE FROM wiki_agent_claims WHERE build_id=?", (build_id,))
        conn.execute("UPDATE wiki_agent_builds SET state='discarded', finished_at=? WHERE build_id=?", (now, build_id))


@dataclass
class AgentTask:
    """One claimed piece of work: an article to place, or an aspect page to write."""

    claim: str
    key: str  # the article id, or ``aspect:<page id>``
    kind: str  # "article" | "aspect"
    agent: str
    expires_at: float
    prompt: str  # what the llm builder's model receives for this key, rendered by the same code
    article_id: str | None = None
    page_id: str | None = None  # aspect pages: the page to write
    family: str | None = None  # the family's title (articles of a family)
    entity_page: str | None = None
    candidates: list[str] = field(default_factory=list)
    index_lines: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # aspect pages: the articles to cite
    resumed: bool = False  # the agent already held this claim

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BuildStatus:
    """Where an agent build stands (``AgentBuild.status``); times are Unix seconds."""

    build_id: str
    state: str
    variant: str
    scope: list[str] | None
    staging: str
    lease_s: float
    articles: int  # in scope
    articles_left: int  # still to write (claimed ones included)
    aspects: int
    aspects_left: int
    claims: list[dict[str, Any]] = field(default_factory=list)
    accepted: int = 0
    rejected: int = 0
    rejections: list[dict[str, Any]] = field(default_factory=list)
    reason_counts: dict[str, int] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    articles_per_agent_hour: float | None = None

    @property
    def complete(self) -> bool:
        return self.articles_left == 0 and self.aspects_left == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["complete"] = self.complete
        return d


@dataclass
class FinishResult:
    """What ``AgentBuild.finish`` found: swapped in, or what is missing."""

    swapped: bool
    status: BuildStatus
    audit: Any = None  # StructuralAudit of the staging layer (None when articles were left)
    missing: list[str] = field(default_factory=list)  # one line per thing that keeps the build open

    def to_dict(self) -> dict[str, Any]:
        return {"swapped": self.swapped, "missing": self.missing, "status": self.status.to_dict(),
                "audit": self.audit.to_dict() if self.audit is not None else None}


_ID_LIKE = re.compile(r"'[^']*'|\b[A-Za-z0-9]+(?:[_:#.()-][A-Za-z0-9()]+)+\b|\d+")


def _reason_kind(reason: str) -> str:
    """A rejection reason with its ids and numbers replaced, so like reasons count together."""
    return _ID_LIKE.sub("…", reason)


class AgentBuild:
    """The agent build open in ``ws`` (``WorkspaceError`` when none is). ``clock`` gives Unix seconds
    (tests inject one)."""

    def __init__(self, ws: Workspace, *, clock: Callable[[], float] = time.time) -> None:
        row = open_build(ws)
        if row is None:
            raise WorkspaceError(f"{ws.root}: no agent build in progress: run `skillrag wiki build --builder agent`")
        self.ws = ws
        self.clock = clock
        self.build_id: str = row["build_id"]
        self.variant: str = row["variant"]
        self.scope: list[str] | None = row["scope"]
        self.lease_s: float = row["lease_s"]
        self.layer = Layer(ws, root=staging_dir(ws))
        self.journal = Journal(ws, table=JOURNAL_TABLE)
        self.limits = LLMBuildLimits.from_settings(ws.config.wiki)
        if self.layer.manifest() is None:
            raise WorkspaceError(f"{self.layer.root}: the agent build's staging layer is gone; start again with "
                                 "`skillrag wiki build --builder agent --discard`")

    # -- the one builder -------------------------------------------------------------------------

    def builder(self) -> PageBuilder:
        """The page builder over this build's staging layer, journal and scoped articles. Its families
        and aspects are found once per build and corpus state and kept in the build's row, so each
        script call (a new process) only reads them back."""
        articles = [a for a in ArticleStore(self.ws).list(split_documents=False) if in_scope(a.id, self.scope)]
        key = content_hash(json.dumps([self.variant, self.ws.config.wiki.max_group, library_version(),
                                       sorted((a.id, a.content_hash) for a in articles)]))
        structure = None
        with self.ws.connect() as conn:
            row = conn.execute("SELECT structure_key, structure FROM wiki_agent_builds WHERE build_id=?",
                               (self.build_id,)).fetchone()
        if row is not None and row["structure_key"] == key and row["structure"]:
            structure = structure_from_json(row["structure"], articles)
        b = PageBuilder(self.ws, variant=self.variant, limits=self.limits, layer=self.layer, journal=self.journal,
                        builder="agent", model_name=None, articles=articles, structure=structure)
        if structure is None:
            text = structure_to_json(*b.structure())
            with self.ws.connect() as conn, conn:
                conn.execute("UPDATE wiki_agent_builds SET structure_key=?, structure=? WHERE build_id=?",
                             (key, text, self.build_id))
        return b

    def _article_todo(self, b: PageBuilder) -> list[Article]:
        """Articles still to write: new, changed or uncited against the manifest, not yet journalled done."""
        man = self.layer.manifest()
        recorded = man.articles if man is not None else {}
        cited = {aid for p in b.pages.values() for aid in p.article_ids()}
        need = [a for a in b.articles if recorded.get(a.id) != a.content_hash or a.id not in cited]
        return b.todo(need)

    @contextmanager
    def _writing(self, command: str) -> Iterator[None]:
        """The workspace's write lock (other processes) and a lock for this process's threads."""
        key = str(self.ws.store_path)
        with _thread_guard:
            lock = _thread_locks.setdefault(key, threading.Lock())
        with lock, self.ws.write_lock(command, wait=LOCK_WAIT_S):
            yield

    def _epoch(self, conn: Any) -> int:
        row = conn.execute("SELECT MAX(seq) FROM wiki_agent_events WHERE build_id=?", (self.build_id,)).fetchone()
        return int(row[0] or 0)

    def _event(self, conn: Any, event: str, *, agent: str | None, claim: str | None, key: str | None,
               page_id: str | None = None, reasons: list[str] | None = None) -> int:
        cur = conn.execute(
            "INSERT INTO wiki_agent_events (build_id, at, agent, claim, key, event, page_id, reasons) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (self.build_id, self.clock(), agent, claim, key, event, page_id, json.dumps(reasons) if reasons else None))
        return int(cur.lastrowid)

    def _expire(self, conn: Any) -> None:
        now = self.clock()
        for r in conn.execute("SELECT * FROM wiki_agent_claims WHERE build_id=? AND expires_at<?",
                              (self.build_id, now)).fetchall():
            conn.execute("DELETE FROM wiki_agent_claims WHERE claim=?", (r["claim"],))
            self._event(conn, "expired", agent=r["agent"], claim=r["claim"], key=r["key"])

    def _done_keys(self, conn: Any) -> dict[str, str]:
        """``key -> content hash`` of the journal's done rows."""
        return {r[0]: r[1] for r in conn.execute(
            f"SELECT article_id, content_hash FROM {JOURNAL_TABLE} WHERE status='done'")}

    # -- next ------------------------------------------------------------------------------------

    def next(self, agent: str, *, key: str | None = None) -> AgentTask | None:
        """Claim the next piece of work for ``agent`` and return it (the claim it already holds, if
        any); None when nothing is left to claim (see ``status`` for who holds what). ``key`` claims that
        article id (or ``aspect:PAGE_ID``) instead; ``UserError`` when it is not free."""
        agent = check_agent_name(agent)
        with self.ws.connect() as conn:
            epoch = self._epoch(conn)  # read before the pages, so any later write counts as newer
        b = self.builder()
        if any(r["status"] == "applying" for r in self.journal.rows().values()):
            with self._writing("wiki agent next"):  # a write killed between journal and file
                b.reload()
                b.replay()
        todo = self._article_todo(b)
        fam_of = {a.id: (f.key if (f := b.family_of(a)) is not None else a.id) for a in todo}
        arts = {a.id: a for a in todo}
        aspects: dict[str, Any] | None = None
        now = self.clock()
        with self.ws.write_transaction() as conn:
            self._expire(conn)
            done = self._done_keys(conn)
            for r in conn.execute("SELECT claim, key FROM wiki_agent_claims WHERE build_id=?", (self.build_id,)):
                if r["key"] in done and (r["key"].startswith("aspect:") or r["key"] not in arts):
                    conn.execute("DELETE FROM wiki_agent_claims WHERE claim=?", (r["claim"],))
            held = conn.execute("SELECT * FROM wiki_agent_claims WHERE build_id=? AND agent=? ORDER BY claimed_at",
                                (self.build_id, agent)).fetchone()
            if held is not None:
                conn.execute("UPDATE wiki_agent_claims SET expires_at=? WHERE claim=?", (now + self.lease_s,
                                                                                        held["claim"]))
                key, claim, resumed = held["key"], held["claim"], True
            else:
                claimed = {r["key"]: r["agent"] for r in conn.execute(
                    "SELECT key, agent FROM wiki_agent_claims WHERE build_id=?", (self.build_id,))}
                free = [a.id for a in todo if a.id not in claimed
                        and not (a.id in done and done[a.id] == a.content_hash)]
                wanted, key = key, None
                if wanted is not None and wanted.startswith("aspect:"):
                    aspects = dict(b.aspect_todo())
                    key = wanted if wanted.removeprefix("aspect:") in aspects and wanted not in claimed else None
                elif wanted is not None:
                    key = wanted if wanted in free else None
                else:
                    key = self._pick(conn, agent, free, fam_of, claimed)
                    if key is None:  # no article is free: aspect pages (their ids are reserved)
                        aspects = dict(b.aspect_todo())
                        free_aspects = [f"aspect:{pid}" for pid in aspects if f"aspect:{pid}" not in claimed]
                        key = free_aspects[0] if free_aspects else None
                if key is None and wanted is not None:
                    who = f"claimed by {claimed[wanted]}" if wanted in claimed else "done or not in this build"
                    raise UserError(f"{wanted} is not free to claim ({who})")
                if key is None:
                    return None
                claim, resumed = f"c-{secrets.token_hex(5)}", False
                conn.execute("INSERT INTO wiki_agent_claims (build_id, key, claim, agent, claimed_at, expires_at, "
                             "epoch) VALUES (?,?,?,?,?,?,?)",
                             (self.build_id, key, claim, agent, now, now + self.lease_s, epoch))
                self._event(conn, "claimed", agent=agent, claim=claim, key=key)
        task = self._task(b, key, claim, agent, now + self.lease_s, aspects)
        task.resumed = resumed
        seen = {pid: epoch for pid in task.candidates}
        with self.ws.write_transaction() as conn:
            row = conn.execute("SELECT seen FROM wiki_agent_claims WHERE claim=?", (claim,)).fetchone()
            if row is not None:
                old = json.loads(row["seen"])
                merged = {**seen, **{p: e for p, e in old.items() if p not in seen}} if resumed else seen
                conn.execute("UPDATE wiki_agent_claims SET seen=?, epoch=? WHERE claim=?",
                             (json.dumps(merged), epoch, claim))
        return task

    def _pick(self, conn: Any, agent: str, free: list[str], fam_of: dict[str, str],
              claimed: dict[str, str]) -> str | None:
        """The article to hand out: one of the family the agent last wrote, else one of a family no
        other agent is working on (holds a claim in, or wrote its last page to within the lease), so two
        agents rarely race for one entity page; else the first."""
        if not free:
            return None
        busy = {fam_of.get(k, k) for k, who in claimed.items() if who != agent}
        for r in conn.execute("SELECT agent, key, MAX(seq) FROM wiki_agent_events WHERE build_id=? AND "
                              "event='accepted' AND agent<>? AND at>? GROUP BY agent",
                              (self.build_id, agent, self.clock() - self.lease_s)):
            busy.add(fam_of.get(r["key"], r["key"]))
        last = conn.execute("SELECT key FROM wiki_agent_events WHERE build_id=? AND agent=? AND event='accepted' "
                            "ORDER BY seq DESC LIMIT 1", (self.build_id, agent)).fetchone()
        if last is not None:
            mine = fam_of.get(last["key"])
            same = [k for k in free if mine is not None and fam_of[k] == mine]
            if same:
                return same[0]
        quiet = [k for k in free if fam_of[k] not in busy]
        return (quiet or free)[0]

    def _task(self, b: PageBuilder, key: str, claim: str, agent: str, expires: float,
              aspects: dict[str, Any] | None) -> AgentTask:
        if key.startswith("aspect:"):
            pid = key.split(":", 1)[1]
            targets = aspects if aspects is not None and pid in aspects else b.aspect_targets()
            if pid not in targets:
                raise WorkspaceError(f"aspect page {pid} is no longer an aspect of this build; release {claim}")
            asp = targets[pid]
            return AgentTask(claim=claim, key=key, kind="aspect", agent=agent, expires_at=expires,
                             prompt=b.aspect_prompt(asp, pid), page_id=pid, members=asp.ids())
        article = ArticleStore(self.ws).get(key)
        cands = b.candidates_for(article)
        fam = b.family_of(article)
        return AgentTask(
            claim=claim, key=key, kind="article", agent=agent, expires_at=expires,
            prompt=b.prompt_for(article, cands, index_rule=AGENT_INDEX_RULE), article_id=key,
            family=fam.title if fam is not None and fam.entity else None,
            entity_page=fam.entity_page if fam is not None else None,
            candidates=[p.id for p in cands], index_lines=b.index_lines_for(article, cands))

    # -- read-page -------------------------------------------------------------------------------

    def _claim_row(self, conn: Any, claim: str) -> Any:
        row = conn.execute("SELECT * FROM wiki_agent_claims WHERE claim=? AND build_id=?",
                           (claim, self.build_id)).fetchone()
        if row is not None:
            return row
        last = conn.execute("SELECT event, key FROM wiki_agent_events WHERE claim=? ORDER BY seq DESC LIMIT 1",
                            (claim,)).fetchone()
        if last is None:
            raise UserError(f"no claim {claim!r} in this build: run next.py to claim work")
        what = {"accepted": "its page was accepted", "released": "it was released",
                "expired": "it expired (no call on it for the lease) and may be another agent's now"}
        raise UserError(f"claim {claim!r} on {last['key']} is over: {what.get(last['event'], last['event'])}; "
                        "run next.py for new work")

    def read_page(self, page_id: str, claim: str | None = None, *, full: bool = False,
                  as_draft: bool = False) -> str:
        """The page as a candidate is shown in a prompt (bounded the same way), or with ``full`` the whole
        page file, or with ``as_draft`` the whole page as an update draft (JSON, the page schema: edit it
        and send it back with :meth:`write_page`). With ``claim``, the page becomes one the claim may
        update (as read now) and the claim's lease is renewed."""
        check_page_id(page_id)
        with self.ws.connect() as conn:
            epoch = self._epoch(conn)
        page = self.layer.read(page_id)
        if as_draft:
            text = json.dumps(page_as_draft(page), indent=2, ensure_ascii=False)
        else:
            text = render_page(page) if full else candidate_text(page, self.limits.max_candidate_chars)
        if claim is not None:
            with self.ws.write_transaction() as conn:
                row = self._claim_row(conn, claim)
                seen = json.loads(row["seen"])
                seen[page_id] = epoch
                conn.execute("UPDATE wiki_agent_claims SET seen=?, expires_at=? WHERE claim=?",
                             (json.dumps(seen), self.clock() + self.lease_s, claim))
        return text

    # -- write-page ------------------------------------------------------------------------------

    def page_size(self, page_id: str) -> tuple[int, int]:
        """``(size, room)`` in characters of a page of the build (``PageBuilder.page_size``)."""
        check_page_id(page_id)
        return self.builder().page_size(self.layer.read(page_id))

    def write_page(self, claim: str, text: str, *, check: bool = False) -> dict[str, Any]:
        """Validate the draft in ``text`` (JSON, the page schema) for the claim's article or aspect page
        and write it; returns ``{key, page_id, action, kind, articles_left, size, room}`` (``size`` and
        ``room``: the page's characters without its source list, and the most it may hold). With
        ``check`` nothing is written or journalled: the same checks run and the same result (or
        ``PageRejected``) comes back, with ``checked: True``. Raises ``PageRejected`` with every
        reason (the rejection is journalled and the claim kept, its lease renewed) and ``UserError``
        for a claim that is not (or no longer) held."""
        with self.ws.connect() as conn:
            row = self._claim_row(conn, claim)
        draft, reasons = parse_draft(text)
        b = self.builder()
        with self._writing("wiki agent write-page"):
            b.reload()
            b.replay()
            with self.ws.connect() as conn:
                row = self._claim_row(conn, claim)
            key, agent = row["key"], row["agent"]
            seen: dict[str, int] = json.loads(row["seen"])
            if key.startswith("aspect:"):
                pid = key.split(":", 1)[1]
                targets = b.aspect_targets()
                if pid not in targets:
                    raise UserError(f"aspect page {pid} is no longer an aspect of this build: release {claim}")
                asp = targets[pid]
                chash = b.aspect_hash(asp)
                if draft is not None:
                    reasons = b.check_aspect_draft(draft, asp)
                page = b.aspect_page_for(draft, pid, asp, author=agent) if draft is not None and not reasons else None
                action = "update" if pid in b.pages else "create"
            else:
                article = ArticleStore(self.ws).get(key)
                chash = article.content_hash
                page, action = None, "create"
                if draft is not None:
                    with self.ws.connect() as conn:
                        reasons = self._conflicts(conn, draft, seen, row["epoch"], b, claim)
                    shown = {pid: b.pages[pid] for pid in seen if pid in b.pages}
                    reasons += b.check_draft(draft, article, shown)
                    if not reasons:
                        action = draft.action
                        page = b.page_for(draft, author=agent)
            if check:
                if reasons or page is None:
                    raise PageRejected(reasons or ["the draft makes no page"])
                size, room = b.page_size(page)
                return {"key": key, "page_id": page.id, "action": action, "kind": page.kind,
                        "articles_left": len(self._article_todo(b)), "size": size, "room": room, "checked": True}
            if reasons or page is None:
                attempts = (self.journal.rows().get(key) or {"attempts": 0})["attempts"] + 1
                self.journal.fail(key, chash, reasons, (0, 0), attempts)
                with self.ws.write_transaction() as conn:
                    self._event(conn, "rejected", agent=agent, claim=claim, key=key, reasons=reasons)
                    conn.execute("UPDATE wiki_agent_claims SET expires_at=? WHERE claim=?",
                                 (self.clock() + self.lease_s, claim))
                raise PageRejected(reasons)
            with self.ws.write_transaction() as conn:
                seq = self._event(conn, "accepted", agent=agent, claim=claim, key=key, page_id=page.id)
            try:
                b.apply(key, chash, action, page, by=f"agent {agent}")
            except Exception:
                with self.ws.connect() as conn, conn:
                    conn.execute("DELETE FROM wiki_agent_events WHERE seq=?", (seq,))
                raise
            with self.ws.connect() as conn, conn:
                conn.execute("DELETE FROM wiki_agent_claims WHERE claim=?", (claim,))
            left = len(self._article_todo(b))
            size, room = b.page_size(page)
        return {"key": key, "page_id": page.id, "action": action, "kind": page.kind, "articles_left": left,
                "size": size, "room": room}

    def _conflicts(self, conn: Any, draft: Any, seen: dict[str, int], epoch: int, b: PageBuilder,
                   claim: str) -> list[str]:
        """Reasons the draft rests on an old view: the page it updates changed since the agent read it,
        or a page with the id its title makes was written since the claim (the model driver's stale check)."""
        def changed_at(pid: str) -> int:
            r = conn.execute("SELECT MAX(seq) FROM wiki_agent_events WHERE build_id=? AND event='accepted' "
                             "AND page_id=?", (self.build_id, pid)).fetchone()
            return int(r[0] or 0)

        if draft.action == "update" and draft.page_id in seen and changed_at(draft.page_id) > seen[draft.page_id]:
            return [(f"page {draft.page_id} changed since you read it (another agent wrote it): read it again with "
                    f"read_page.py {draft.page_id} --claim {claim} and merge your article into its current text")]
        if draft.action == "create":
            twin = slugify(draft.title)
            if twin in b.pages and twin not in seen and changed_at(twin) > epoch:
                return [(f"page {twin} (same title) was written since you claimed this article: read it with "
                        f"read_page.py {twin} --claim {claim}, then update it or choose a title that says how "
                        "yours differs")]
        return []

    # -- release ---------------------------------------------------------------------------------

    def release(self, *, claim: str | None = None, agent: str | None = None, expired: bool = False) -> list[str]:
        """Give claims back (one by token, all of an agent's, or with ``expired`` the expired ones);
        returns the keys released. Nothing written is lost; the keys are handed out again."""
        if sum(x is not None and x is not False for x in (claim, agent, expired or None)) != 1:
            raise UserError("release one claim (--claim C), an agent's claims (--agent NAME) or the expired ones "
                            "(--expired)")
        out: list[str] = []
        with self.ws.write_transaction() as conn:
            if expired:
                rows = conn.execute("SELECT * FROM wiki_agent_claims WHERE build_id=? AND expires_at<?",
                                    (self.build_id, self.clock())).fetchall()
            elif claim is not None:
                rows = [self._claim_row(conn, claim)]
            else:
                rows = conn.execute("SELECT * FROM wiki_agent_claims WHERE build_id=? AND agent=?",
                                    (self.build_id, agent)).fetchall()
            for r in rows:
                conn.execute("DELETE FROM wiki_agent_claims WHERE claim=?", (r["claim"],))
                self._event(conn, "expired" if expired else "released", agent=r["agent"], claim=r["claim"],
                            key=r["key"])
                out.append(r["key"])
        return out

    # -- status ----------------------------------------------------------------------------------

    def status(self, b: PageBuilder | None = None) -> BuildStatus:
        """Counts of what is done, claimed and left; rejected writes and their reasons; per agent, its
        claims, accepted and rejected writes, active hours and articles per hour."""
        b = b or self.builder()
        todo = self._article_todo(b)
        targets = b.aspect_targets()
        aspect_left = b.aspect_todo(targets)
        now = self.clock()
        st = BuildStatus(build_id=self.build_id, state="open", variant=self.variant, scope=self.scope,
                         staging=str(self.layer.root), lease_s=self.lease_s, articles=len(b.articles),
                         articles_left=len(todo), aspects=len(targets), aspects_left=len(aspect_left))
        with self.ws.connect() as conn:
            for r in conn.execute("SELECT * FROM wiki_agent_claims WHERE build_id=? ORDER BY claimed_at",
                                  (self.build_id,)):
                st.claims.append({"claim": r["claim"], "key": r["key"], "agent": r["agent"],
                                  "claimed_at": r["claimed_at"], "expires_at": r["expires_at"],
                                  "expired": r["expires_at"] < now})
            events = conn.execute("SELECT * FROM wiki_agent_events WHERE build_id=? ORDER BY seq",
                                  (self.build_id,)).fetchall()
        hours = 0.0
        articles_written = 0
        for e in events:
            a = st.agents.setdefault(e["agent"] or "?", {"claimed": 0, "articles": 0, "aspects": 0, "rejected": 0,
                                                         "released": 0, "expired": 0, "first_at": e["at"],
                                                         "last_at": e["at"]})
            a["last_at"] = e["at"]
            if e["event"] == "claimed":
                a["claimed"] += 1
            elif e["event"] == "accepted":
                st.accepted += 1
                a["aspects" if (e["key"] or "").startswith("aspect:") else "articles"] += 1
            elif e["event"] == "rejected":
                st.rejected += 1
                a["rejected"] += 1
                reasons = json.loads(e["reasons"] or "[]")
                st.rejections.append({"key": e["key"], "agent": e["agent"], "at": e["at"], "reasons": reasons})
                for r in reasons:
                    kind = _reason_kind(r)
                    st.reason_counts[kind] = st.reason_counts.get(kind, 0) + 1
            else:
                a[e["event"]] += 1
        for a in st.agents.values():
            a["hours"] = round((a["last_at"] - a["first_at"]) / 3600.0, 4)
            a["articles_per_hour"] = round(a["articles"] / a["hours"], 2) if a["hours"] > 0 else None
            hours += a["hours"]
            articles_written += a["articles"]
        st.reason_counts = dict(sorted(st.reason_counts.items(), key=lambda kv: (-kv[1], kv[0])))
        st.articles_per_agent_hour = round(articles_written / hours, 2) if hours > 0 else None
        return st

    # -- finish ----------------------------------------------------------------------------------

    def finish(self) -> FinishResult:
        """Swap the staging layer in when every article and aspect page is written and the structural
        audit passes (manifest recorded, ``index.md`` checked, the journal moved to the live one);
        otherwise leave everything as it is and say what is missing."""
        from skillrag.wiki.audit import audit_structure

        with self._writing("wiki agent finish"):
            b = self.builder()
            b.replay()
            b.delete_gone_aspects()
            st = self.status(b)
            missing = []
            if st.articles_left:
                held = sum(1 for c in st.claims if not c["key"].startswith("aspect:"))
                missing.append(f"{st.articles_left} articles not yet written ({held} claimed)")
            if st.aspects_left:
                held = sum(1 for c in st.claims if c["key"].startswith("aspect:"))
                missing.append(f"{st.aspects_left} aspect pages not yet written ({held} claimed)")
            if missing:
                return FinishResult(swapped=False, status=st, missing=missing)
            pages = self.layer.pages()
            covered = {aid for p in pages for aid in p.article_ids()}
            recorded = {a.id: a.content_hash for a in b.articles if a.id in covered}
            self.layer.write_manifest(Manifest(
                library_version=library_version(), builder="agent", variant=self.variant, model=None,
                params=self.limits.params(), articles=dict(sorted(recorded.items())), built_at=now_iso(),
                scope=self.scope))
            self.layer.sync_index(pages)
            audit = audit_structure(self.ws, self.layer)
            if not audit.ok:
                missing.append("the structural audit fails (see audit)")
                return FinishResult(swapped=False, status=st, audit=audit, missing=missing)
            swap_in(self.ws, self.layer.root)
            self.journal.move_to(Journal(self.ws))
            st.state = "finished"
            with self.ws.connect() as conn, conn:
                conn.execute("DELETE FROM wiki_agent_claims WHERE build_id=?", (self.build_id,))
                conn.execute("UPDATE wiki_agent_builds SET state='finished', finished_at=?, summary=? WHERE build_id=?",
                             (self.clock(), json.dumps(st.to_dict()), self.build_id))
            return FinishResult(swapped=True, status=st, audit=audit_structure(self.ws))


#: The wiki-maintainer skill's scripts: script name -> (``skillrag wiki agent`` sub-command, usage line).
MAINTAINER_SCRIPTS: dict[str, tuple[str, str]] = {
    "next": ("next", "Usage: next.py --agent NAME [--json]  -> claim the next article or aspect page; prints the task."),
    "read_page": ("read-page", ("Usage: read_page.py PAGE_ID [--claim C] [--full]  -> the page as candidates are "
                               "shown (--full: all of it).")),
    "write_page": ("write-page", ("Usage: write_page.py DRAFT.json --claim C [--json]  -> exit 0 written, "
                                 "1 rejected (every reason listed; the claim is kept), 2 usage error.")),
    "release": ("release", "Usage: release.py (--claim C | --agent NAME | --expired)  -> give claims back."),
    "status": ("status", "Usage: status.py [--json]  -> done, claimed and left; rejected writes."),
    "finish": ("finish", "Usage: finish.py [--json]  -> audit, and swap the layer in when it is complete."),
}

MAINTAINER_NAME = "wiki-maintainer"


def _example_draft() -> dict[str, Any]:
    return {
        "action": "create", "page_id": None, "kind": "entity", "title": "Gold Rewards Card (credit cards)",
        "intent": "What the Gold Rewards Card offers and how specialists handle its fees, rewards and lost cards.",
        "solves": ["A cardholder asks why the annual fee was charged", "A cardholder reports a lost card"],
        "does_not_solve": [],
        "steps": [
            {"text": "Explain the annual fee and when it is waived.",
             "links": [{"type": "fee", "article_id": "doc_credit_cards_gold_rewards_card_001"}]},
            {"text": "Freeze a lost card first, then order the replacement.",
             "links": [{"type": "procedure", "article_id": "doc_credit_cards_gold_rewards_card_002"},
                       {"type": "tool", "article_id": "doc_credit_cards_gold_rewards_card_002"}]},
        ],
        "sources": [{"id": "doc_credit_cards_gold_rewards_card_001", "summary": "Annual fee and its waiver."},
                    {"id": "doc_credit_cards_gold_rewards_card_002", "summary": "Replacing a lost card."}],
    }


def maintainer_skill(build: AgentBuild) -> tuple[dict[str, Any], str, dict[str, str]]:
    """``(front matter, manual, references)`` of the wiki-maintainer skill for ``build``: the manual
    (``prompts/maintainer_skill.md``) with the build's settings filled in, and the reference files
    (``page-draft.schema.json``, ``example-draft.json``, ``build.json``). ``skillrag.skill.maintainer``
    writes them with the skill export machinery."""
    from skillrag.wiki._prompts import load_prompt
    from skillrag.wiki.llm import PageDraft
    from skillrag.wiki.page import LINK_TYPES

    lim = build.limits
    scope = ("it covers every article" if not build.scope else
             "it covers only the articles whose id starts with " + ", ".join(f"`{s}`" for s in build.scope))
    manual = load_prompt("maintainer_skill.md").render(
        variant=build.variant, scope=scope, candidate_pages=lim.candidate_pages, index_lines=lim.index_lines,
        link_types=", ".join(LINK_TYPES), max_steps=lim.max_steps, max_sources=lim.max_sources,
        lease_minutes=f"{build.lease_s / 60:g}", max_candidate_chars=lim.max_candidate_chars,
        max_page_chars=lim.max_page_chars, per_source_chars=lim.per_source_chars)
    front = {
        "name": MAINTAINER_NAME,
        "description": ("Writes and maintains the navigation layer of a skillrag workspace: wiki pages that say what "
                        "each workflow or product is for, with every step linked to its source article. Use when "
                        "an agent build of the layer is open and articles are waiting to be placed on pages, one "
                        "at a time, through the scripts in this folder."),
        "license": "Apache-2.0",
        "metadata": {"tools": " ".join(MAINTAINER_SCRIPTS), "build": build.build_id},
    }
    settings = {"build_id": build.build_id, "variant": build.variant, "scope": build.scope,
                "lease_minutes": build.lease_s / 60, "limits": asdict(lim), "prompt_cap_chars": lim.prompt_cap()}
    refs = {
        "page-draft.schema.json": json.dumps(PageDraft.model_json_schema(), indent=2) + "\n",
        "example-draft.json": json.dumps(_example_draft(), indent=2) + "\n",
        "build.json": json.dumps(settings, indent=2) + "\n",
    }
    return front, manual, refs
