"""Ingest source files into the content layer, idempotently and atomically.

Files are parsed first; only if every file parses (or ``skip_bad`` is set) is anything written,
and then in one SQLite transaction. A file is rejected when it is not text (NUL bytes or other binary
content) or an article in it is larger than ``corpus.max_article_bytes``. A long document is stored
whole and also as section-articles split at its headings (``skillrag.corpus.split``). Compared with what is stored, each article is *added*,
*changed* (content hash differs: flagged so dependants rebuild), or *unchanged* (not touched).
Articles previously ingested from the same root and now absent are marked *removed*. An id already
taken by an active article from another source file that still exists is rejected, not overwritten. A symbolic link in a source folder whose target lies outside
that folder is a bad file (``loaders.link_outside``): it is never read.

With ``skill=NAME`` the files are that skill's ``references/`` bundle (Markdown notes only): each note
is stored as a *reference* owned by the skill (``Article.skill``), with id ``NAME:<id>`` and source tag
``reference:NAME``, so only that skill's scope (``corpus.SourceScope``) ever sees it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrag.corpus.loaders import iter_source_files, link_outside, loader_for
from skillrag.corpus.loaders._common import binary_reason
from skillrag.corpus.model import ID_PATTERN, SourceArticle, content_hash
from skillrag.corpus.sections import parse_sections
from skillrag.corpus.split import split_document
from skillrag.corpus.store import SCHEMA, reference_tag
from skillrag.errors import EmptyInputError, MalformedSourceError, MalformedSourcesError
from skillrag.workspace import Workspace
from skillrag.workspace.config import CorpusSettings

__all__ = ["IngestReport", "ingest"]


@dataclass
class IngestReport:
    """Counts of one ingest, and the ids in each class."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "path: reason"
    split: dict[str, int] = field(default_factory=dict)  # document id -> section-articles it was split into

    def counts(self) -> dict[str, int]:
        return {k: len(getattr(self, k)) for k in ("added", "changed", "unchanged", "removed", "rejected")}


_REFERENCE_SUFFIXES = (".md", ".markdown")


def _as_reference(a: SourceArticle, skill: str, f: Path) -> SourceArticle:
    """``a`` as a reference note of ``skill``: id ``skill:<id>``, tag ``reference:<skill>``."""
    aid = f"{skill}:{a.id}"
    if not ID_PATTERN.fullmatch(aid):
        raise MalformedSourceError(f, f"reference id {aid!r} is not a plain identifier (at most 200 characters)")
    return a.model_copy(update={"id": aid, "source_tag": reference_tag(skill)})


#: Formats that hold one article per file: the file size bounds the article, checked before reading.
_ONE_ARTICLE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm"})


def _too_large(size: int, limit: int, what: str) -> str:
    return (f"{what} is {size / 1e6:.1f} MB, over the per-article limit of {limit:,} bytes; raise "
            "corpus.max_article_bytes in skillrag.yaml to ingest it")


def _check_article(f: Path, a: SourceArticle, settings: CorpusSettings) -> None:
    """Raise ``MalformedSourceError`` naming ``f`` when ``a`` is empty, binary or too large."""
    if not a.body.strip():
        raise MalformedSourceError(f, f"article {a.id!r} has no text")
    why = binary_reason(a.body)
    if why:
        raise MalformedSourceError(f, why)
    size = len(a.body.encode("utf-8"))
    if size > settings.max_article_bytes:
        raise MalformedSourceError(f, _too_large(size, settings.max_article_bytes, f"article {a.id!r}"))


