"""The one store of passage vectors: table ``search_vectors`` in the workspace's ``store.sqlite``.

Keyed by (embedder id, sha256 of the passage text), each row a ``dim`` float32 vector (L2-normalised)
as raw bytes. A build stores each embedded batch at once, so an interrupted build resumes where it
stopped, and a passage already embedded by the same embedder is never embedded again: not after an
edit elsewhere in the corpus, a change of BM25 settings, or a switch of engine. The ``embedded``
engine reads its vectors from here when it opens an index (it keeps no second copy); the ``milvus``
engine uploads them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from skillrag.errors import IndexStateError
from skillrag.workspace import Schema, Workspace

__all__ = ["VectorStore"]

VECTORS_SQL = """
CREATE TABLE IF NOT EXISTS search_vectors (
    embedder  TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (embedder, text_hash)
);
"""
#: The vector table in the workspace store, by version (``skillrag.workspace.schema``: append only).
SCHEMA = Schema("search.vectors", (VECTORS_SQL,))
#: Hashes per ``IN (...)`` query (well under SQLite's host-parameter limit).
_CHUNK = 900


class VectorStore:
    """Passage vectors of one workspace, by embedder id and passage-text hash."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        with ws.connect(SCHEMA):
            pass

    def get(self, embedder_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """``{hash: (dim,) float32}`` for the hashes the store holds (missing ones are absent)."""
        wanted = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        with self.ws.connect() as conn:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                q = (f"SELECT text_hash, vector FROM search_vectors WHERE embedder = ? "
                     f"AND text_hash IN ({','.join('?' * len(chunk))})")
                for h, blob in conn.execute(q, [embedder_id, *chunk]):
                    out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put(self, embedder_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` under ``hashes[i]`` in one transaction (replacing any earlier row)."""
        with self.writer() as put:
            put(embedder_id, hashes, vectors)

    @contextmanager
    def writer(self) -> Iterator[Callable[[str, Sequence[str], np.ndarray], None]]:
        """A ``put`` on one open connection, for many batches in a row; each call commits at once."""
        with self.ws.connect() as conn:
            def put(embedder_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
                vecs = np.asarray(vectors, dtype=np.float32)
                with conn:
                    conn.executemany(
                        "INSERT OR REPLACE INTO search_vectors (embedder, text_hash, vector) VALUES (?, ?, ?)",
                        [(embedder_id, h, v.tobytes()) for h, v in zip(hashes, vecs, strict=True)],
                    )

            yield put

    def matrix(self, embedder_id: str, hashes: Sequence[str], dim: int) -> np.ndarray:
        """``(len(hashes), dim)`` float32: row ``i`` is the vector of ``hashes[i]`` (repeats allowed).

        Raises ``IndexStateError`` when a vector is missing or has another length (the index no
        longer matches the store: rebuild it).
        """
        out = np.empty((len(hashes), dim), dtype=np.float32)
        rows: dict[str, list[int]] = {}
        for i, h in enumerate(hashes):
            rows.setdefault(h, []).append(i)
        found = 0
        for h, vec in self.get(embedder_id, rows).items():
            if vec.shape != (dim,):
                raise IndexStateError(f"a stored vector has {vec.shape[0]} dimensions, not {dim}; "
                                      "run `skillrag index --force`")
            out[rows[h]] = vec
            found += 1
        if found != len(rows):
            raise IndexStateError(f"{len(rows) - found} passage vectors of the index are missing from the "
                                  f"vector store ({self.ws.store_path}); run `skillrag index --force`")
        return out
