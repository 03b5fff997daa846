"""The navigation layer on disk: page files, ``index.md``, ``log.md`` and ``manifest.json``.

Layout under ``ws.wiki_dir``::

    pages/<page-id>.md   one page per file (see ``skillrag.wiki.page``)
    index.md             one line per page, grouped by kind (entity, aspect, topic), maintained by code:
                         a page change rewrites its one line, and every build ends by checking the
                         whole file against the page files (so a build killed between a page write and
                         its index line leaves nothing missing once it resumes)
    log.md               append-only: what each article did to which page, when, with which builder/model
    manifest.json        how the layer was built: library version, builder, variant, model, parameters,
                         the content hash of every article it covers

Every write is atomic (temp file + rename). ``wiki build --rebuild`` writes a new layer into
``.wiki.rebuild/`` beside ``wiki/`` and swaps it in (two renames) only once it is complete, so a
rebuild that fails (no API key, a killed process) leaves the existing layer as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillrag.errors import WorkspaceError
from skillrag.wiki.page import Page, check_page_id, parse_page, render_page
from skillrag.workspace import Workspace, aside_dir, atomic_write_text, swap_dir

__all__ = [
    "Layer",
    "Manifest",
    "in_scope",
    "index_line",
    "layer_fingerprint",
    "library_version",
    "load_pages",
    "now_iso",
    "recover_swap",
    "staging_dir",
    "swap_in",
]

INDEX_HEADER = "# Index\n\nOne line per page, maintained by `skillrag wiki build` (do not reorder by hand).\n"
_INDEX_SECTIONS = (
    ("entity", "Entity pages: one per product or topic, listing every article of it"),
    ("aspect", "Aspect pages: one aspect compared across sibling products"),
    ("topic", "Topic pages"),
)
LOG_HEADER = "# Log\n\nAppend-only record of what each article did to which page.\n\n"
_INDEX_LINE = re.compile(r"^- \[(?P<title>.*)\]\(pages/(?P<id>[a-z0-9-]+)\.md\)(?P<rest>.*)$")
_INDEX_KIND = re.compile(r"^ — (entity|aspect|topic)\b")


def library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skillrag")
    except PackageNotFoundError:  # pragma: no cover - not installed as a distribution
        return "0+unknown"


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Manifest(BaseModel):
    """How the layer was built (``wiki/manifest.json``)."""

    model_config = ConfigDict(extra="forbid")

    library_version: str
    builder: str
    variant: str
    model: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    articles: dict[str, str] = Field(default_factory=dict, description="article id -> content hash covered.")
    built_at: str = ""
    scope: list[str] | None = Field(
        None, description="Article id prefixes the layer was built over (`wiki build --builder agent --scope`); "
                          "None = every article.")

    def in_scope(self, article_id: str) -> bool:
        """Whether the layer is meant to cover ``article_id`` (every article when it has no scope)."""
        return in_scope(article_id, self.scope)


def in_scope(article_id: str, scope: Sequence[str] | None) -> bool:
    """Whether ``article_id`` starts with one of the ``scope`` prefixes (always, when ``scope`` is None)."""
    return scope is None or article_id.startswith(tuple(scope))


def index_line(page: Page) -> str:
    """The one `index.md` line of ``page``: title link, kind, number of sources and intent (cut)."""
    intent = page.intent or (page.solves[0] if page.solves else "")
    if len(intent) > 140:
        intent = intent[:140].rsplit(" ", 1)[0] + " …"
    title = page.title.replace("[", "(").replace("]", ")")
    return (f"- [{title}](pages/{page.id}.md) — {page.kind} — {len(page.sources)} sources"
            + (f" — {intent}" if intent else ""))


def _index_text(lines: dict[str, str]) -> str:
    """``index.md`` from ``page id -> line``: one section per kind, lines sorted by page id."""
    by_kind: dict[str, list[str]] = {k: [] for k, _ in _INDEX_SECTIONS}
    for pid in sorted(lines):
        m = _INDEX_LINE.match(lines[pid])
        k = _INDEX_KIND.match(m.group("rest")) if m else None
        by_kind[k.group(1) if k else "topic"].append(lines[pid])
    out = [INDEX_HEADER]
    for kind, heading in _INDEX_SECTIONS:
        if by_kind[kind]:
            out.append(f"\n## {heading}\n\n" + "".join(ln + "\n" for ln in by_kind[kind]))
    return "".join(out)


def staging_dir(ws: Workspace) -> Path:
    """Where ``wiki build --rebuild`` writes the new layer before it is swapped in."""
    return ws.wiki_dir.parent / f".{ws.wiki_dir.name}.rebuild"


def swap_in(ws: Workspace, staging: Path) -> None:
    """Make the finished layer in ``staging`` the workspace's layer: the live folder is renamed
    aside, ``staging`` renamed into its place, and the old one removed (``workspace.swap_dir``;
    ``recover_swap`` finishes a swap that was interrupted between the renames)."""
    swap_dir(staging, ws.wiki_dir)


def recover_swap(ws: Workspace) -> bool:
    """Finish a swap interrupted between its two renames (no live layer, the old one set aside):
    the finished rebuild goes live, else the old layer comes back. True when something was done."""
    live, old, staging = ws.wiki_dir, aside_dir(ws.wiki_dir), staging_dir(ws)
    if live.exists() or not old.exists():
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)
        return False
    if staging.exists() and Layer(ws, root=staging).fingerprint() is not None:
        os.replace(staging, live)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(old, live)
    return True


class Layer:
    """Read and write one workspace's navigation layer (``root``: another folder with the same
    layout, e.g. the staging folder of a rebuild).

    ``Layer(ws)`` never creates anything until something is written.
    """

    def __init__(self, ws: Workspace, root: Path | None = None) -> None:
        self.ws = ws
        self.root = root if root is not None else ws.wiki_dir
        self.pages_dir = self.root / "pages"
        self.index_path = self.root / "index.md"
        self.log_path = self.root / "log.md"
        self.manifest_path = self.root / "manifest.json"

    # -- pages --------------------------------------------------------------------------------

    def page_path(self, page_id: str) -> Path:
        return self.pages_dir / f"{check_page_id(page_id)}.md"

    def page_files(self) -> list[Path]:
        if not self.pages_dir.is_dir():
            return []
        return sorted(self.pages_dir.glob("*.md"))

    def exists(self) -> bool:
        return bool(self.page_files())

    def read(self, page_id: str) -> Page:
        """The page with this id; ``WorkspaceError`` if it is missing or malformed."""
        path = self.page_path(page_id)
        if not path.is_file():
            raise WorkspaceError(f"no wiki page {page_id!r} (see `skillrag wiki pages`)")
        return self._parse(path)

    def _parse(self, path: Path) -> Page:
        page = parse_page(path.read_text(encoding="utf-8"), where=str(path))
        if page.id != path.stem:
            raise WorkspaceError(f"{path}: front matter id {page.id!r} does not match the file name")
        return page

    def pages(self, *, skip_bad: bool = False) -> list[Page]:
        """Every page sorted by id. A malformed page raises ``WorkspaceError`` unless ``skip_bad``."""
        out = []
        for path in self.page_files():
            try:
                out.append(self._parse(path))
            except WorkspaceError:
                if not skip_bad:
                    raise
        return out

    def bad_pages(self) -> list[str]:
        """``"path: reason"`` for each page file that does not parse."""
        bad = []
        for path in self.page_files():
            try:
                self._parse(path)
            except WorkspaceError as exc:
                bad.append(str(exc))
        return bad

    def write(self, page: Page) -> None:
        """Write one page file and update its one line in ``index.md``."""
        atomic_write_text(self.page_path(page.id), render_page(page))
        self.set_index_lines([page], [])

    def write_many(self, pages: Iterable[Page], removed: Iterable[str] = ()) -> None:
        """Write several page files, delete ``removed`` ones, then update ``index.md`` once."""
        pages, removed = list(pages), list(removed)
        for page in pages:
            atomic_write_text(self.page_path(page.id), render_page(page))
        for pid in removed:
            self.page_path(pid).unlink(missing_ok=True)
        self.set_index_lines(pages, removed)

    def delete(self, page_id: str) -> None:
        """Remove one page file and its index line."""
        self.page_path(page_id).unlink(missing_ok=True)
        self.set_index_lines([], [page_id])

    # -- index.md ------------------------------------------------------------------------------

    def index_entries(self) -> dict[str, str]:
        """``page id -> index line`` as the file holds them."""
        if not self.index_path.is_file():
            return {}
        out: dict[str, str] = {}
        for ln in self.index_path.read_text(encoding="utf-8").splitlines():
            m = _INDEX_LINE.match(ln)
            if m:
                out[m.group("id")] = ln
        return out

    def set_index_lines(self, pages: Iterable[Page], removed: Iterable[str]) -> None:
        """Replace the lines of ``pages`` and drop those of ``removed``; other lines stay as they are."""
        entries = self.index_entries()
        for pid in removed:
            entries.pop(pid, None)
        for page in pages:
            entries[page.id] = index_line(page)
        atomic_write_text(self.index_path, _index_text(entries))

    def sync_index(self, pages: Iterable[Page] | None = None) -> bool:
        """Make ``index.md`` hold exactly one line per page file, as the pages say (``pages``: the
        layer's pages when the caller has just read them); True when the file had to be rewritten
        (e.g. a build killed between a page write and its index line)."""
        pages = self.pages(skip_bad=True) if pages is None else pages
        text = _index_text({p.id: index_line(p) for p in pages})
        if self.index_path.is_file() and self.index_path.read_text(encoding="utf-8") == text:
            return False
        atomic_write_text(self.index_path, text)
        return True

    # -- log.md --------------------------------------------------------------------------------

    def log(self, lines: Iterable[str]) -> None:
        """Append lines (each prefixed with a UTC timestamp) to ``log.md``; never rewrites it."""
        lines = list(lines)
        if not lines:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        new = not self.log_path.exists()
        stamp = now_iso()
        with self.log_path.open("a", encoding="utf-8") as fh:
            if new:
                fh.write(LOG_HEADER)
            for ln in lines:
                fh.write(f"- {stamp} {ln}\n")

    # -- manifest ------------------------------------------------------------------------------

    def manifest(self) -> Manifest | None:
        if not self.manifest_path.is_file():
            return None
        try:
            return Manifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise WorkspaceError(f"{self.manifest_path}: damaged manifest ({str(exc).splitlines()[0]})") from None

    def write_manifest(self, manifest: Manifest) -> None:
        atomic_write_text(self.manifest_path, manifest.model_dump_json(indent=2) + "\n")

    def clear(self) -> None:
        """Remove every page, the index and the manifest (``--rebuild``); the log is kept."""
        for path in self.page_files():
            path.unlink(missing_ok=True)  # another build may have removed it meanwhile
        self.index_path.unlink(missing_ok=True)
        self.manifest_path.unlink(missing_ok=True)

    def fingerprint(self) -> str | None:
        """sha256 hex of the page files; ``None`` when there is no finished layer: no pages, or pages
        whose build never completed (no manifest, or one with no article recorded: an interrupted
        first build), so no search index is built over half a layer."""
        files = self.page_files()
        if not files:
            return None
        man = self.manifest()
        if man is None or not man.articles:
            return None
        h = hashlib.sha256()
        for path in files:
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        return h.hexdigest()


def load_pages(ws: Workspace) -> list[Page]:
    """Every page of the workspace's layer, sorted by id (empty when there is no layer).

    Raises ``WorkspaceError`` naming the file when a page is malformed.
    """
    return Layer(ws).pages()


def layer_fingerprint(ws: Workspace) -> str | None:
    """sha256 hex of the page files (names and bytes, sorted); ``None`` when there is no finished
    layer (no pages, or an interrupted first build)."""
    return Layer(ws).fingerprint()


def manifest_json(manifest: Manifest) -> str:
    return json.dumps(manifest.model_dump(), indent=2)
