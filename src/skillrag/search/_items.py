"""What gets indexed: *items* (articles for ``direct``, navigation pages for ``wiki``), each with a
lexical text for BM25 and passages for dense retrieval.

Passage pooling: an item's dense text (title + body) is cut into windows of ``passage_words`` words
that overlap by ``passage_overlap`` words, each prefixed with the title; an item's dense score is its
best passage's cosine. MiniLM reads at most 256 tokens, so without windows the end of a long article
would be invisible to dense retrieval.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skillrag import wiki
from skillrag.corpus import ArticleStore
from skillrag.errors import EmptyInputError, IndexStateError, UserError
from skillrag.workspace import Workspace, atomic_write_text

__all__ = ["FACETS_VERSION", "Item", "PageSource", "WikiPageSource", "collect_changes", "collect_items", "common_facets", "corpus_facets",
           "passages", "preview_of", "text_hash"]

_WS = re.compile(r"\s+")
PREVIEW_CHARS = 200
#: The version of the facets the direct index records on its items (``corpus_facets``); part of the index
#: parameters, so an index built before (or with another rule) is refused as stale, never read without them.
FACETS_VERSION = 1


def preview_of(body: str, chars: int = PREVIEW_CHARS) -> str:
    """The first ``chars`` characters of ``body`` with whitespace runs collapsed (… when cut)."""
    flat = _WS.sub(" ", body).strip()
    return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Item:
    """One indexed unit. ``hash`` covers everything that affects its index entry."""

    id: str
    title: str
    text: str
    hash: str
    source_tag: str = ""
    source_path: str = ""
    cites: tuple[str, ...] = field(default=())
    content_hash: str = ""
    preview: str = ""
    category: str = ""
    customer_type: str = ""

    def record(self) -> dict[str, Any]:
        return {"id": self.id, "hash": self.hash, "title": self.title, "source_tag": self.source_tag,
                "source_path": self.source_path, "cites": list(self.cites), "preview": self.preview,
                "category": self.category, "customer_type": self.customer_type}


def corpus_facets(articles: Sequence[Any], memo: Path | None = None) -> dict[str, tuple[str, str]]:
    """``{article id: (category, customer type)}`` of ``articles`` (the units the direct index holds:
    ``ArticleStore.list(split_documents=False)``, or their ``heads``: bodies are not read), by the navigation layer's family
    rule (``skillrag.wiki.families.article_facets``, imported here only: it is the one rule for every
    backend). ``memo``: a JSON file that keeps the last result with the digest of what it was computed
    from (every article's id, title, parent, heading path and offset; ``FACETS_VERSION``): when the
    digest still holds (articles edited, none added, removed or retitled) the result is read from it,
    else computed and written there. A damaged or missing memo is only recomputed."""
    from skillrag.wiki.families import article_facets

    key = None
    if memo is not None:
        h = hashlib.sha256(f"facets {FACETS_VERSION}\n".encode())
        for a in sorted(articles, key=lambda a: a.id):
            fields = (a.id, a.title, a.parent or "", "\x1f".join(a.heading_path), str(a.parent_offset))
            h.update("\x00".join(fields).encode() + b"\n")
        key = h.hexdigest()
        try:
            kept = json.loads(memo.read_text(encoding="utf-8"))
            if kept.get("input") == key:
                return {a: (f[0], f[1]) for a, f in kept["facets"].items()}
        except (OSError, ValueError, AttributeError, KeyError, IndexError, TypeError):
            pass
    out = {a: (f.category, f.customer_type) for a, f in article_facets(articles).items()}
    if memo is not None:
        memo.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(memo, json.dumps({"input": key, "facets": out}, ensure_ascii=False))
    return out


def common_facets(facets: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The facets a group of articles shares (a navigation page's): each of category and customer type
    where all agree, else ""."""
    cats = {c for c, _ in facets}
    kinds = {t for _, t in facets}
    return (cats.pop() if len(cats) == 1 else "", kinds.pop() if len(kinds) == 1 else "")


class PageSource(Protocol):
    """Where navigation pages come from (``skillrag.wiki`` by default; a fake in tests)."""

    def load_pages(self, ws: Workspace) -> Sequence[Any]: ...

    def layer_fingerprint(self, ws: Workspace) -> str | None: ...

    def load_page(self, ws: Workspace, page_id: str) -> Any:
        """One page by id; ``UserError`` when there is none, ``InvalidIdError`` for a malformed id."""
        ...


class WikiPageSource:
    """The navigation layer of the ``skillrag.wiki`` package (a layer below this one).

    ``layer_fingerprint`` is memoised on the (name, mtime, size) of the page files, so a search
    re-hashes the layer only when a page file was touched.
    """

    def __init__(self) -> None:
        self._memo: tuple[object, str | None] | None = None

    def load_pages(self, ws: Workspace) -> Sequence[Any]:
        return wiki.load_pages(ws)

    def load_page(self, ws: Workspace, page_id: str) -> Any:
        layer = wiki.Layer(ws)
        if not layer.page_path(page_id).is_file():
            raise UserError(f"no navigation page {page_id!r} (page ids come from retrieve's `pages`)")
        return layer.read(page_id)

    def layer_fingerprint(self, ws: Workspace) -> str | None:
        key = _stat_key(ws.wiki_dir / "pages")
        if self._memo is not None and key is not None and self._memo[0] == key:
            return self._memo[1]
        fp = wiki.layer_fingerprint(ws)
        self._memo = (key, fp)
        return fp


def _stat_key(folder: Path) -> tuple[tuple[str, int, int], ...] | None:
    try:
        with os.scandir(folder) as it:
            return tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in it))
    except OSError:
        return None


