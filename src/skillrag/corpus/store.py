"""The article table in the workspace store (SQLite), and the scoped view every skill reads through.

``ArticleStore`` reads every stored article. ``ScopedArticles`` is the one access path a skill (the
skill tools, MCP, the HTTP chat) has to articles: search, reads and quote checks all go through it,
so a skill's ``allowed_sources`` and the ownership of reference notes hold on every path. A
``SourceScope`` says what is in scope: shared-corpus articles whose ``source_tag`` is allowed (all of
them when ``allowed_sources`` is None), plus the reference notes of the reading skill itself; another
skill's reference notes are never in scope.

Navigation pages are derived from articles, so the scope bounds them too (``ScopedArticles.page``):
a page whose articles are all in scope is shown whole; one with none in scope is hidden (never
listed, named on a hit or read); any other shows only what its in-scope articles alone give
(``wiki.Page.within``: their source entries and the steps linking only them; the intent, the solves
lists and unlinked steps, written from every source at once, are dropped), and is hidden too when its
name (title, id) holds a word that only out-of-scope articles hold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillrag.corpus.filters import SearchFilters
from skillrag.corpus.model import Article, ArticleHead, Section, check_id
from skillrag.errors import ArticleNotFound, SkillragError
from skillrag.workspace import Schema, Workspace
from skillrag.workspace.schema import statements

__all__ = ["ARTICLES_SQL", "SCHEMA", "ArticleStore", "ScopedArticles", "ScopedRetriever", "SourceScope", "reference_tag"]

ARTICLES_SQL = """
CREATE TABLE IF NOT EXISTS articles (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_path  TEXT NOT NULL,
    source_tag   TEXT NOT NULL DEFAULT '',
    source_root  TEXT NOT NULL,
    sections     TEXT NOT NULL DEFAULT '[]',
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
    changed      INTEGER NOT NULL DEFAULT 0,
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    url          TEXT,
    skill        TEXT,
    parent       TEXT,
    heading_path TEXT NOT NULL DEFAULT '[]',
    parent_offset INTEGER NOT NULL DEFAULT 0
);
"""

#: Columns added after the first release: ``(name, declaration)``; the baseline adds missing ones.
_ADDED_COLUMNS = (("url", "TEXT"), ("skill", "TEXT"), ("parent", "TEXT"),
                  ("heading_path", "TEXT NOT NULL DEFAULT '[]'"), ("parent_offset", "INTEGER NOT NULL DEFAULT 0"))

#: The corpus stamp (``ArticleStore.stamp``): one row, a random id for this store and a revision that
#: triggers on ``articles`` bump on every insert, delete and update that changes a column other than
#: the ``changed`` flag and ``updated_at`` (``refresh_stamp_trigger`` builds the update trigger from the
#: table's columns: a migration that adds a column to ``articles`` ends by calling it).
STAMP_SCHEMA = """
CREATE TABLE IF NOT EXISTS corpus_stamp (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 0
);
CREATE TRIGGER IF NOT EXISTS articles_stamp_insert AFTER INSERT ON articles
BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS articles_stamp_delete AFTER DELETE ON articles
BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END;
"""
#: Columns whose change alone leaves the corpus as search and the wiki see it.
_UNSTAMPED = frozenset({"changed", "updated_at"})

#: Active articles that were split into section-articles (search and the wiki use the sections).
SPLIT_DOCUMENTS = "SELECT parent FROM articles WHERE parent IS NOT NULL AND status = 'active'"


def _baseline(conn: sqlite3.Connection) -> None:
    """Version 1 of the corpus tables: ``articles`` (``ARTICLES_SQL``), with the columns a store from
    before them lacks (``url``, ``skill``, and the section columns ``parent``, ``heading_path``,
    ``parent_offset``), its ``parent`` index, and the corpus stamp (``STAMP_SCHEMA``). Runs inside the
    migration transaction (``skillrag.workspace.schema``)."""
    for stmt in statements(ARTICLES_SQL):
        conn.execute(stmt)
    have = {row[1] for row in conn.execute("PRAGMA table_info(articles)")}
    for name, decl in _ADDED_COLUMNS:
        if name not in have:
            conn.execute(f"ALTER TABLE articles ADD COLUMN {name} {decl}")
    conn.execute("CREATE INDEX IF NOT EXISTS articles_parent ON articles (parent)")
    for stmt in statements(STAMP_SCHEMA):
        conn.execute(stmt)
    conn.execute("INSERT OR IGNORE INTO corpus_stamp (id, store_id, revision) VALUES (1, ?, 0)",
                 (secrets.token_hex(8),))
    refresh_stamp_trigger(conn)


def refresh_stamp_trigger(conn: sqlite3.Connection) -> None:
    """The update trigger of the corpus stamp over the current columns of ``articles``: named after
    the columns it watches, so it is replaced exactly when a column was added. Call it inside a
    migration (it does not commit)."""
    cols = [row[1] for row in conn.execute("PRAGMA table_info(articles)") if row[1] not in _UNSTAMPED]
    name = "articles_stamp_update_" + hashlib.sha256(",".join(cols).encode()).hexdigest()[:8]
    have = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'articles_stamp_update_%'")}
    for old in have - {name}:
        conn.execute(f"DROP TRIGGER IF EXISTS {old}")
    if name not in have:
        changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in cols)
        conn.execute(f"CREATE TRIGGER {name} AFTER UPDATE ON articles WHEN {changed} "
                     "BEGIN UPDATE corpus_stamp SET revision = revision + 1 WHERE id = 1; END")


#: The corpus tables of the workspace store, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("corpus", (_baseline,))


def reference_tag(skill: str) -> str:
    """The ``source_tag`` of the reference notes of ``skill`` (``reference:<skill>``)."""
    return f"reference:{skill}"


def _row_to_article(row: sqlite3.Row) -> Article:
    """The ``Article`` of a ``SELECT *`` row of ``articles``: each field from the column of its name (the
    JSON columns ``sections`` and ``heading_path`` parsed, the ``changed`` flag as a bool)."""
    values = {name: row[name] for name in Article.model_fields}
    values["sections"] = [Section(**s) for s in json.loads(values["sections"])]
    values["heading_path"] = json.loads(values["heading_path"])
    values["changed"] = bool(values["changed"])
    return Article(**values)


class ArticleStore:
    """Read access to the stored articles of a workspace.

    Loads on demand from SQLite; ``get`` is a primary-key lookup (microseconds).
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        with workspace.connect(SCHEMA):
            pass

    def get(self, article_id: str, *, include_removed: bool = False) -> Article:
        """The article with this id. Raises ``InvalidIdError`` for a non-identifier and
        ``ArticleNotFound`` for an unknown (or removed) id."""
        check_id(article_id)
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT * FROM articles WHERE id = ?", (article_id,)).fetchone()
        if row is None or (row["status"] == "removed" and not include_removed):
            raise ArticleNotFound(f"no article with id {article_id!r}")
        return _row_to_article(row)

    def get_many(self, ids: Iterable[str]) -> dict[str, Article]:
        """``id -> Article`` for the active ids among ``ids`` (unknown ids are left out)."""
        ids = list(ids)
        out: dict[str, Article] = {}
        with self.workspace.connect() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                q = f"SELECT * FROM articles WHERE status='active' AND id IN ({','.join('?' * len(chunk))})"
                for row in conn.execute(q, chunk):
                    out[row["id"]] = _row_to_article(row)
        return out

    def list(self, *, include_removed: bool = False, split_documents: bool = True) -> list[Article]:
        """Every active article (and removed ones if asked), sorted by id.

        ``split_documents=False`` leaves out the documents that were split into section-articles
        (their sections stay): the units search and the navigation layer work on."""
        where = [] if include_removed else ["status='active'"]
        if not split_documents:
            where.append(f"id NOT IN ({SPLIT_DOCUMENTS})")
        q = "SELECT * FROM articles" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        with self.workspace.connect() as conn:
            return [_row_to_article(r) for r in conn.execute(q)]

    def heads(self, *, split_documents: bool = True) -> list[ArticleHead]:
        """Every active article without its body and sections (``ArticleHead``), sorted by id, as
        ``list`` selects them (``split_documents=False``: the units search and the navigation layer
        work on)."""
        where = "status='active'" + ("" if split_documents else f" AND id NOT IN ({SPLIT_DOCUMENTS})")
        q = ("SELECT id, title, content_hash, source_path, source_tag, parent, heading_path, parent_offset "
             f"FROM articles WHERE {where} ORDER BY id")
        with self.workspace.connect() as conn:
            return [ArticleHead(*r[:6], [] if r[6] == "[]" else json.loads(r[6]), r[7]) for r in conn.execute(q)]

    def sections_of(self, document_id: str) -> list[Article]:
        """The active section-articles split from ``document_id``, in document order (empty when the
        document was not split)."""
        check_id(document_id)
        with self.workspace.connect() as conn:
            rows = conn.execute("SELECT * FROM articles WHERE parent = ? AND status='active' ORDER BY parent_offset",
                                (document_id,)).fetchall()
        return [_row_to_article(r) for r in rows]

    def hashes(self) -> dict[str, str]:
        """``id -> content_hash`` of every active article that search and the navigation layer use:
        a split document is left out, since its sections cover every character of it."""
        with self.workspace.connect() as conn:
            return dict(conn.execute(
                f"SELECT id, content_hash FROM articles WHERE status='active' AND id NOT IN ({SPLIT_DOCUMENTS})"
            ).fetchall())

    def stamp(self) -> str:
        """``"<store id>:<revision>"``: changes whenever a stored article does (insert, delete, or an
        update of anything but the ``changed`` flag; SQLite triggers, so every writer counts), read in
        one row lookup. The search index records it to tell a no-op re-index without reading articles."""
        with self.workspace.connect() as conn:
            row = conn.execute("SELECT store_id, revision FROM corpus_stamp WHERE id = 1").fetchone()
        return f"{row[0]}:{row[1]}"

    def scoped(self, scope: SourceScope) -> ScopedArticles:
        """The view of this store that ``scope`` allows (see ``ScopedArticles``)."""
        return ScopedArticles(self, scope)

    def count(self) -> int:
        with self.workspace.connect() as conn:
            return conn.execute("SELECT COUNT(*) FROM articles WHERE status='active'").fetchone()[0]


