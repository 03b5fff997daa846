"""Building the search index: items, passages, vectors and analysed terms, handed to the engine.

``build_index`` decides what is indexed and how (``_items``: items and passages; the embedder; the
BM25 analysis; the manifest), the same for every engine; the engine (``search.engine``, see
``skillrag.search.engines``) stores it: files in the workspace (``embedded``) or Milvus (``milvus``).

Vectors come from the workspace's one vector store (``skillrag.search.vectors``) when the same
embedder has already embedded the same passage, so only new or changed passages are embedded, and an
interrupted build resumes where it stopped (each embedded batch is stored at once). Passages to embed
are sorted by token length before they are batched, so a batch pads little.

An index built the same way (embedder, settings, versions) on an ``incremental`` engine is updated in
place: only the new and changed items are read whole, cut into passages, hashed and analysed
(``_items.collect_changes``, ``Engine.update``), the rest of the corpus is compared by item hash, and
the result is the index a full build of the same corpus writes. ``force`` always builds in full.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skillrag.errors import IndexStateError
from skillrag.search._items import (
    FACETS_VERSION,
    Item,
    PageSource,
    WikiPageSource,
    collect_changes,
    collect_items,
    no_layer_error,
    passages,
    text_hash,
)
from skillrag.search._types import IndexReport
from skillrag.search.embedders import Embedder, get_embedder
from skillrag.search.engines import BuildInput, BuildUpdate, Engine, get_engine
from skillrag.search.engines.embedded import index_dir
from skillrag.search.vectors import VectorStore
from skillrag.text import BM25, Analyzer
from skillrag.workspace import Workspace
from skillrag.workspace.config import SearchSettings

__all__ = ["build_index", "check_manifest", "embedder_for", "index_dir", "index_params", "index_versions",
           "input_stamp", "read_manifest"]

Progress = Callable[[int, int], None]


def embedder_for(ws: Workspace, embedder: Embedder | str | None = None) -> Embedder:
    """The embedder to use: an instance as given, a registry name, or the workspace's configured one."""
    if embedder is not None and not isinstance(embedder, str):
        return embedder
    s = ws.config.search
    return get_embedder(embedder or s.embedder, model=s.embedder_model, tokenizer=s.embedder_tokenizer,
                        url=s.embedder_url, threads=s.embed_threads)


def index_params(s: SearchSettings) -> dict[str, Any]:
    """The settings that change the stored index (a change means a rebuild)."""
    return {"stopwords": s.stopwords, "stemmer": s.stemmer, **BM25.of(s).params(), "title_weight": s.title_weight, "passage_words": s.passage_words,
            "passage_overlap": s.passage_overlap, "facets": FACETS_VERSION}


def index_versions(engine: Engine, s: SearchSettings) -> dict[str, str]:
    """What besides the settings must match between a build and a search: the engine's library and
    format versions and the analyzer's (``Analyzer.versions``: PyStemmer, the stop-word list's hash).
    The model's digests are in the embedder id (``Embedder.id``)."""
    return {**engine.versions(), **Analyzer(s.stopwords, s.stemmer).versions()}


def _differences(built: dict[str, Any], now: dict[str, Any]) -> list[str]:
    return [f"{k} {built.get(k)} (now {now.get(k)})" for k in sorted(set(built) | set(now))
            if built.get(k) != now.get(k)]


def check_manifest(manifest: dict[str, Any], *, backend: str, embedder_id: str, params: dict[str, Any],
                   versions: dict[str, str]) -> None:
    """Refuse an index built another way than it would be searched now: raises ``IndexStateError``, one
    line naming what differs (embedder id, a setting of ``index_params``, a version of
    ``index_versions``) and ``skillrag index`` as the fix."""
    fix = f"run `skillrag index --backend {backend}`"
    if manifest.get("embedder_id") != embedder_id:
        raise IndexStateError(f"the {backend} index was built with embedder {manifest.get('embedder_id')!r}, "
                              f"not {embedder_id!r}; {fix}")
    diff = _differences(manifest.get("params") or {}, params) + _differences(manifest.get("versions") or {},
                                                                              versions)
    if diff:
        more = f" and {len(diff) - 3} more" if len(diff) > 3 else ""
        raise IndexStateError(f"the {backend} index was built with other settings or library versions: "
                              f"{', '.join(diff[:3])}{more}; {fix}")


