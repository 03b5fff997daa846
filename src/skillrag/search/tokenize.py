"""Lexical analysis for BM25: lower-case word tokens, English stop words removed, Snowball stems.

The stop-word list is the English list shipped with ``bm25s``; stemming is PyStemmer (Snowball).
Both are configurable (``search.stopwords``, ``search.stemmer``) and recorded in the index manifest.
"""

from __future__ import annotations

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

    def terms(self, text: str) -> list[str]:
        """Terms of ``text`` in order, with repeats (stop words dropped, stems applied)."""
        return [self._stem(w) for w in _TOKEN.findall(text.lower()) if w not in self._stop]
