"""Test doubles for the search package: a deterministic embedder and a fake navigation layer."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from skillrag.errors import UserError
from skillrag.search.embedders._base import l2_normalize

__all__ = ["FakePage", "FakePageSource", "HashEmbedder"]

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic bag-of-words vectors: each lower-cased word hashed (blake2b) to one of ``dim``
    signed buckets, rows L2-normalised. Texts sharing words are similar; no model, no randomness.

    ``calls`` counts ``embed`` calls and ``texts_embedded`` the texts they carried (to test caching).
    """

    def __init__(self, dim: int = 64, *, salt: str = "") -> None:
        self._dim = dim
        self.salt = salt
        self.id = f"hash:{dim}{':' + salt if salt else ''}"
        self.calls = 0
        self.texts_embedded: list[str] = []

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls += 1
        self.texts_embedded.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in _WORD.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b((self.salt + w).encode(), digest_size=8).digest(), "little")
                out[i, h % self._dim] += 1.0 if (h >> 63) & 1 else -1.0
        return l2_normalize(out)


@dataclass
class FakePage:
    """Stands in for ``skillrag.wiki.Page``: ``id``, ``title``, ``kind``, ``intent``, ``search_text()``,
    ``article_ids()``."""

    id: str
    title: str
    text: str
    cites: list[str] = field(default_factory=list)
    kind: str = "topic"
    intent: str = ""

    def search_text(self) -> str:
        return self.text

    def article_ids(self) -> list[str]:
        return list(dict.fromkeys(self.cites))


class FakePageSource:
    """A navigation layer held in memory; pass it as ``pages=`` to ``build_index``/``open_retriever``.

    ``pages=None`` means "no layer" (as a workspace without ``skillrag wiki build``).
    """

    def __init__(self, pages: list[FakePage] | None) -> None:
        self.pages = pages

    def load_pages(self, ws: object) -> list[FakePage]:
        return list(self.pages or [])

    def load_page(self, ws: object, page_id: str) -> FakePage:
        for p in self.pages or []:
            if p.id == page_id:
                return p
        raise UserError(f"no navigation page {page_id!r}")

    def layer_fingerprint(self, ws: object) -> str | None:
        if self.pages is None:
            return None
        h = hashlib.sha256()
        for p in self.pages:
            h.update(f"{p.id}\0{p.title}\0{p.text}\0{','.join(p.cites)}\n".encode())
        return h.hexdigest()
