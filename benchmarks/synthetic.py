"""Synthetic corpora for the scale benchmarks (``engines.py``, ``reindex.py``, ``scale.py``).

The τ²-bench banking articles replicated, 15 % of each replica's words replaced by other corpus words,
titles numbered; dense vectors prefilled into the workspace's vector store (random unit vectors, 384-d)
in place of embeddings, which would take hours on 2 cores (8 passages/s under load). ``RandomEmbedder``
stands in for the model at query time: a seeded random unit vector per text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skillrag.search._items import collect_items, passages, text_hash
from skillrag.search.embedders import l2_normalize
from skillrag.search.vectors import VectorStore
from skillrag.workspace import Workspace

__all__ = ["DIM", "RandomEmbedder", "prefill_vectors", "synthetic_corpus"]

DIM = 384


class RandomEmbedder:
    """A seeded random unit vector per text (sha256 of the text seeds the generator): stands in for a
    model where embedding would take hours; same text, same vector."""

    id = f"random:{DIM}"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little"))
                .standard_normal(DIM) for t in texts]
        return l2_normalize(np.asarray(rows, dtype=np.float32).reshape(len(rows), DIM))


def synthetic_corpus(docs: list[dict[str, str]], replicas: int, path: Path, seed: int = 7) -> int:
    """Write ``docs`` × ``replicas`` perturbed copies as JSONL; returns the number of articles."""
    rng = np.random.default_rng(seed)
    vocab = np.array(sorted({w for d in docs for w in d["content"].split()}))
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for r in range(replicas):
            for d in docs:
                words = np.array(d["content"].split())
                if r and len(words):
                    swap = rng.random(len(words)) < 0.15
                    words[swap] = vocab[rng.integers(0, len(vocab), int(swap.sum()))]
                title = d["title"] if not r else f"{d['title']} {r}"
                rec = {"id": d["id"] if not r else f"{d['id']}__r{r}", "title": title,
                       "content": " ".join(words.tolist())}
                fh.write(json.dumps(rec) + "\n")
                n += 1
    return n


def prefill_vectors(ws: Workspace, emb: RandomEmbedder) -> int:
    """Random vectors for every passage of the direct backend, stored as if embedded."""
    s = ws.config.search
    items, _ = collect_items(ws, "direct")
    hashes = sorted({text_hash(p) for it in items for p in passages(it.title, it.text, s.passage_words,
                                                                     s.passage_overlap)})
    store = VectorStore(ws)
    rng = np.random.default_rng(11)
    for i in range(0, len(hashes), 20000):
        chunk = hashes[i : i + 20000]
        store.put(emb.id, chunk, l2_normalize(rng.standard_normal((len(chunk), DIM)).astype(np.float32)))
    return len(hashes)