def _collect(
    paths: Sequence[Path], tag: str | None, skip_bad: bool, report: IngestReport,
    on_file: Callable[[Path], None] | None, settings: CorpusSettings, skill: str | None,
    bad: list[MalformedSourceError], skip: Sequence[Path] = (),
) -> dict[str, tuple[SourceArticle, str]]:
    """Parse every file: ``id -> (article, source_root)``, split documents followed by their
    section-articles. A bad file goes to ``report.rejected`` with skip_bad, else to ``bad``."""
    found: dict[str, tuple[SourceArticle, str]] = {}
    for p in paths:
        root_key = str(p.resolve())
        for f, root in iter_source_files(p, skip):
            if skill is not None and f.suffix.lower() not in _REFERENCE_SUFFIXES:
                continue  # a references/ bundle is Markdown notes; other files there are not articles
            loader = loader_for(f)
            try:
                if loader is None:
                    raise MalformedSourceError(f, "no loader for this file type")
                if (why := link_outside(f, root)) is not None and p.is_dir():
                    raise MalformedSourceError(f, why)  # a named file is read as named; a folder's stay inside
                if f.suffix.lower() in _ONE_ARTICLE_SUFFIXES and f.stat().st_size > settings.max_article_bytes:
                    raise MalformedSourceError(f, _too_large(f.stat().st_size, settings.max_article_bytes, "the file"))
                arts = []
                for a in loader(f, root, tag if tag is not None else root.resolve().name):
                    if skill is not None:
                        a = _as_reference(a, skill, f)
                    _check_article(f, a, settings)
                    arts.append(a)
                    arts.extend(split_document(a, split_chars=settings.split_chars,
                                               split_headings=settings.split_headings))
                seen: set[str] = set()
                for a in arts:
                    if a.id in found:
                        prev = found[a.id][0].source_path
                        raise MalformedSourceError(f, f"duplicate id {a.id!r} (also in {prev})")
                    if a.id in seen:  # found by a new user: a list with one id twice kept the last silently
                        raise MalformedSourceError(f, f"duplicate id {a.id!r} (twice in this file)")
                    seen.add(a.id)
            except Exception as exc:  # noqa: BLE001 - a loader or splitter bug never escapes as a traceback
                if not isinstance(exc, MalformedSourceError):
                    exc = MalformedSourceError(f, f"could not be read ({type(exc).__name__}: {exc}); "
                                                  "please report this file")
                if skip_bad:
                    report.rejected.append(str(exc))
                else:
                    bad.append(exc)  # keep parsing: the one error names every bad file
                arts = []
            for a in arts:
                found[a.id] = (a, root_key)
            if on_file:
                on_file(f)
    return found


def _source_file(root: str, source_path: str) -> Path:
    """The file an article came from: ``root`` itself for a single-file ingest, else ``root/source_path``."""
    r = Path(root)
    return r if r.suffix and not r.is_dir() else r / source_path


def _clash(old: Any, new: SourceArticle, root: str) -> MalformedSourceError | None:
    """An error when ``new`` reuses the id of an active article from another source file that still
    exists (a moved or renamed source folder is not a clash: its old file is gone)."""
    if old is None or old["status"] != "active" or old["source_root"] == root:
        return None
    old_file, new_file = _source_file(old["source_root"], old["source_path"]), _source_file(root, new.source_path)
    if not old_file.exists() or old_file.resolve() == new_file.resolve():
        return None
    return MalformedSourceError(
        new_file,
        f"duplicate id {new.id!r} (already ingested from {old_file}; "
        "rename one of them, or move the old source away if this replaces it)",
    )


def count_files(paths: Sequence[Path], skip: Sequence[Path] = ()) -> int:
    """How many readable source files ``paths`` hold (for a progress bar's total), leaving out the
    folders in ``skip`` (``Workspace.owned_dirs``) as ``ingest`` does."""
    return sum(1 for p in paths for _ in iter_source_files(p, skip))


