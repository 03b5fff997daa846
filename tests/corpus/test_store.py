"""Scoped article access (``SourceScope`` / ``ScopedArticles``) and a skill's reference notes
(``ingest(..., skill=NAME)``): real SQLite store, real Markdown files."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrag.corpus import ArticleStore, SourceScope, ingest, reference_tag
from skillrag.errors import ArticleNotFound, MalformedSourceError
from skillrag.workspace import Workspace

NOTE = """---
title: Related-party loans
url: https://regulator.example/loans/related-party
---
# Related-party loans

A loan from a private company to a shareholder is treated as a deemed distribution unless it is a
complying loan with a written agreement.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.init(tmp_path / "ws")
    write(tmp_path / "kb" / "fees.md", "# Fees\n\nA wire transfer costs 25 dollars.\n")
    write(tmp_path / "policies" / "returns.md", "# Returns\n\nReturns are accepted within 30 days.\n")
    ingest(ws, [tmp_path / "kb"])
    ingest(ws, [tmp_path / "policies"])
    write(tmp_path / "research" / "loans.md", NOTE)
    write(tmp_path / "research" / "skill.yaml", "k: 4\n")  # not a note: left alone
    write(tmp_path / "retire" / "loans.md", NOTE.replace("deemed distribution", "pension matter"))
    ingest(ws, [tmp_path / "research"], skill="research")
    ingest(ws, [tmp_path / "retire"], skill="retire")
    return ws


def test_reference_notes_are_owned_tagged_and_keep_their_url(ws):
    store = ArticleStore(ws)
    note = store.get("research:loans")
    assert note.skill == "research" and note.source_type == "reference"
    assert note.source_tag == reference_tag("research") == "reference:research"
    assert note.url == "https://regulator.example/loans/related-party"
    assert note.body.startswith("# Related-party loans")  # front matter is not part of the quotable body
    assert store.get("retire:loans").skill == "retire"  # the same file name in two skills: two ids
    plain = store.get("fees")
    assert plain.skill is None and plain.url is None and plain.source_type == "corpus"


def test_a_skill_sees_its_own_notes_and_never_another_skills(ws):
    store = ArticleStore(ws)
    research = store.scoped(SourceScope(skill="research"))
    assert research.get("research:loans").skill == "research"
    with pytest.raises(ArticleNotFound, match="outside"):
        research.get("retire:loans")
    inside, outside = research.resolve(["research:loans", "retire:loans", "fees", "nope"])
    assert set(inside) == {"research:loans", "fees"} and set(outside) == {"retire:loans"}
    # no skill at all (a plain chat): the shared corpus only
    plain = store.scoped(SourceScope())
    assert set(plain.get_many(["research:loans", "retire:loans", "fees", "returns"])) == {"fees", "returns"}


def test_allowed_sources_narrow_the_corpus_but_not_the_skills_own_notes(ws):
    scoped = ArticleStore(ws).scoped(SourceScope(skill="research", allowed_sources=("policies",)))
    assert set(scoped.get_many(["fees", "returns", "research:loans", "retire:loans"])) == {"returns",
                                                                                          "research:loans"}
    assert scoped.source_tags() == ["policies", "reference:research"]
    # a skill cannot widen itself to another skill's notes by listing their tag
    sneaky = ArticleStore(ws).scoped(SourceScope(skill="research", allowed_sources=("reference:retire",)))
    with pytest.raises(ArticleNotFound):
        sneaky.get("retire:loans")


def test_source_tags_is_none_only_when_everything_is_in_scope(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    write(tmp_path / "kb" / "a.md", "# A\n\ntext a\n")
    ingest(ws, [tmp_path / "kb"])
    assert ArticleStore(ws).scoped(SourceScope()).source_tags() is None
    write(tmp_path / "notes" / "n.md", "# N\n\nnote\n")
    ingest(ws, [tmp_path / "notes"], skill="s1")
    assert ArticleStore(ws).scoped(SourceScope(skill="s1")).source_tags() is None
    assert ArticleStore(ws).scoped(SourceScope(skill="s2")).source_tags() == ["kb"]


class _Hit:
    def __init__(self, article_id: str) -> None:
        self.article_id = article_id


class _Retriever:
    """Returns every stored id whatever the filter says, to show ``search`` drops out-of-scope hits itself."""

    def __init__(self, ids: list[str]) -> None:
        self.ids, self.filters = ids, []

    def search(self, query, k=10, filters=None):
        self.filters.append(filters)
        return [_Hit(i) for i in self.ids][:k]


def test_search_filters_by_scope_and_drops_what_the_filter_let_through(ws):
    retr = _Retriever(["retire:loans", "research:loans", "fees", "returns"])
    scoped = ArticleStore(ws).scoped(SourceScope(skill="research", allowed_sources=("kb",)))
    hits = scoped.search(retr, "loan", 10)
    assert [h.article_id for h in hits] == ["research:loans", "fees"]
    assert retr.filters[-1].source_tags == ["kb", "reference:research"]
    nothing = ArticleStore(ws).scoped(SourceScope(allowed_sources=("no-such-tag",)))
    assert nothing.search(retr, "loan", 10) == []


def test_reference_reingest_tracks_url_changes_and_removed_notes(ws, tmp_path):
    write(tmp_path / "research" / "loans.md", NOTE.replace("related-party\n", "related-party-v2\n"))
    rep = ingest(ws, [tmp_path / "research"], skill="research")
    assert rep.changed == ["research:loans"]  # same body, new url: not "unchanged"
    assert ArticleStore(ws).get("research:loans").url.endswith("related-party-v2")
    (tmp_path / "research" / "loans.md").unlink()
    write(tmp_path / "research" / "other.md", "# Other\n\nAnother note.\n")
    rep = ingest(ws, [tmp_path / "research"], skill="research")
    assert rep.removed == ["research:loans"] and rep.added == ["research:other"]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "/relative/path", "ftp://x.example/a", "https://", "a b"])