def no_layer_error(ws: Workspace) -> IndexStateError:
    """The one-line refusal of the wiki backend (the default) in a workspace without a finished layer:
    never a silent fall back to ``direct``."""
    return IndexStateError(f"{ws.root}: there is no navigation layer yet (or its build was interrupted); "
                           "run `skillrag wiki build` first "
                           "(or use the direct backend: --backend direct, or search.backend: direct)")


def _article_items(arts: Sequence[Any], facets: dict[str, tuple[str, str]]) -> list[Item]:
    """The direct backend's items of ``arts`` (their facets from ``facets``, the whole corpus's)."""
    items = []
    for a in arts:
        cat, kind = facets.get(a.id, ("", ""))
        items.append(Item(
            id=a.id, title=a.title, text=a.body, hash=_article_hash(a, cat, kind),
            source_tag=a.source_tag, source_path=a.source_path, content_hash=a.content_hash,
            preview=preview_of(a.body), category=cat, customer_type=kind))
    return items


def _article_hash(a: Any, category: str, customer_type: str) -> str:
    """The item hash of an article (an ``Article`` or its ``ArticleHead``: the body enters it through
    ``content_hash`` only) with these facets."""
    return text_hash(f"{a.content_hash}\x00{a.title}\x00{a.source_tag}\x00{a.source_path}\x00{category}\x00{customer_type}")


def facets_memo(ws: Workspace) -> Path:
    """Where the direct index keeps the last facets it computed (``corpus_facets``'s ``memo``)."""
    return ws.state_dir / "search" / "facets.json"


def _empty_corpus(ws: Workspace) -> EmptyInputError:
    return EmptyInputError(f"{ws.root}: the corpus is empty; run `skillrag ingest PATH` first")


def collect_items(ws: Workspace, backend: str, pages: PageSource | None = None) -> tuple[list[Item], str | None]:
    """``(items, layer fingerprint or None)`` for ``backend``.

    Raises ``EmptyInputError`` for an empty corpus or layer, ``IndexStateError`` when the wiki
    backend has no layer.
    """
    if backend == "direct":
        # a document split into section-articles is indexed through its sections, not whole
        arts = ArticleStore(ws).list(split_documents=False)
        if not arts:
            raise _empty_corpus(ws)
        # facets: of the whole corpus, every build (memoised while no article is added, removed or retitled)
        return _article_items(arts, corpus_facets(arts, facets_memo(ws))), None
    if backend != "wiki":
        raise ValueError(f"unknown backend {backend!r}")
    src = pages or WikiPageSource()
    fp = src.layer_fingerprint(ws)
    if fp is None:
        raise no_layer_error(ws)
    found = list(src.load_pages(ws))
    if not found:
        raise EmptyInputError(f"{ws.root}: the navigation layer has no pages; run `skillrag wiki build`")
    items = []
    for p in found:
        text, cites = p.search_text(), tuple(p.article_ids())
        items.append(Item(id=p.id, title=p.title, text=text, cites=cites,
                          hash=text_hash("\0".join((p.title, text, ",".join(cites))))))
    return items, fp


def collect_changes(ws: Workspace, backend: str, stored: dict[str, str],
                    pages: PageSource | None = None) -> tuple[list[Item], list[str], dict[str, str], str | None]:
    """``(fresh items, every item id in index order, id → item hash, layer fingerprint or None)``: what
    ``collect_items`` gives, with only the items whose hash is not ``stored``'s (id → item hash, an
    index's manifest) made whole. The direct backend reads no article body but theirs (the facets
    still come from every article's id, title and parent); the wiki backend reads every page (a layer
    has a few pages per hundred articles). Raises as ``collect_items``."""
    if backend != "direct":
        items, fp = collect_items(ws, backend, pages)
        return ([it for it in items if stored.get(it.id) != it.hash], [it.id for it in items],
                {it.id: it.hash for it in items}, fp)
    store = ArticleStore(ws)
    heads = store.heads(split_documents=False)
    if not heads:
        raise _empty_corpus(ws)
    facets = corpus_facets(heads, facets_memo(ws))
    hashes = {a.id: _article_hash(a, *facets.get(a.id, ("", ""))) for a in heads}
    want = [i for i, h in hashes.items() if stored.get(i) != h]
    got = store.get_many(want)
    fresh = _article_items([got[i] for i in want if i in got], facets)
    for it in fresh:  # an article written since the heads were read: its item as read now
        hashes[it.id] = it.hash
    gone = [i for i in want if i not in got]  # removed since the heads were read
    for i in gone:
        del hashes[i]
    return fresh, list(hashes), hashes, None


def passages(title: str, text: str, words: int, overlap: int) -> list[str]:
    """Dense passages of an item: ``title`` + windows of ``words`` words overlapping by ``overlap``.

    A text of at most ``words`` words gives one passage; an empty text gives the title alone.
    """
    toks = _WS.split(text.strip()) if text.strip() else []
    head = _WS.sub(" ", title).strip()
    if len(toks) <= words:
        return [f"{head}\n{' '.join(toks)}".strip()]
    step = max(1, words - overlap)
    out = []
    for start in range(0, len(toks), step):
        out.append(f"{head}\n{' '.join(toks[start : start + words])}".strip())
        if start + words >= len(toks):
            break
    return out