def input_stamp(ws: Workspace, backend: str, pages: PageSource | None = None) -> str:
    """What the items of ``backend`` are made of, in one value read without per-item work: the corpus
    stamp (``ArticleStore.stamp``) for ``direct``, the layer fingerprint for ``wiki``. The manifest
    records it (``input_stamp``); the same stamp, settings, versions and embedder mean a no-op.
    Raises ``IndexStateError`` for the wiki backend without a navigation layer."""
    if backend == "direct":
        from skillrag.corpus import ArticleStore

        return ArticleStore(ws).stamp()
    if backend != "wiki":
        raise ValueError(f"unknown backend {backend!r}")
    fp = (pages or WikiPageSource()).layer_fingerprint(ws)
    if fp is None:
        raise no_layer_error(ws)
    return fp


def _built_as(manifest: dict[str, Any], embedder_id: str, params: dict[str, Any], versions: dict[str, str]) -> bool:
    """True when ``manifest`` (or its header) was built with this embedder, these settings and versions."""
    return (manifest.get("embedder_id") == embedder_id and manifest.get("params") == params
            and manifest.get("versions") == versions)


def read_manifest(ws: Workspace, backend: str) -> dict[str, Any] | None:
    """The manifest of the built index for ``backend`` in the configured engine, or None when there is none.

    Raises ``IndexStateError`` when it is unreadable, ``EngineError`` when the engine cannot be reached.
    """
    return get_engine(ws).read_manifest(backend)


def lexical_text(item: Item, title_weight: int) -> str:
    return "\n".join([item.title] * title_weight + [item.text])


