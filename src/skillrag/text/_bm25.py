"""BM25 (Robertson & Zaragoza, 2009), Lucene variant: the one set-up every BM25 scorer of the package
uses, so that they share ``k1`` and ``b`` (``search.bm25_k1`` / ``search.bm25_b``) and one formula.

``score(q, d) = Σ_t idf(t) · tf / (tf + k1·(1 − b + b·|d|/avgdl))`` with
``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``: the ``lucene`` method of ``bm25s``, which
``BM25.index`` builds (Lucene drops Robertson's constant factor ``k1 + 1``, which changes no order). The search index (``search.engines.embedded``), the preview passage of a hit
(``search._passages``), the wiki builder's candidate pages (``wiki.candidates``) and the extractive
harness's passage and catalogue scoring all take a ``BM25`` made from the workspace's settings
(``BM25.of(ws.config.search)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import bm25s
import numpy as np

__all__ = ["BM25", "BM25_B", "BM25_K1"]

#: The default term-frequency saturation ``k1`` (``search.bm25_k1``'s default; a test pins the two).
BM25_K1 = 1.5
#: The default length normalisation ``b`` (``search.bm25_b``'s default).
BM25_B = 0.75


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