class SourceScope(BaseModel):
    """What one reader may see. ``skill``: the reading skill (None: no skill, e.g. a plain chat);
    ``allowed_sources``: the shared-corpus ``source_tag`` values it may read (None = every one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: str | None = Field(None, description="The reading skill; its own reference notes are in scope.")
    allowed_sources: tuple[str, ...] | None = Field(
        None, description="Shared-corpus source tags in scope; None = all of them."
    )

    @classmethod
    def of(cls, skill: str | None, allowed_sources: Iterable[str] | None) -> SourceScope:
        """The scope of skill ``skill`` (None = no skill) whose settings allow ``allowed_sources``."""
        return cls(skill=skill or None, allowed_sources=tuple(allowed_sources) if allowed_sources is not None else None)

    def allows(self, article: Any) -> bool:
        """True when ``article`` (anything with ``source_tag`` and an optional ``skill``) is in scope.

        A reference note (``skill`` set) is in scope only for that skill, whatever ``allowed_sources`` says.
        """
        owner = getattr(article, "skill", None)
        if owner:
            return owner == self.skill
        return self.allowed_sources is None or article.source_tag in self.allowed_sources


class ScopedArticles:
    """The articles of ``store`` that ``scope`` allows: reads, quote checks and search all go through here.

    ``get`` raises ``ArticleNotFound`` for an article outside the scope, as for an unknown id;
    ``resolve`` splits ids into in-scope articles and out-of-scope ids; ``search`` runs a retriever
    restricted to the scope.
    """

    def __init__(self, store: ArticleStore, scope: SourceScope) -> None:
        self.store = store
        self.scope = scope
        self._tags: tuple[list[str] | None] | None = None  # source_tags(), computed on first use
        self._words: dict[str, frozenset[str]] = {}  # article id -> the words of its id, title and body
        self._listed: dict[str, bool] = {}  # page id -> whether this scope may list it (page_ids)

    def get(self, article_id: str) -> Article:
        """The article, if in scope. Raises ``InvalidIdError`` (not an id) or ``ArticleNotFound``
        (unknown, removed, or outside this scope; the message says which)."""
        art = self.store.get(article_id)
        if not self.scope.allows(art):
            raise ArticleNotFound(f"article {article_id!r} is outside this skill's allowed sources")
        return art

    def get_many(self, ids: Iterable[str]) -> dict[str, Article]:
        """``id -> Article`` for the active, in-scope ids among ``ids`` (others left out)."""
        return self.resolve(ids)[0]

    def list(self) -> list[Article]:
        """Every active in-scope article, sorted by id."""
        return [a for a in self.store.list() if self.scope.allows(a)]

    def resolve(self, ids: Iterable[str]) -> tuple[dict[str, Article], dict[str, Article]]:
        """``(in scope, outside the scope)``, each ``id -> Article``, for the active ids among ``ids``
        (unknown ids are in neither). A caller that must reject out-of-scope ids uses the second part
        to say so, never to quote from it."""
        found = self.store.get_many(ids)
        inside = {a: art for a, art in found.items() if self.scope.allows(art)}
        return inside, {a: art for a, art in found.items() if a not in inside}

    def source_tags(self) -> list[str] | None:
        """The ``source_tag`` values a search must be restricted to (None = no restriction needed).

        Computed from the store once per view (a view lives for one chat turn or one ``SkillTools``;
        an ingest after that makes the index stale, which search refuses anyway): every tag held by an
        in-scope article. None when every stored article is in scope (no filter, fastest). A tag shared
        by in- and out-of-scope articles is kept, and ``keep`` drops the out-of-scope hits.
        """
        if self._tags is None:
            self._tags = (self._source_tags(),)
        return self._tags[0]

    def _source_tags(self) -> list[str] | None:
        with self.store.workspace.connect() as conn:
            rows = conn.execute(
                "SELECT source_tag, skill FROM articles WHERE status='active' GROUP BY source_tag, skill"
            ).fetchall()
        allowed = [(r["source_tag"], self.scope.allows(_TagRow(r["source_tag"], r["skill"]))) for r in rows]
        if all(ok for _, ok in allowed):
            return None
        return sorted({tag for tag, ok in allowed if ok})

    def keep(self, hits: Sequence[Any]) -> list[Any]:
        """The hits (anything with ``article_id``) whose article is in scope, in order."""
        ids = [h.article_id for h in hits]
        inside = self.get_many(ids) if ids else {}
        return [h for h in hits if h.article_id in inside]

    # -- navigation pages: derived from articles, so bounded by the same scope ---------------------
    def page(self, page: Any) -> Any | None:
        """``page`` (a ``skillrag.wiki.Page``: ``article_ids()``, ``within(ids)``, ``id``, ``title``) as
        this scope may see it, or None when it may not be shown or listed at all (module doc):

        * every article it derives from in scope: ``page`` itself;
        * none in scope (an id the store does not hold counts as outside): None;
        * else ``page.within(in-scope ids)``, the parts attributable to in-scope articles alone, unless
          a word of its title or id occurs in an out-of-scope article (id, title or body) and in no
          in-scope one: the name would say what only those articles say, so the page is hidden (None).

        A page that cannot reduce itself (no ``within``) is hidden when it is not whole. Every surface
        that shows pages (``retrieve``'s page list, ``retrieve --page``, hits' ``page_ids``, the
        extractive harness's navigation) goes through here."""
        if self.source_tags() is None:  # every stored article is in scope
            return page
        ids = list(page.article_ids())
        inside, outside = self.resolve(ids)
        if len(inside) == len(ids):
            return page
        within = getattr(page, "within", None)
        reduced = within(frozenset(inside)) if inside and callable(within) else None
        if reduced is None:
            return None
        name = _words(f"{getattr(reduced, 'title', '')} {getattr(reduced, 'id', '')}")
        if name & (self._vocabulary(outside.values()) - self._vocabulary(inside.values())):
            return None
        return reduced

    def listed_page_ids(self, page_ids: Iterable[str], load: Callable[[str], Any] | None) -> tuple[str, ...]:
        """The ids among ``page_ids`` of pages this scope may list (``page`` is not None); ``load(id)``
        gives a page (``Retriever.load_page``). Without ``load``, or for a page it cannot load, an id
        is left out. Remembered per page id for the life of this view."""
        out = []
        for pid in page_ids:
            if pid not in self._listed:
                try:
                    self._listed[pid] = load is not None and self.page(load(pid)) is not None
                except (SkillragError, OSError):  # removed or unreadable since the build: not listed
                    self._listed[pid] = False
            if self._listed[pid]:
                out.append(pid)
        return tuple(out)

    def _vocabulary(self, articles: Iterable[Article]) -> frozenset[str]:
        words: set[str] = set()
        for art in articles:
            got = self._words.get(art.id)
            if got is None:
                got = self._words[art.id] = frozenset(_words(f"{art.id} {art.title} {art.body}"))
            words |= got
        return frozenset(words)

    def _prune_page_ids(self, hits: list[Any], retriever: Any) -> list[Any]:
        """``hits`` with their ``page_ids`` cut to the pages this scope may list."""
        load = getattr(retriever, "load_page", None)
        out = []
        for h in hits:
            ids = tuple(getattr(h, "page_ids", ()) or ())
            keep = self.listed_page_ids(ids, load if callable(load) else None) if ids else ids
            out.append(dataclasses.replace(h, page_ids=keep) if keep != ids and dataclasses.is_dataclass(h) else h)
        return out

    def search(self, retriever: Any, query: str, k: int, filters: SearchFilters | None = None) -> list[Any]:
        """``retriever.search(query, k, filters)`` restricted to this scope (``skillrag.search.Hit`` list).

        ``filters`` (a ``SearchFilters``) is narrowed to the in-scope source tags;
        hits outside the scope are dropped, and so are the pages on a hit's ``page_ids`` that this scope
        may not list (``page``). A scope that allows no stored tag returns ``[]``.
        """
        tags = self.source_tags()
        if tags is None:  # every stored article is in scope (so is every page)
            return list(retriever.search(query, k=k, filters=filters))
        if not tags:
            return []
        if filters is None:
            filters = SearchFilters(source_tags=tags, path_prefixes=None)
        else:
            narrowed = [t for t in (filters.source_tags or tags) if t in tags]
            if not narrowed:
                return []
            filters = filters.model_copy(update={"source_tags": narrowed})
        return self._prune_page_ids(self.keep(retriever.search(query, k=k, filters=filters)), retriever)

    def retriever(self, retriever: Any) -> ScopedRetriever:
        """``retriever`` seen through this scope: the same ``search(query, k, filters)``, in-scope hits only."""
        return ScopedRetriever(self, retriever)


class ScopedRetriever:
    """A retriever restricted to a scope (``ScopedArticles.retriever``), for code that takes a retriever."""

    def __init__(self, articles: ScopedArticles, retriever: Any) -> None:
        self.articles = articles
        self.inner = retriever

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[Any]:
        return self.articles.search(self.inner, query, k, filters)


_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> set[str]:
    """The words of ``text``, case-folded (letters and digits; ``_`` and punctuation split them)."""
    return set(_WORD.findall(text.casefold()))


class _TagRow:
    __slots__ = ("skill", "source_tag")

    def __init__(self, source_tag: str, skill: str | None) -> None:
        self.source_tag = source_tag
        self.skill = skill
