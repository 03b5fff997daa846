"""The search index on disk, its manifest, and incremental builds.

Layout (under the workspace's ``.skillrag/``)::

    search/<backend>/manifest.json   how it was built: versions, embedder id, parameters, item hashes
    search/<backend>/items.json      item records (id, title, source tag/path, cited article ids)
    search/<backend>/bm25/           the bm25s index (its own params.index.json inside)
    search/<backend>/vectors.npy     (n_passages, dim) float32, L2-normalised passage vectors
    search/<backend>/rows.npy        (n_passages,) int32: the item each passage belongs to
    store.sqlite: search_vectors     passage-vector cache keyed by (embedder id, sha256 of the passage)

A build writes a fresh folder and swaps it in with two renames, so a search never sees a half-written
index; the manifest is written last. Vectors come from the cache when the same embedder has already
embedded the same passage, so only new or changed items are embedded, and an interrupted build
resumes where it stopped (each embedded batch is committed to the cache at once).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

import skillrag
from skillrag.errors import IndexStateError
from skillrag.search._items import Item, PageSource, collect_items, passages, text_hash
from skillrag.search._types import IndexReport
from skillrag.search.embedders import Embedder, get_embedder
from skillrag.search.tokenize import Analyzer
from skillrag.workspace import Workspace, atomic_write_text
from skillrag.workspace.config import SearchSettings

__all__ = ["FORMAT_VERSION", "build_index", "embedder_for", "index_dir", "index_params", "read_manifest"]

FORMAT_VERSION = 2
EMBED_BATCH = 32

CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_vectors (
    embedder  TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (embedder, text_hash)
);
"""

Progress = Callable[[int, int], None]


def index_dir(ws: Workspace, backend: str) -> Path:
    return ws.state_dir / "search" / backend


def embedder_for(ws: Workspace, embedder: Embedder | str | None = None) -> Embedder:
    """The embedder to use: an instance as given, a registry name, or the workspace's configured one."""
    if embedder is not None and not isinstance(embedder, str):
        return embedder
    s = ws.config.search
    return get_embedder(embedder or s.embedder, model=s.embedder_model, tokenizer=s.embedder_tokenizer,
                        url=s.embedder_url)


def index_params(s: SearchSettings) -> dict[str, Any]:
    """The settings that change the stored index (a change means a rebuild)."""
    return {"stopwords": s.stopwords, "stemmer": s.stemmer, "bm25_k1": s.bm25_k1, "bm25_b": s.bm25_b,
            "bm25_method": "lucene", "title_weight": s.title_weight, "passage_words": s.passage_words,
            "passage_overlap": s.passage_overlap}


def read_manifest(ws: Workspace, backend: str) -> dict[str, Any] | None:
    """The manifest of the built index for ``backend``, or None when there is none."""
    path = index_dir(ws, backend) / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexStateError(f"{path}: unreadable index manifest ({exc}); run `skillrag index`") from None


def _versions() -> dict[str, str]:
    return {"skillrag": skillrag.__version__, "bm25s": bm25s.__version__, "format": str(FORMAT_VERSION)}


def lexical_text(item: Item, title_weight: int) -> str:
    return "\n".join([item.title] * title_weight + [item.text])