def _by_token_length(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Positions of ``texts``, shortest first by model tokens (the embedder's ``token_counts`` when it has
    one, else words): batches of neighbours pad little."""
    counts = getattr(embedder, "token_counts", None)
    sizes = counts(list(texts)) if callable(counts) else [len(t.split()) for t in texts]
    return sorted(range(len(texts)), key=lambda i: sizes[i])


def _embed_missing(store: VectorStore, embedder: Embedder, todo: dict[str, str], batch: int,
                   progress: Progress | None, done_before: int, total: int) -> None:
    """Embed ``{hash: text}`` in batches of similar token length, storing each batch at once (resumable)."""
    hashes = list(todo)
    texts = [todo[h] for h in hashes]
    order = _by_token_length(embedder, texts) if len(texts) > batch else list(range(len(texts)))
    done = done_before
    with store.writer() as put:
        for start in range(0, len(order), batch):
            part = order[start : start + batch]
            vecs = np.asarray(embedder.embed([texts[i] for i in part]), dtype=np.float32)
            put(embedder.id, [hashes[i] for i in part], vecs)
            done += len(part)
            if progress:
                progress(done, total)


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
    (``report.up_to_date``), told from the manifest's header alone when its ``input_stamp`` still holds
    (no article or page read), else by comparing every item's hash; a change is applied in place when
    the engine can (module doc). ``progress(done, total)`` is called as passages are embedded.
    ``report.reused`` counts the unchanged items' passages too when the index was updated in place.
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
    engine = get_engine(ws)
    if backend == "wiki":
        pages = pages or WikiPageSource()  # one source: its fingerprint is memoised for collect_items
    # read before the items: a write in between only makes the next no-op take the long way
    stamp = input_stamp(ws, backend, pages)
    if backend == "wiki" and s.wiki_order == "fused":
        # the wiki backend ranks the articles a page cites with the direct index (retriever module doc)
        build_index(ws, backend="direct", embedder=emb, progress=progress)
    params = index_params(s)
    versions = index_versions(engine, s)
    header = None if force else engine.header(backend)
    if (header is not None and header.get("input_stamp") == stamp
            and _built_as(header, emb.id, params, versions) and engine.is_ready(backend)):
        # nothing the items are made of changed (the manifest's stamp): no article or page is read
        return IndexReport(backend=backend, items=int(header.get("n_items", 0)), embedder_id=emb.id,
                           passages=int(header.get("passages", 0)), up_to_date=True,
                           seconds=time.perf_counter() - t0)
    old = engine.read_manifest(backend)
    # in place: the stored index was built the same way, so only new and changed items are made whole
    in_place = (not force and engine.incremental and old is not None and _built_as(old, emb.id, params, versions)
                and engine.is_ready(backend))
    old_hashes: dict[str, str] = (old or {}).get("items", {})
    if in_place:
        items, order, new_hashes, fingerprint = collect_changes(ws, backend, old_hashes, pages)
    else:
        items, fingerprint = collect_items(ws, backend, pages)
        order, new_hashes = [it.id for it in items], {it.id: it.hash for it in items}
    report = IndexReport(backend=backend, items=len(order), embedder_id=emb.id)
    report.added = sorted(set(new_hashes) - set(old_hashes))
    report.removed = sorted(set(old_hashes) - set(new_hashes))
    report.changed = sorted(i for i in new_hashes if i in old_hashes and old_hashes[i] != new_hashes[i])
    # the layer fingerprint too: a page change that leaves every item's text alone (a variant rebuild)
    # still makes the retriever refuse the index, so it must not be reported up to date
    same = (old is not None and _built_as(old, emb.id, params, versions) and old_hashes == new_hashes
            and old.get("layer_fingerprint") == fingerprint)
    if same and not force and engine.is_ready(backend):
        report.up_to_date = True
        report.passages = int(old.get("passages", 0))  # type: ignore[union-attr]
        report.seconds = time.perf_counter() - t0
        return report

    # dense: passages, vectors from the store, the rest embedded
    item_passages: list[list[str]] = []
    todo: dict[str, str] = {}
    for it in items:
        hs = []
        for p in passages(it.title, it.text, s.passage_words, s.passage_overlap):
            h = text_hash(p)
            hs.append(h)
            todo.setdefault(h, p)
        item_passages.append(hs)
    store = VectorStore(ws)
    cached = store.get(emb.id, todo)
    for h in cached:
        todo.pop(h, None)
    total_unique = len(cached) + len(todo)
    report.reused = len(cached)
    report.embedded = len(todo)
    if progress:
        progress(len(cached), total_unique)
    _embed_missing(store, emb, todo, s.embed_batch, progress, len(cached), total_unique)
    p_hashes = [h for hs in item_passages for h in hs]
    if in_place:
        dim = int(old["dim"])  # type: ignore[index]
    else:
        first = next(iter(cached.values()), None)
        dim = int(first.shape[0]) if first is not None else int(store.get(emb.id, p_hashes[:1])[p_hashes[0]].shape[0])

    # lexical: BM25 over title (weighted) + text, analysed here for every engine
    analyzer = Analyzer(s.stopwords, s.stemmer)
    terms = [analyzer.terms(lexical_text(it, s.title_weight)) for it in items]
    header = {
        "backend": backend,
        "engine": engine.name,
        "versions": versions,
        "embedder_id": emb.id,
        "dim": dim,
        "params": params,
        "analyzer": analyzer.manifest(),
        "layer_fingerprint": fingerprint,
        "input_stamp": stamp,
        "n_items": len(order),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if in_place:
        content = ({i: old.get("content_hashes", {}).get(i, "") for i in order}  # type: ignore[union-attr]
                   if backend == "direct" else {})
        content.update({it.id: it.content_hash for it in items} if backend == "direct" else {})
        report.passages = engine.update(BuildUpdate(
            backend=backend, order=order, hashes=new_hashes, content_hashes=content, items=items, terms=terms,
            passages=item_passages, header=header))
        report.reused += report.passages - len(p_hashes)  # the unchanged items' passages, kept as stored
    else:
        report.passages = len(p_hashes)
        rows = np.repeat(np.arange(len(items), dtype=np.int32), [len(hs) for hs in item_passages])
        engine.write(BuildInput(
            backend=backend, items=items, terms=terms, passage_rows=rows, passage_hashes=p_hashes,
            vectors=lambda hs: store.matrix(emb.id, hs, dim), header={**header, "passages": len(p_hashes)},
            rebuild=force,
        ))
    report.seconds = time.perf_counter() - t0
    return report
