"""BM25 (Robertson & Zaragoza, 2009), Lucene variant: the one set-up every BM25 scorer of the package
uses, so that they share ``k1`` and ``b`` (``search.bm25_k1`` / ``search.bm25_b``) and one formula.

``score(q, d) = Σ_t idf(t) · tf / (tf + k1·(1 − b + b·|d|/avgdl))`` with
``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``: the ``lucene`` method of ``bm25s``, which
``BM25.index`` builds (Lucene drops Robertson's constant factor ``k1 + 1``, which changes no order). The search index (``search.engines.embedded``), the preview passage of a hit
(``search._passages``), the wiki builder's candidate pages (``wiki.candidates``) and the extractive
harness's passage and catalogue scoring all take a ``BM25`` made from the workspace's settings
(``BM25.of(ws.config.search)``).

The search index keeps its documents' term counts (``TermCounts``) beside the ``bm25s`` index, so an
update re-analyses only the documents that changed: ``BM25.index_counts`` turns counts into the same
``bm25s`` index (the same scores, bit for bit) that ``BM25.index`` builds from the terms, with every
step vectorised (numpy): what an update repeats for the whole corpus is numeric work on arrays (N,
the average length, df and idf from the stored counts), never the text.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import bm25s
import numpy as np

__all__ = ["BM25", "BM25_B", "BM25_K1", "TermCounts"]

#: The default term-frequency saturation ``k1`` (``search.bm25_k1``'s default; a test pins the two).
BM25_K1 = 1.5
#: The default length normalisation ``b`` (``search.bm25_b``'s default).
BM25_B = 0.75


#: The dtype ``bm25s`` computes a term's tf part in: its float32 term counts plus a float64 numpy scalar,
#: promoted as this numpy promotes them (float64 under NEP 50, float32 under the older value-based rule).
_TFC_DTYPE = (np.zeros(1, dtype=np.float32) + np.float64(0.5)).dtype


@dataclass(frozen=True)
class TermCounts:
    """The term counts of a corpus, one row per document in corpus order (a CSR matrix).

    ``vocab``: the terms, sorted, each in at least one document (the canonical form: the same corpus
    gives the same arrays however it was assembled); ``ptr``: ``(n_docs + 1,)`` int64, document ``d``'s
    entries are ``ptr[d]:ptr[d+1]``; ``term_ids``: ``(nnz,)`` int32 into ``vocab``, ascending within a
    document; ``tf``: ``(nnz,)`` int32 counts (≥ 1). A document with no terms counts as the one term
    ``""``, as ``BM25.index`` is given it (``bm25s`` needs a term per document).
    """

    vocab: tuple[str, ...]
    ptr: np.ndarray
    term_ids: np.ndarray
    tf: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.ptr) - 1

    @classmethod
    def of(cls, docs: Sequence[Sequence[str]]) -> TermCounts:
        """The counts of ``docs`` (each document its analysed terms, repeats counted). Memory: a few
        arrays of the distinct (document, term) pairs, never one of every token."""
        ids: dict[str, int] = {}
        term_ids, tfs = array("i"), array("i")
        lens = np.empty(len(docs), dtype=np.int64)
        for d, doc in enumerate(docs):
            bag = Counter(doc or [""])
            term_ids.extend([ids.setdefault(t, len(ids)) for t in bag])
            tfs.extend(bag.values())
            lens[d] = len(bag)
        vocab = sorted(ids)
        new_id = np.empty(len(ids), dtype=np.int64)
        new_id[[ids[t] for t in vocab]] = np.arange(len(vocab))
        term = new_id[np.frombuffer(term_ids, dtype=np.int32)] if len(term_ids) else np.zeros(0, np.int64)
        ptr = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        # ascending term ids within each document: sort on (document, term)
        order = np.argsort(np.repeat(np.arange(len(docs), dtype=np.int64), lens) * max(1, len(vocab)) + term,
                           kind="stable")
        tf = np.frombuffer(tfs, dtype=np.int32) if len(tfs) else np.zeros(0, np.int32)
        return cls(tuple(vocab), ptr, term[order].astype(np.int32), tf[order].copy())

    def select(self, rows: Sequence[int] | np.ndarray, extra: TermCounts | None = None) -> TermCounts:
        """A corpus of these documents in a new order: ``rows[i]`` is document ``i`` of the result, a
        position in this corpus, or ``n_docs + j`` for document ``j`` of ``extra``. Work: the entries of
        the result (numpy), plus sorting the vocabulary when ``extra`` brings new terms."""
        src = self if extra is None else self._concat(extra)
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = src.ptr[rows], src.ptr[rows + 1]
        lens = ends - starts
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        take = np.repeat(starts - ptr[:-1], lens) + np.arange(int(ptr[-1]), dtype=np.int64)
        term = src.term_ids[take]
        present = np.bincount(term, minlength=len(src.vocab)) > 0
        if extra is None and bool(present.all()):
            return TermCounts(src.vocab, ptr, term, src.tf[take])
        # both parts' vocabularies are sorted, so renumbering by the sorted union keeps every
        # document's term ids ascending: no entry is sorted again
        keep = sorted(np.flatnonzero(present).tolist(), key=lambda i: src.vocab[i])
        new_id = np.full(len(src.vocab), -1, dtype=np.int32)
        new_id[keep] = np.arange(len(keep), dtype=np.int32)
        return TermCounts(tuple(src.vocab[i] for i in keep), ptr, new_id[term], src.tf[take])

    def _concat(self, other: TermCounts) -> TermCounts:
        """Documents of ``self`` then of ``other``, over the union of the vocabularies (not canonical:
        new terms at the end; ``select`` makes it canonical)."""
        ids = {t: i for i, t in enumerate(self.vocab)}
        vocab = list(self.vocab)
        remap = np.empty(len(other.vocab), dtype=np.int32)
        for j, t in enumerate(other.vocab):
            remap[j] = ids.setdefault(t, len(vocab))
            if remap[j] == len(vocab):
                vocab.append(t)
        return TermCounts(tuple(vocab), np.concatenate([self.ptr, other.ptr[1:] + self.ptr[-1]]),
                          np.concatenate([self.term_ids, remap[other.term_ids]]),
                          np.concatenate([self.tf, other.tf]))

    def arrays(self) -> dict[str, np.ndarray]:
        """``ptr``, ``term_ids``, ``tf`` (for ``np.savez``; the vocabulary is stored by its owner)."""
        return {"ptr": self.ptr, "term_ids": self.term_ids, "tf": self.tf}

    @classmethod
    def from_arrays(cls, vocab: Sequence[str], arrays: Any) -> TermCounts:
        """The inverse of ``arrays``; raises ``ValueError`` when they do not fit together."""
        ptr = np.asarray(arrays["ptr"], dtype=np.int64)
        term = np.asarray(arrays["term_ids"], dtype=np.int32)
        tf = np.asarray(arrays["tf"], dtype=np.int32)
        if (len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(term) or len(tf) != len(term)
                or np.any(np.diff(ptr) < 1) or (len(term) and (term.min() < 0 or term.max() >= len(vocab)))):
            raise ValueError("term counts do not match their vocabulary")
        return cls(tuple(vocab), ptr, term, tf)


class _Settings(Protocol):
    bm25_k1: float
    bm25_b: float


@dataclass(frozen=True)
class BM25:
    """The BM25 parameters (unitless): ``k1`` term-frequency saturation (> 0), ``b`` length
    normalisation (0..1)."""

    k1: float = BM25_K1
    b: float = BM25_B

    @classmethod
    def of(cls, settings: _Settings) -> BM25:
        """The parameters of ``settings`` (``SearchSettings``: ``bm25_k1``, ``bm25_b``)."""
        return cls(float(settings.bm25_k1), float(settings.bm25_b))

    @staticmethod
    def idf(df: Any, n: int) -> Any:
        """``ln(1 + (n − df + 0.5) / (df + 0.5))`` for a document frequency ``df`` (a number or a numpy
        array) among ``n`` documents."""
        return np.log1p((n - np.asarray(df, dtype=np.float64) + 0.5) / (np.asarray(df, dtype=np.float64) + 0.5))

    def weight(self, tf: float, length: float, avg_length: float) -> float:
        """The term-frequency part of a term's score: ``tf / (tf + k1·(1 − b + b·length/avg))``."""
        return tf / (tf + self.k1 * (1 - self.b + self.b * length / avg_length))

    def params(self) -> dict[str, Any]:
        """What an index records of them (its manifest's ``params``)."""
        return {"bm25_k1": self.k1, "bm25_b": self.b, "bm25_method": "lucene"}

    def index(self, corpus: list[list[str]]) -> bm25s.BM25:
        """A ``bm25s`` index of ``corpus`` (each document its terms) with these parameters."""
        index = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        index.index(corpus, show_progress=False)
        return index

    def index_counts(self, counts: TermCounts) -> bm25s.BM25:
        """The ``bm25s`` index of the corpus ``counts`` describes, its vocabulary ``counts.vocab`` in that
        order: every document's scores equal those of ``index`` over the same terms (same float32
        values: ``bm25s``'s formula and dtypes, vectorised)."""
        n = counts.n_docs
        lengths = np.add.reduceat(counts.tf.astype(np.int64), counts.ptr[:-1]) if n else np.zeros(0, np.int64)
        avg = lengths.mean() if n else np.float64(1.0)
        df = np.bincount(counts.term_ids, minlength=len(counts.vocab))
        # bm25s: idf by math.log per term, stored as float32; tf part per document with l_d / l_avg
        idf = np.array([math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df.tolist()], dtype=np.float32)
        norm = self.k1 * ((1 - self.b) + self.b * lengths.astype(np.float64) / avg)
        doc = np.repeat(np.arange(n, dtype=np.int64), np.diff(counts.ptr))
        tf = counts.tf.astype(np.float32).astype(_TFC_DTYPE)
        tfc = tf / (tf + norm[doc].astype(_TFC_DTYPE))
        data = (idf[counts.term_ids] * tfc).astype(np.float32)
        # CSC over terms, documents ascending; 16-bit keys sort by radix (a vocabulary below 65536 terms)
        keys = counts.term_ids.astype(np.uint16) if len(counts.vocab) <= 1 << 16 else counts.term_ids
        by_term = np.argsort(keys, kind="stable")
        indptr = np.zeros(len(counts.vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        index = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        index.scores = {"data": data[by_term], "indices": doc[by_term].astype(np.int32),
                        "indptr": indptr.astype(np.int32 if len(data) < 2**31 else np.int64), "num_docs": n}
        index.vocab_dict = {t: i for i, t in enumerate(counts.vocab)}
        index.nonoccurrence_array = None  # the lucene method has none
        return index