def _cached_vectors(ws: Workspace, embedder_id: str, hashes: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    with ws.connect() as conn:
        conn.executescript(CACHE_SCHEMA)
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            q = (f"SELECT text_hash, vector FROM search_vectors WHERE embedder = ? "
                 f"AND text_hash IN ({','.join('?' * len(chunk))})")
            for h, blob in conn.execute(q, [embedder_id, *chunk]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
    return out


def _embed_missing(ws: Workspace, embedder: Embedder, todo: dict[str, str], progress: Progress | None,
                   done_before: int, total: int) -> dict[str, np.ndarray]:
    """Embed ``{hash: text}`` in batches, committing each batch to the cache at once (resumable)."""
    out: dict[str, np.ndarray] = {}
    items = list(todo.items())
    done = done_before
    with ws.connect() as conn:
        for start in range(0, len(items), EMBED_BATCH):
            batch = items[start : start + EMBED_BATCH]
            vecs = np.asarray(embedder.embed([t for _, t in batch]), dtype=np.float32)
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO search_vectors (embedder, text_hash, vector) VALUES (?, ?, ?)",
                    [(embedder.id, h, v.tobytes()) for (h, _), v in zip(batch, vecs, strict=True)],
                )
            for (h, _), v in zip(batch, vecs, strict=True):
                out[h] = v
            done += len(batch)
            if progress:
                progress(done, total)
    return out


def build_index(
    ws: Workspace,
    *,
    backend: str | None = None,
    embedder: Embedder | str | None = None,
    progress: Progress | None = None,
    pages: PageSource | None = None,
    force: bool = False,
) -> IndexReport:
    """Build or update the search index of ``backend`` (``"direct"`` or ``"wiki"``; default from config).

    Only items whose content changed are re-embedded; with nothing changed the index is left as it is
    (``report.up_to_date``). ``progress(done, total)`` is called as passages are embedded.
    ``pages`` replaces the ``skillrag.wiki`` page source (tests). ``force`` rebuilds the files even when
    up to date (the vector cache still applies). With ``search.wiki_order="fused"`` a ``wiki`` build
    first brings the ``direct`` index up to date too (incremental), since the wiki backend uses it.

    Raises ``EmptyInputError`` (no articles / no pages), ``IndexStateError`` (wiki backend without a
    navigation layer), ``EmbedderError`` / ``MissingExtraError`` from the embedder.
    """
    t0 = time.perf_counter()
    s = ws.config.search
    backend = backend or s.backend
    emb = embedder_for(ws, embedder)
    items, fingerprint = collect_items(ws, backend, pages)
    if backend == "wiki" and s.wiki_order == "fused":
        # the wiki backend ranks the articles a page cites with the direct index (retriever module doc)
        build_index(ws, backend="direct", embedder=emb, progress=progress)
    params = index_params(s)
    old = read_manifest(ws, backend)
    report = IndexReport(backend=backend, items=len(items), embedder_id=emb.id)
    new_hashes = {it.id: it.hash for it in items}
    old_hashes: dict[str, str] = (old or {}).get("items", {})
    report.added = sorted(set(new_hashes) - set(old_hashes))
    report.removed = sorted(set(old_hashes) - set(new_hashes))
    report.changed = sorted(i for i in new_hashes if i in old_hashes and old_hashes[i] != new_hashes[i])
    # the layer fingerprint too: a page change that leaves every item's text alone (a variant rebuild)
    # still makes the retriever refuse the index, so it must not be reported up to date
    same = (old is not None and old.get("embedder_id") == emb.id and old.get("params") == params
            and old.get("versions") == _versions() and old_hashes == new_hashes
            and old.get("layer_fingerprint") == fingerprint)
    if same and not force and (index_dir(ws, backend) / "vectors.npy").is_file():
        report.up_to_date = True
        report.passages = int(old.get("passages", 0))  # type: ignore[union-attr]
        report.seconds = time.perf_counter() - t0
        return report

    # dense: passages, vectors from the cache, the rest embedded
    rows: list[int] = []
    p_hashes: list[str] = []
    todo: dict[str, str] = {}
    for n, it in enumerate(items):
        for p in passages(it.title, it.text, s.passage_words, s.passage_overlap):
            h = text_hash(p)
            rows.append(n)
            p_hashes.append(h)
            todo.setdefault(h, p)
    cached = _cached_vectors(ws, emb.id, list(todo))
    for h in cached:
        todo.pop(h, None)
    report.passages = len(p_hashes)
    total_unique = len(cached) + len(todo)
    report.reused = len(cached)
    report.embedded = len(todo)
    if progress:
        progress(len(cached), total_unique)
    fresh = _embed_missing(ws, emb, todo, progress, len(cached), total_unique)
    vec_of = {**cached, **fresh}
    vectors = np.stack([vec_of[h] for h in p_hashes]).astype(np.float32)

    # lexical: BM25 over title (weighted) + text
    analyzer = Analyzer(s.stopwords, s.stemmer)
    corpus_terms = [analyzer.terms(lexical_text(it, s.title_weight)) or [""] for it in items]
    bm25 = bm25s.BM25(k1=s.bm25_k1, b=s.bm25_b, method="lucene")
    bm25.index(corpus_terms, show_progress=False)

    manifest = {
        "backend": backend,
        "versions": _versions(),
        "embedder_id": emb.id,
        "dim": int(vectors.shape[1]),
        "params": params,
        "layer_fingerprint": fingerprint,
        "passages": len(p_hashes),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "items": new_hashes,
        "content_hashes": {it.id: it.content_hash for it in items} if backend == "direct" else {},
    }
    final = index_dir(ws, backend)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{backend}.", dir=final.parent))
    try:
        bm25.save(str(tmp / "bm25"), show_progress=False)
        np.save(tmp / "vectors.npy", vectors)
        np.save(tmp / "rows.npy", np.asarray(rows, dtype=np.int32))
        atomic_write_text(tmp / "items.json", json.dumps([it.record() for it in items], ensure_ascii=False))
        atomic_write_text(tmp / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False))
        old_dir = final.with_name(f".{backend}.old")
        if old_dir.exists():
            shutil.rmtree(old_dir)
        if final.exists():
            os.replace(final, old_dir)
        os.replace(tmp, final)
        shutil.rmtree(old_dir, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report.seconds = time.perf_counter() - t0
    return report
