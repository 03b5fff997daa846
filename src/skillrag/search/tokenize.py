"""Lexical analysis for BM25: lower-case word tokens, English stop words removed, Snowball stems.

The stop-word list is the English list shipped with ``bm25s``; stemming is PyStemmer (Snowball).
Both are configurable (``search.stopwords``, ``search.stemmer``) and recorded in the index manifest,
with what changes their output besides the settings (``Analyzer.versions``): PyStemmer's version
(2.2 stems "internationally" to ``intern``, 3.1 to ``internat``) and the stop-word list's sha256.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from skillrag.errors import ConfigError

__all__ = ["Analyzer"]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = {"en": frozenset(STOPWORDS_EN)}


class Analyzer:
    """Turns text into BM25 terms. ``stopwords``: ``"en"`` or None; ``stemmer``: a Snowball language
    (e.g. ``"english"``) or None. Raises ``ConfigError`` for an unknown list or language."""

    def __init__(self, stopwords: str | None = "en", stemmer: str | None = "english") -> None:
        if stopwords is not None and stopwords not in _STOPWORDS:
            raise ConfigError(f"unknown stop-word list {stopwords!r} (known: {', '.join(_STOPWORDS)} or none)")
        self.stopwords = stopwords
        self.stemmer_name = stemmer
        self._stop = _STOPWORDS[stopwords] if stopwords else frozenset()
        if stemmer:
            try:
                self._stemmer = Stemmer.Stemmer(stemmer)
            except KeyError:
                raise ConfigError(
                    f"unknown stemmer language {stemmer!r} (known: {', '.join(Stemmer.algorithms())})"
                ) from None
        else:
            self._stemmer = None
        self._stem = lru_cache(maxsize=65536)(self._stem_word)

    def _stem_word(self, word: str) -> str:
        return self._stemmer.stemWord(word) if self._stemmer is not None else word

    def params(self) -> dict[str, str | None]:
        return {"stopwords": self.stopwords, "stemmer": self.stemmer_name}

    def versions(self) -> dict[str, str]:
        """What changes the terms besides ``params``: ``pystemmer`` (the library version, when stemming)
        and ``stopwords_sha256`` (first 16 hex digits of the sorted list, when one is used)."""
        out: dict[str, str] = {}
        if self._stemmer is not None:
            out["pystemmer"] = str(Stemmer.version())
        if self._stop:
            out["stopwords_sha256"] = hashlib.sha256("\n".join(sorted(self._stop)).encode()).hexdigest()[:16]
        return out

    def terms(self, text: str) -> list[str]:
        """Terms of ``text`` in order, with repeats (stop words dropped, stems applied)."""
        return [self._stem(w) for w in _TOKEN.findall(text.lower()) if w not in self._stop]