def ingest(
    workspace: Workspace,
    paths: Sequence[str | Path],
    *,
    tag: str | None = None,
    skip_bad: bool = False,
    on_file: Callable[[Path], None] | None = None,
    skill: str | None = None,
    split_sections: bool | None = None,
) -> IngestReport:
    """Ingest ``paths`` (files or folders) into ``workspace``.

    ``skill``: ingest them as that skill's reference notes (module doc; ``tag`` is then ignored).
    Documents longer than ``corpus.split_chars`` characters (every document with headings when
    ``split_sections`` is true; default ``corpus.split_headings``) are stored whole and as
    section-articles (``skillrag.corpus.split``). The workspace's own folders (``owned_dirs``: wiki,
    skills, runs, state) are never read as sources, so a workspace kept inside its documents' folder
    does not ingest its own pages and manuals. Raises ``MalformedSourceError`` naming the
    unparseable, binary or over-size file, or an id another source already holds (nothing written;
    ``MalformedSourcesError``, with the count and the first few, when there are several) unless
    ``skip_bad``, in which case such files are listed in ``report.rejected``. Raises ``EmptyInputError`` when ``paths`` hold no
    readable file.
    """
    paths = [Path(p) for p in paths]
    report = IngestReport()
    settings = workspace.config.corpus
    if split_sections is not None:
        settings = settings.model_copy(update={"split_headings": split_sections})
    bad: list[MalformedSourceError] = []  # without skip_bad: every bad file, raised together, nothing written
    found = _collect(paths, tag, skip_bad, report, on_file, settings, skill, bad, workspace.owned_dirs)
    for a, _root in found.values():
        if a.parent is not None:
            report.split[a.parent] = report.split.get(a.parent, 0) + 1
    if bad and not found:
        raise MalformedSourcesError.of(bad)
    if not found and not report.rejected:
        raise EmptyInputError(f"no readable source files in {', '.join(map(str, paths))} (.json .jsonl .md .txt .html)")
    roots = {str(p.resolve()) for p in paths}
    with workspace.connect(SCHEMA) as conn, conn:  # one transaction: all or nothing
        conn.execute("UPDATE articles SET changed = 0 WHERE changed = 1")
        stored = {
            r["id"]: r
            for r in conn.execute(
                "SELECT id, content_hash, title, status, source_root, source_path, url, skill, parent,"
                " heading_path, parent_offset FROM articles"
            )
        }
        for aid, (a, root) in sorted(found.items()):
            clash = _clash(stored.get(aid), a, root)
            if clash is not None:
                if skip_bad:
                    report.rejected.append(str(clash))
                    del found[aid]
                else:
                    bad.append(clash)
        if bad:  # inside the transaction: rolls back, nothing written
            raise MalformedSourcesError.of(bad)
        for aid, (a, root) in sorted(found.items()):
            h = content_hash(a.body)
            sections = json.dumps([s.model_dump() for s in parse_sections(a.body)])
            old = stored.get(aid)
            place = (a.parent, json.dumps(list(a.heading_path)), a.parent_offset)
            if (old is not None and old["content_hash"] == h and old["title"] == a.title
                    and old["status"] == "active" and old["url"] == a.url and old["skill"] == skill):
                if (old["parent"], old["heading_path"], old["parent_offset"]) != place:
                    # same text, moved within its document (an earlier section changed): not a change
                    conn.execute("UPDATE articles SET parent=?, heading_path=?, parent_offset=? WHERE id=?",
                                 (*place, aid))
                report.unchanged.append(aid)
                continue
            conn.execute(
                "INSERT INTO articles (id, title, body, content_hash, source_path, source_tag, source_root,"
                " sections, status, changed, url, skill, parent, heading_path, parent_offset)"
                " VALUES (?,?,?,?,?,?,?,?, 'active', ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET title=excluded.title, body=excluded.body,"
                " content_hash=excluded.content_hash, source_path=excluded.source_path,"
                " source_tag=excluded.source_tag, source_root=excluded.source_root, sections=excluded.sections,"
                " status='active', changed=excluded.changed, url=excluded.url, skill=excluded.skill,"
                " parent=excluded.parent, heading_path=excluded.heading_path, parent_offset=excluded.parent_offset,"
                " updated_at=strftime('%Y-%m-%dT%H:%M:%fZ','now')",
                (aid, a.title, a.body, h, a.source_path, a.source_tag, root, sections, int(old is not None),
                 a.url, skill, *place),
            )
            (report.changed if old is not None else report.added).append(aid)
        for aid, old in stored.items():
            if old["source_root"] in roots and aid not in found and old["status"] == "active":
                conn.execute(
                    "UPDATE articles SET status='removed', changed=1,"
                    " updated_at=strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id=?",
                    (aid,),
                )
                report.removed.append(aid)
    return report