def test_a_note_url_must_be_absolute_http(ws, tmp_path, url):
    write(tmp_path / "bad" / "n.md", f"---\nurl: {url}\n---\n# N\n\nbody\n")
    with pytest.raises(MalformedSourceError, match="not an absolute http"):
        ingest(ws, [tmp_path / "bad"], skill="research")


def test_an_old_store_gains_the_new_columns(tmp_path):
    import sqlite3

    ws = Workspace.init(tmp_path / "ws")
    db = ws.state_dir / "store.sqlite"
    with sqlite3.connect(db) as conn:  # the table as the first release created it
        conn.executescript("""
            DROP TABLE IF EXISTS articles;
            CREATE TABLE articles (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
              content_hash TEXT NOT NULL, source_path TEXT NOT NULL, source_tag TEXT NOT NULL DEFAULT '',
              source_root TEXT NOT NULL, sections TEXT NOT NULL DEFAULT '[]',
              status TEXT NOT NULL DEFAULT 'active', changed INTEGER NOT NULL DEFAULT 0,
              updated_at TEXT NOT NULL DEFAULT '');
            INSERT INTO articles (id, title, body, content_hash, source_path, source_root)
              VALUES ('old', 'Old', 'old body', 'h', 'old.md', '/x');
        """)
    art = ArticleStore(ws).get("old")
    assert art.url is None and art.skill is None


def test_the_stamp_changes_with_every_article_write_and_only_then(ws, tmp_path):
    """``ArticleStore.stamp``: an ingest that changes nothing (it still clears the ``changed`` flags)
    keeps it; a changed, added or removed article, or a write by any other path (SQL), moves it."""
    store = ArticleStore(ws)
    first = store.stamp()
    ingest(ws, [tmp_path / "kb"])
    assert store.stamp() == first
    write(tmp_path / "kb" / "fees.md", "# Fees\n\nA wire transfer costs 30 dollars.\n")
    ingest(ws, [tmp_path / "kb"])
    changed = store.stamp()
    assert changed != first
    write(tmp_path / "kb" / "limits.md", "# Limits\n\nThe daily limit is 500 dollars.\n")
    ingest(ws, [tmp_path / "kb"])
    added = store.stamp()
    assert added not in (first, changed)
    with ws.connect() as conn, conn:
        conn.execute("UPDATE articles SET title = 'Wire fees' WHERE id = 'fees'")
    assert store.stamp() != added


def test_an_old_store_gains_the_stamp_and_its_triggers(tmp_path):
    import sqlite3

    ws = Workspace.init(tmp_path / "ws")
    with sqlite3.connect(ws.state_dir / "store.sqlite") as conn:  # a store from before the stamp
        conn.executescript("""
            DROP TABLE IF EXISTS articles;
            CREATE TABLE articles (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
              content_hash TEXT NOT NULL, source_path TEXT NOT NULL, source_tag TEXT NOT NULL DEFAULT '',
              source_root TEXT NOT NULL, sections TEXT NOT NULL DEFAULT '[]',
              status TEXT NOT NULL DEFAULT 'active', changed INTEGER NOT NULL DEFAULT 0,
              updated_at TEXT NOT NULL DEFAULT '');
            INSERT INTO articles (id, title, body, content_hash, source_path, source_root)
              VALUES ('old', 'Old', 'old body', 'h', 'old.md', '/x');
        """)
    store = ArticleStore(ws)
    before = store.stamp()
    with ws.connect() as conn, conn:
        conn.execute("UPDATE articles SET changed = 1, updated_at = 'now' WHERE id = 'old'")
    assert store.stamp() == before
    with ws.connect() as conn, conn:
        conn.execute("UPDATE articles SET url = 'https://x.example/old' WHERE id = 'old'")  # an added column
    assert store.stamp() != before
