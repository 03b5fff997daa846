"""The ``milvus`` engine: the same index in Milvus, a Milvus Lite file or a Milvus server (extra ``milvus``).

``search.milvus_uri`` picks the deployment: a ``.db`` file path runs Milvus Lite (the server's C++
core) in a child process of this one, over a private socket; ``http(s)://host:19530`` reaches a
Milvus standalone server or a distributed cluster (``milvus_token``, ``milvus_database``). Three
collections per backend, named ``<milvus_collection>_<backend>_…``:

* ``items``: one row per item (article or page): its record (JSON), the fields filters read
  (``source_tag``, ``source_path``, ``title``), its hashes, and ``terms``: our analysed BM25 terms
  joined by spaces, turned into a sparse vector by Milvus's BM25 function with a plain ``whitespace``
  tokenizer, indexed with our k1 and b. Milvus's BM25 is ``idf · (k1+1)·tf / (tf + k1·(1−b+b·dl/avgdl))``
  with the Lucene idf: the Lucene variant times (k1+1), which is divided out again, so the scores
  are ours too.
* ``passages``: one row per dense passage: the item it belongs to, the filter fields, the vector
  (inner product; ``FLAT`` by default, exact).
* ``meta``: the manifest (how the index was built, its state and build id) and the BM25 vocabulary
  with document frequencies (the retriever's long-query policy ranks query terms and sentences by
  idf).

Everything that decides the ranking stays in skillrag (``engines._base``): the retriever sends
analysed terms and its own query vector, asks for the best ``depth`` of each ranking, and fuses them
itself. Passages are aggregated to items on this side, not with Milvus's ``group_by``: the best
passage per item is the first one met in score order, and the search is repeated deeper until
``depth`` distinct items are found or the collection is exhausted (at most 16 384 passages, Milvus's
top-k limit). Filters go with each search request as an ``expr`` (a top-level ``hybrid_search``
filter was measured to be ignored); the exact filter is applied again to what comes back, so a
``like`` pattern that can only over-match (``_`` and ``%`` inside a prefix are wildcards to Milvus)
never changes the result.

Updates are incremental: only items whose hash changed are written, their passages diffed by id
(new ones upserted, gone ones deleted), removed items deleted. While an update runs the manifest says
``building`` and a search refuses the index; each finished write gets a new build id, and an open
index refuses to answer once the build id it read has changed.

Milvus Lite lets one process open a ``.db`` file; a second one gets one clear ``EngineError`` line.
pymilvus's own error logging is turned down: every failure reaches the user as that one line.
Pins that work (the ``milvus`` extra): pymilvus 2.5.x with milvus-lite 2.5.1, which imports
``pkg_resources`` and so needs ``setuptools<81``. Milvus Lite 3.x analyses text differently and was
measured at ~2 s per query at 63k passages.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import threading
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import numpy as np

from skillrag._version import __version__
from skillrag.errors import ConfigError, EngineError, IndexStateError, MissingExtraError
from skillrag.search._types import SearchFilters
from skillrag.search.engines._base import BuildInput, BuildUpdate, Ranking, empty_ranking
from skillrag.text import BM25_K1
from skillrag.workspace import Workspace
from skillrag.workspace.config import SearchSettings

__all__ = ["FORMAT_VERSION", "MilvusEngine", "MilvusIndex", "disconnect_all", "filter_expr", "resolve_uri"]

FORMAT_VERSION = 1
#: Milvus's largest ``limit`` (top-k) per search.
MAX_TOPK = 16384
#: Longest VARCHAR Milvus stores, in bytes.
VARCHAR_MAX = 65535
ID_MAX = 1024
#: Allowed ids put into an ``in [...]`` expression at most; larger sets are filtered on return only.
MAX_EXPR_IDS = 2000
SERVER_SCHEMES = ("http", "https", "tcp", "grpc", "unix")
_LITE_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,36}$")
_BATCH_BYTES = 4 << 20
_BATCH_ROWS = 1000
T = TypeVar("T")

_CLIENTS: dict[tuple[str, str, str], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError:
        raise MissingExtraError("pymilvus", "milvus") from None
    for name in ("pymilvus", "pymilvus.milvus_client", "pymilvus.decorators"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return pymilvus


def resolve_uri(ws: Workspace, settings: SearchSettings | None = None) -> tuple[str, Path | None]:
    """``(uri, Lite file or None)`` from ``search.milvus_uri`` (of ``settings``, default the workspace's):
    a server URL as given, or the absolute path of a Milvus Lite ``.db`` file (relative paths are under
    the workspace; default ``.skillrag/milvus.db``). Raises ``ConfigError`` for a file name Milvus Lite
    cannot use."""
    raw = (settings or ws.config.search).milvus_uri
    if raw and urlparse(raw).scheme.lower() in SERVER_SCHEMES:
        return raw, None
    path = Path(raw).expanduser() if raw else ws.state_dir / "milvus.db"
    if not path.is_absolute():
        path = ws.root / path
    if path.suffix != ".db":
        raise ConfigError(f"search.milvus_uri: {raw!r} is neither http(s)://host:port nor a Milvus Lite .db file")
    if not _LITE_NAME.match(path.name):
        raise ConfigError(f"search.milvus_uri: Milvus Lite file names are letters, digits and . - _, at most 36 "
                          f"characters; {path.name!r} is not")
    return str(path.resolve()), path.resolve()


def _lite_served_here(path: Path) -> bool:
    from milvus_lite.server_manager import server_manager_instance

    return str(path) in getattr(server_manager_instance, "_servers", {})


def _lite_locked(path: Path) -> bool:
    """True when another process holds Milvus Lite's lock on ``path`` (only called when this process
    does not serve it: closing a probe descriptor drops every POSIX lock this process has on a file)."""
    lock = path.parent / f".{path.name}.lock"
    if not lock.exists():
        return False
    with open(lock, "a") as fh:
        try:
            fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return True
            raise
        fcntl.lockf(fh, fcntl.LOCK_UN)
    return False


def connect(ws: Workspace, settings: SearchSettings | None = None) -> Any:
    """A ``pymilvus.MilvusClient`` for ``milvus_uri`` of ``settings`` (default: the workspace's search
    settings), one per process and target.

    Raises ``MissingExtraError`` without the ``milvus`` extra, ``EngineError`` when the server is
    unreachable, the Lite file is open in another process, or Milvus Lite cannot start.
    """
    s = settings or ws.config.search
    uri, lite = resolve_uri(ws, s)
    token = os.environ.get("SKILLRAG_MILVUS_TOKEN") or s.milvus_token or ""
    key = (uri, token, s.milvus_database or "")
    with _CLIENTS_LOCK:
        if key in _CLIENTS:
            return _CLIENTS[key]
        pm = _pymilvus()
        if lite is not None:
            try:
                with warnings.catch_warnings():  # milvus-lite 2.5 warns that pkg_resources is deprecated
                    warnings.simplefilter("ignore")
                    import milvus_lite  # noqa: F401
                    from milvus_lite.server_manager import server_manager_instance  # noqa: F401
            except ModuleNotFoundError as exc:
                if exc.name == "pkg_resources":
                    raise EngineError("milvus-lite 2.5 needs setuptools<81 (it imports pkg_resources); "
                                      "pip install 'skillrag[milvus]'") from None
                raise MissingExtraError("milvus-lite", "milvus") from None
            lite.parent.mkdir(parents=True, exist_ok=True)
            if not _lite_served_here(lite) and _lite_locked(lite):
                raise EngineError(f"{lite}: this Milvus Lite file is open in another process (Milvus Lite allows "
                                  "one at a time); stop that process, or serve the index from a Milvus server "
                                  "(search.milvus_uri: http://HOST:19530)")
        kwargs: dict[str, Any] = {"uri": uri, "timeout": s.milvus_timeout_s}
        if token:
            kwargs["token"] = token
        if s.milvus_database:
            kwargs["db_name"] = s.milvus_database
        try:
            client = pm.MilvusClient(**kwargs)
        except Exception as exc:  # noqa: BLE001 - pymilvus raises MilvusException and grpc errors alike
            reason = getattr(exc, "message", "") or str(exc) or type(exc).__name__
            if lite is not None:
                raise EngineError(f"{lite}: Milvus Lite could not open it ({reason})") from None
            raise EngineError(f"cannot reach the Milvus server at {uri} ({reason}); start it, or fix "
                              "search.milvus_uri / milvus_token / milvus_database") from None
        _CLIENTS[key] = client
        return client


def disconnect_all() -> None:
    """Close every client this process opened and stop its Milvus Lite servers (releasing their files)."""
    with _CLIENTS_LOCK:
        for (uri, _, _), client in list(_CLIENTS.items()):
            with contextlib.suppress(Exception):  # closing is best effort
                client.close()
            if urlparse(uri).scheme.lower() not in SERVER_SCHEMES:
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(uri)
        _CLIENTS.clear()


def _lit(value: Any) -> str:
    """A Milvus expression literal (a string or a list of strings) in JSON syntax."""
    return json.dumps(value, ensure_ascii=False)


def _like_prefix(prefix: str) -> str:
    # `_` matches any one character, so replacing the characters LIKE or the literal treat specially
    # by `_` can only widen the match; the exact filter is applied again to the results
    return re.sub(r'[\\"%_]', "_", prefix) + "%"


def filter_expr(filters: SearchFilters | None, id_field: str, ids: Sequence[str] | None = None) -> str:
    """A Milvus boolean expression for ``filters`` (and optionally ``id_field in ids``), "" for none.

    Tags and ids match exactly; ``path_prefixes`` and ``id_prefixes`` become ``like "prefix%"`` patterns
    that may over-match (module doc); ``title_prefixes`` and ``title_contains`` (case-insensitive) are
    left to the exact filter.
    """
    parts: list[str] = []
    if filters is not None:
        if filters.source_tags:
            parts.append(f"source_tag in {_lit(list(filters.source_tags))}")
        # title filters match case-insensitively, which LIKE cannot: they are applied on return only
        for field, attr in (("source_path", "path_prefixes"), (id_field, "id_prefixes")):
            prefixes = getattr(filters, attr, None)
            if prefixes:
                parts.append("(" + " or ".join(f"{field} like {_lit(_like_prefix(p))}" for p in prefixes) + ")")
    if ids is not None:
        parts.append(f"{id_field} in {_lit(list(ids))}")
    return " and ".join(parts)


def _fit(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes at a character boundary, and whether it was cut."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, False
    return raw[:limit].decode("utf-8", errors="ignore"), True


def _fit_terms(terms: list[str]) -> tuple[str, bool]:
    text, cut = _fit(" ".join(terms), VARCHAR_MAX)
    if cut and " " in text:
        text = text[: text.rindex(" ")]  # never a half term
    return text, cut


def passage_id(item_id: str, tag: str, path: str, text_hash: str, occurrence: int) -> str:
    """Primary key of a passage: sha256 of its item, the item's filter fields and its text (with the
    occurrence number, for an item that repeats a passage word for word)."""
    return hashlib.sha256(f"{item_id}\0{tag}\0{path}\0{text_hash}\0{occurrence}".encode()).hexdigest()


class _Names:
    def __init__(self, prefix: str, backend: str) -> None:
        self.items = f"{prefix}_{backend}_items"
        self.passages = f"{prefix}_{backend}_passages"
        self.meta = f"{prefix}_{backend}_meta"

    def all(self) -> tuple[str, str, str]:
        return self.items, self.passages, self.meta


class MilvusEngine:
    """Indexes stored in Milvus (module doc). The search settings are copied when the engine is made, so
    an engine (and the indexes it opened) keeps its target when the config changes later. Connects
    lazily, on the first call that needs it."""

    name = "milvus"
    exhaustive = False
    #: ``write`` already rewrites only the changed items, but the vocabulary's document frequencies are
    #: recounted from every item's terms, so it takes the full ``BuildInput``
    incremental = False

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.settings = ws.config.search.model_copy()
        self.uri, self.lite = resolve_uri(ws, self.settings)
        self.where = str(self.lite) if self.lite else self.uri
        _pymilvus()  # a missing extra is an error now, not at the first search

    # -- plumbing --------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        return connect(self.ws, self.settings)

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except (EngineError, IndexStateError, MissingExtraError):
            raise
        except Exception as exc:  # noqa: BLE001 - MilvusException, grpc errors: one line for the user
            reason = getattr(exc, "message", "") or str(exc) or type(exc).__name__
            raise EngineError(f"milvus {self.where}: {what} failed ({reason})") from None

    def _names(self, backend: str) -> _Names:
        return _Names(self.settings.milvus_collection, backend)

    def _iterate(self, collection: str, fields: list[str], expr: str = "") -> Iterator[dict[str, Any]]:
        it = self._call(f"reading {collection}", lambda: self.client.query_iterator(
            collection, batch_size=2000, filter=expr, output_fields=fields, timeout=self.settings.milvus_timeout_s))
        try:
            while True:
                rows = self._call(f"reading {collection}", it.next)
                if not rows:
                    return
                yield from rows
        finally:
            it.close()

    def versions(self) -> dict[str, str]:
        return {"skillrag": __version__, "engine": "milvus", "format": str(FORMAT_VERSION),
                "dense_index": self.settings.milvus_index}

    # -- manifest ----------------------------------------------------------------------------------
    def header(self, backend: str) -> dict[str, Any] | None:
        """The stored manifest without per-item maps, or None when the collections are not there."""
        names = self._names(backend)
        if not all(self._call("listing collections", lambda n=n: self.client.has_collection(n))
                   for n in names.all()):
            return None
        rows = self._call("reading the manifest", lambda: self.client.get(
            names.meta, ids=["manifest"], output_fields=["value"], timeout=self.settings.milvus_timeout_s))
        if not rows:
            return None
        try:
            return json.loads(rows[0]["value"])
        except ValueError as exc:
            raise IndexStateError(f"milvus {self.where}: unreadable manifest of {names.meta} ({exc}); "
                                  f"run `skillrag index --backend {backend} --force`") from None

    def _put_header(self, backend: str, header: dict[str, Any]) -> None:
        value, cut = _fit(json.dumps(header, ensure_ascii=False), VARCHAR_MAX)
        if cut:
            raise EngineError(f"milvus {self.where}: the manifest is over {VARCHAR_MAX} bytes")
        self._call("writing the manifest", lambda: self.client.upsert(
            self._names(backend).meta, [{"key": "manifest", "value": value, "v": [0.0, 0.0]}]))

    def _item_rows(self, backend: str, fields: list[str]) -> list[dict[str, Any]]:
        return list(self._iterate(self._names(backend).items, fields))

    def read_manifest(self, backend: str) -> dict[str, Any] | None:
        header = self.header(backend)
        if header is None:
            return None
        rows = self._item_rows(backend, ["id", "hash", "content_hash"])
        return {**header, "items": {r["id"]: r["hash"] for r in rows},
                "content_hashes": {r["id"]: r["content_hash"] for r in rows} if backend == "direct" else {}}

    def is_ready(self, backend: str) -> bool:
        header = self.header(backend)
        return header is not None and header.get("state") == "ready"

    # -- building ----------------------------------------------------------------------------------
    def _create(self, backend: str, dim: int, params: dict[str, Any]) -> None:
        pm = _pymilvus()
        DataType, Function, FunctionType = pm.DataType, pm.Function, pm.FunctionType
        c = self.client
        names = self._names(backend)
        for name in names.all():
            if self._call("listing collections", lambda n=name: c.has_collection(n)):
                self._call(f"dropping {name}", lambda n=name: c.drop_collection(n))

        def filter_fields(schema: Any) -> None:
            schema.add_field("source_tag", DataType.VARCHAR, max_length=ID_MAX)
            schema.add_field("source_path", DataType.VARCHAR, max_length=4096)
            schema.add_field("title", DataType.VARCHAR, max_length=4096)

        items = c.create_schema(auto_id=False, enable_dynamic_field=False)
        items.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
        filter_fields(items)
        items.add_field("record", DataType.VARCHAR, max_length=VARCHAR_MAX)
        items.add_field("hash", DataType.VARCHAR, max_length=64)
        items.add_field("content_hash", DataType.VARCHAR, max_length=64)
        items.add_field("terms", DataType.VARCHAR, max_length=VARCHAR_MAX, enable_analyzer=True,
                        analyzer_params={"tokenizer": "whitespace"})
        items.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        items.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                    input_field_names=["terms"], output_field_names=["sparse"]))
        item_index = c.prepare_index_params()
        item_index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                             params={"bm25_k1": params["bm25_k1"], "bm25_b": params["bm25_b"]})

        passages = c.create_schema(auto_id=False, enable_dynamic_field=False)
        passages.add_field("pid", DataType.VARCHAR, is_primary=True, max_length=64)
        passages.add_field("item", DataType.VARCHAR, max_length=ID_MAX)
        filter_fields(passages)
        passages.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
        passage_index = c.prepare_index_params()
        passage_index.add_index("vec", index_type=self.settings.milvus_index, metric_type="IP")

        meta = c.create_schema(auto_id=False, enable_dynamic_field=False)
        meta.add_field("key", DataType.VARCHAR, is_primary=True, max_length=64)
        meta.add_field("value", DataType.VARCHAR, max_length=VARCHAR_MAX)
        meta.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants a vector field in every collection
        meta_index = c.prepare_index_params()
        meta_index.add_index("v", index_type="FLAT", metric_type="IP")
        for name, schema, index in ((names.items, items, item_index), (names.passages, passages, passage_index),
                                    (names.meta, meta, meta_index)):
            self._call(f"creating {name}", lambda n=name, s=schema, i=index: c.create_collection(
                n, schema=s, index_params=i, consistency_level="Strong"))

    def _upsert(self, collection: str, rows: Sequence[dict[str, Any]]) -> None:
        batch: list[dict[str, Any]] = []
        size = 0
        for row in rows:
            batch.append(row)
            size += sum(len(v) if isinstance(v, str) else 8 * len(v) if isinstance(v, list) else 8
                        for v in row.values())
            if size >= _BATCH_BYTES or len(batch) >= _BATCH_ROWS:
                self._call(f"writing {collection}", lambda b=batch: self.client.upsert(collection, b))
                batch, size = [], 0
        if batch:
            self._call(f"writing {collection}", lambda b=batch: self.client.upsert(collection, b))

    def _delete_ids(self, collection: str, ids: Sequence[str]) -> None:
        for i in range(0, len(ids), MAX_EXPR_IDS):
            chunk = list(ids[i : i + MAX_EXPR_IDS])
            self._call(f"deleting from {collection}", lambda c=chunk: self.client.delete(collection, ids=c))

    def write(self, data: BuildInput) -> None:
        backend, header = data.backend, data.header
        names = self._names(backend)
        old = self.header(backend)
        same_shape = old is not None and all(old.get(k) == header.get(k) for k in
                                             ("backend", "embedder_id", "dim", "params", "versions"))
        if data.rebuild or not same_shape:
            self._create(backend, int(header["dim"]), header["params"])
            stored: dict[str, str] = {}
        else:
            self._put_header(backend, {**old, "state": "building"})  # type: ignore[dict-item]
            stored = {r["id"]: r["hash"] for r in self._item_rows(backend, ["id", "hash"])}
        for it in data.items:
            if len(it.id.encode("utf-8")) > ID_MAX:
                raise EngineError(f"item id {it.id[:60]!r}… is over {ID_MAX} bytes, longer than the Milvus index holds")
        new_ids = {it.id for it in data.items}
        removed = [i for i in stored if i not in new_ids]
        for i in range(0, len(removed), MAX_EXPR_IDS):
            expr = filter_expr(None, "item", removed[i : i + MAX_EXPR_IDS])
            self._call(f"deleting from {names.passages}", lambda e=expr: self.client.delete(names.passages, filter=e))
        self._delete_ids(names.items, removed)

        spans: dict[int, list[int]] = {}
        for j, row in enumerate(np.asarray(data.passage_rows).tolist()):
            spans.setdefault(row, []).append(j)
        todo = [n for n, it in enumerate(data.items) if stored.get(it.id) != it.hash]
        truncated = 0
        for start in range(0, len(todo), 256):
            chunk = todo[start : start + 256]
            want: dict[str, tuple[int, str]] = {}  # pid -> (item index, passage text hash)
            for n in chunk:
                it = data.items[n]
                seen: Counter[str] = Counter()
                for j in spans.get(n, []):
                    h = data.passage_hashes[j]
                    seen[h] += 1
                    want[passage_id(it.id, it.source_tag, it.source_path, h, seen[h])] = (n, h)
            have: set[str] = set()
            if stored:
                ids = [data.items[n].id for n in chunk if data.items[n].id in stored]
                if ids:
                    have = {r["pid"] for r in self._iterate(names.passages, ["pid"], filter_expr(None, "item", ids))}
            self._delete_ids(names.passages, sorted(have - set(want)))
            fresh = [pid for pid in want if pid not in have]
            vecs = data.vectors([want[pid][1] for pid in fresh]) if fresh else np.zeros((0, 0), np.float32)
            rows = []
            for pid, vec in zip(fresh, vecs, strict=True):
                it = data.items[want[pid][0]]
                rows.append({"pid": pid, "item": it.id, "vec": vec.tolist(), **self._filter_values(it)})
            self._upsert(names.passages, rows)
            item_rows = []
            for n in chunk:
                it = data.items[n]
                terms, cut = _fit_terms(data.terms[n])
                truncated += cut
                record, rcut = _fit(json.dumps(it.record(), ensure_ascii=False), VARCHAR_MAX)
                if rcut:
                    raise EngineError(f"item {it.id!r}: its record is over {VARCHAR_MAX} bytes, more than Milvus "
                                      "stores in one field")
                item_rows.append({"id": it.id, "record": record, "hash": it.hash, "content_hash": it.content_hash,
                                  "terms": terms, **self._filter_values(it)})
            self._upsert(names.items, item_rows)

        df = Counter(t for terms in data.terms for t in set(terms))
        self._call(f"writing {names.meta}", lambda: self.client.delete(names.meta, filter='key like "df:%"'))
        self._upsert(names.meta, [{"key": f"df:{k:06d}", "value": v, "v": [0.0, 0.0]}
                                  for k, v in enumerate(_chunks(sorted(df.items())))])
        for name in names.all():
            self._call(f"flushing {name}", lambda n=name: self.client.flush(n))
        self._put_header(backend, {**header, "state": "ready", "build_id": uuid.uuid4().hex,
                                   "uri": self.where, "lexical_truncated": truncated})

    def update(self, data: BuildUpdate) -> int:
        raise NotImplementedError("the milvus engine takes a full BuildInput (incremental is False)")

    @staticmethod
    def _filter_values(it: Any) -> dict[str, str]:
        return {"source_tag": _fit(it.source_tag, ID_MAX)[0], "source_path": _fit(it.source_path, 4096)[0],
                "title": _fit(it.title, 4096)[0]}

    # -- searching ---------------------------------------------------------------------------------
    def open(self, backend: str) -> MilvusIndex | None:
        header = self.header(backend)
        if header is None:
            return None
        if header.get("state") != "ready":
            raise IndexStateError(f"the {backend} index in Milvus ({self.where}) is half-built: an update was "
                                  f"interrupted or is running; run `skillrag index --backend {backend}`")
        return MilvusIndex(self, backend, header)


def _chunks(pairs: list[tuple[str, int]], limit: int = 60000) -> Iterator[str]:
    """``[[term, df], ...]`` JSON arrays of at most ``limit`` bytes each."""
    out: list[tuple[str, int]] = []
    size = 2
    for pair in pairs:
        n = len(json.dumps(pair, ensure_ascii=False).encode("utf-8")) + 1
        if out and size + n > limit:
            yield json.dumps(out, ensure_ascii=False)
            out, size = [], 2
        out.append(pair)
        size += n
    if out:
        yield json.dumps(out, ensure_ascii=False)


class MilvusIndex:
    """One backend's index in Milvus, open for searching (module doc). Item records, the vocabulary and
    the manifest are read once, here; each search is one request per ranking (more only when
    aggregation or an exact filter needs a deeper look)."""

    def __init__(self, engine: MilvusEngine, backend: str, header: dict[str, Any]) -> None:
        self.engine = engine
        self.backend = backend
        self.names = engine._names(backend)
        self.timeout = engine.settings.milvus_timeout_s
        rows = engine._item_rows(backend, ["id", "record", "hash", "content_hash"])
        rows.sort(key=lambda r: r["id"])
        try:
            self.items: list[dict[str, Any]] = [json.loads(r["record"]) for r in rows]
        except ValueError as exc:
            raise IndexStateError(f"milvus {engine.where}: an item record of {self.names.items} is damaged ({exc}); "
                                  f"run `skillrag index --backend {backend} --force`") from None
        self.manifest = {**header, "items": {r["id"]: r["hash"] for r in rows},
                         "content_hashes": {r["id"]: r["content_hash"] for r in rows} if backend == "direct" else {}}
        self.index_of = {it["id"]: i for i, it in enumerate(self.items)}
        pairs: list[tuple[str, int]] = []
        for row in sorted(engine._iterate(self.names.meta, ["key", "value"], 'key like "df:%"'),
                          key=lambda r: r["key"]):
            pairs.extend((t, int(n)) for t, n in json.loads(row["value"]))
        self.terms = [t for t, _ in pairs]
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(self.terms)}
        self.df = np.asarray([n for _, n in pairs], dtype=np.int64)
        self._k1 = float(header.get("params", {}).get("bm25_k1", BM25_K1))
        n_items = max(len(self.items), 1)
        self._passages_per_item = max(1.0, float(header.get("passages", n_items)) / n_items)
        dense_index = str(header.get("versions", {}).get("dense_index", "FLAT"))
        self._dense_params: dict[str, Any] = {"metric_type": "IP"}
        self._approximate = dense_index != "FLAT"

    def _ranked(self, collection: str, data: Any, field: str, params: dict[str, Any], depth: int, limit: int,
                mask: np.ndarray | None, filters: SearchFilters | None, id_field: str) -> Ranking:
        """The first ``depth`` distinct allowed items of a Milvus search, searching deeper while needed."""
        if depth <= 0:
            return empty_ranking()
        ids = None
        if mask is not None:
            allowed = np.flatnonzero(mask)
            if not len(allowed):
                return empty_ranking()
            if len(allowed) <= MAX_EXPR_IDS and len(allowed) < len(self.items):
                ids = [self.items[i]["id"] for i in allowed]
        expr = filter_expr(filters, id_field, ids)
        out = ["item"] if id_field == "item" else []
        limit = max(1, min(limit, MAX_TOPK))
        c = self.engine.client
        while True:
            search_params = dict(params)
            if self._approximate and field == "vec":
                search_params["params"] = {"ef": max(limit, 64)}
            res = self.engine._call(f"searching {collection}", lambda lim=limit, sp=search_params: c.search(
                collection, data=[data], anns_field=field, limit=lim, filter=expr, output_fields=out,
                search_params=sp, timeout=self.timeout))[0]
            idx: list[int] = []
            scores: list[float] = []
            seen: set[int] = set()
            for hit in res:
                item = hit["entity"]["item"] if id_field == "item" else hit["id"]
                i = self.index_of.get(item)
                if i is None or i in seen or (mask is not None and not mask[i]):
                    continue
                seen.add(i)
                idx.append(i)
                scores.append(float(hit["distance"]))
                if len(idx) == depth:
                    break
            if len(idx) >= depth or len(res) < limit or limit >= MAX_TOPK:
                return np.asarray(idx, dtype=np.int64), np.asarray(scores, dtype=np.float32)
            limit = min(limit * 4, MAX_TOPK)

    def lexical(self, term_ids: Sequence[int], depth: int, mask: np.ndarray | None,
                filters: SearchFilters | None) -> Ranking:
        if not term_ids:
            return empty_ranking()
        text = " ".join(self.terms[t] for t in term_ids)
        idx, scores = self._ranked(self.names.items, text, "sparse", {"metric_type": "BM25"}, depth, depth, mask,
                                   filters, "id")
        return idx, scores / np.float32(self._k1 + 1)  # Milvus's BM25 is the Lucene variant times (k1 + 1)

    def dense(self, qvec: np.ndarray, depth: int, mask: np.ndarray | None,
              filters: SearchFilters | None) -> Ranking:
        limit = int(np.ceil(depth * self._passages_per_item * 1.5)) + 16
        return self._ranked(self.names.passages, np.asarray(qvec, dtype=np.float32).tolist(), "vec",
                            self._dense_params, depth, limit, mask, filters, "item")

    def check_current(self) -> None:
        """One request: the manifest row's build id and state, against those read when opened."""
        try:
            rows = self.engine.client.get(self.names.meta, ids=["manifest"], output_fields=["value"],
                                          timeout=self.timeout)
            header = json.loads(rows[0]["value"]) if rows else None
        except (EngineError, MissingExtraError):
            raise
        except Exception:  # noqa: BLE001 - the slow path tells an unreachable server from a dropped index
            header = self.engine.header(self.backend)
        if header is None or header.get("state") != "ready" or header.get("build_id") != self.manifest.get("build_id"):
            raise IndexStateError(f"the {self.backend} index in Milvus ({self.engine.where}) changed since it was "
                                  "opened (rebuilt or being updated); open it again (rerun the command or restart "
                                  "the service)")

    def close(self) -> None:
        """Nothing to release here: the client is shared per process (``disconnect_all`` ends it)."""
