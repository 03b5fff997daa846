"""The one analyzer: word tokens, stop words and Snowball stems, shared by BM25 and every package
that compares words.

Tokens are runs of two or more word characters of the lower-cased text (``(?u)\\b\\w\\w+\\b``, as
``bm25s`` and scikit-learn tokenise: ``tokens="words"``, the default), or runs of ASCII letters and
digits (``tokens="alnum"``: ``card_id`` and ``e-mail`` are two tokens each, ``5`` is one).
Stop-word lists are named (``STOPWORD_LISTS``):

* ``en``: the 33-word English list shipped with ``bm25s`` (``bm25s.stopwords.STOPWORDS_EN``), the
  default of the BM25 index (``search.stopwords``);
* ``en_plus``: the 179-word English list shipped with ``bm25s`` (``STOPWORDS_EN_PLUS``, NLTK's);
* ``content``: ``en_plus`` and the words of requests and chat that carry no content ("please",
  "want", "would", "help" …): what a case's or a question's *content words* leave out.

Stemming is Snowball (Porter 2) through PyStemmer; ``Analyzer.manifest()`` records the list, the
stemmer and the library versions, so an index records how its terms were made.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib import metadata

import Stemmer
from bm25s.stopwords import STOPWORDS_EN as _BM25S_EN
from bm25s.stopwords import STOPWORDS_EN_PLUS as _BM25S_EN_PLUS

from skillrag.errors import ConfigError

__all__ = ["STOPWORDS_EN", "STOPWORDS_EN_PLUS", "STOPWORD_LISTS", "STOP_WORDS", "Analyzer", "stem"]

#: The short English list of ``bm25s`` (33 words): the BM25 index's default.
STOPWORDS_EN = frozenset(_BM25S_EN)
#: The long English list of ``bm25s`` (179 words).
STOPWORDS_EN_PLUS = frozenset(w.lower() for w in _BM25S_EN_PLUS)
#: ``STOPWORDS_EN_PLUS`` and the words of requests and chat: never a content word of a case or question.
STOP_WORDS = STOPWORDS_EN_PLUS | frozenset(
    {"also", "would", "could", "like", "want", "wants", "need", "needs", "get", "got", "please", "thanks", "hi",
     "hello", "help", "one", "may", "might", "must", "shall", "let", "etc", "yes", "via", "per", "able"}
)
#: Stop-word lists by name (``search.stopwords`` takes one of these names, or none).
STOPWORD_LISTS: dict[str, frozenset[str]] = {"en": STOPWORDS_EN, "en_plus": STOPWORDS_EN_PLUS, "content": STOP_WORDS}

_TOKENS = {"words": re.compile(r"(?u)\b\w\w+\b"), "alnum": re.compile(r"[a-z0-9]+")}


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Stemmer.Stemmer:
    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        raise ConfigError(
            f"unknown stemmer language {language!r} (known: {', '.join(Stemmer.algorithms())})"
        ) from None


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English Snowball (Porter 2) stem of ``word``, lower-cased: ``Refueling`` → ``refuel``."""
    stemmed: str = _stemmer("english").stemWord(word.lower())  # PyStemmer ships no types
    return stemmed


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover - both are dependencies
        return "unknown"


class Analyzer:
    """Turns text into terms: tokens (module doc), less stop words, Snowball stems.

    ``stopwords``: a list name (``STOPWORD_LISTS``) or None; ``stemmer``: a Snowball language
    (``"english"``) or None; ``min_chars``: shorter tokens are dropped (tokens have at least 2);
    ``numbers``: False drops tokens of digits only; ``tokens``: ``words`` or ``alnum`` (module doc).
    Raises ``ConfigError`` for an unknown list, language or token rule. The default is the BM25
    index's analyzer.
    """

    def __init__(self, stopwords: str | None = "en", stemmer: str | None = "english", *,
                 min_chars: int = 2, numbers: bool = True, tokens: str = "words") -> None:
        if stopwords is not None and stopwords not in STOPWORD_LISTS:
            raise ConfigError(f"unknown stop-word list {stopwords!r} (known: {', '.join(STOPWORD_LISTS)} or none)")
        if tokens not in _TOKENS:
            raise ConfigError(f"unknown token rule {tokens!r} (known: {', '.join(_TOKENS)})")
        self.tokens = tokens
        self._token = _TOKENS[tokens]
        self.stopwords = stopwords
        self.stemmer_name = stemmer
        self.min_chars = min_chars
        self.numbers = numbers
        self.stop = STOPWORD_LISTS[stopwords] if stopwords else frozenset()
        self._stemmer = _stemmer(stemmer) if stemmer else None
        self._stem = lru_cache(maxsize=65536)(self._stem_word)

    def _stem_word(self, word: str) -> str:
        return self._stemmer.stemWord(word) if self._stemmer is not None else word

    def params(self) -> dict[str, str | None]:
        """The settings that change the terms of a BM25 index (``search.stopwords``, ``search.stemmer``)."""
        return {"stopwords": self.stopwords, "stemmer": self.stemmer_name}

    def versions(self) -> dict[str, str]:
        """What changes the terms besides ``params``, compared when an index is opened: ``pystemmer`` (the
        library version, when stemming: 2.2 stems "internationally" to ``intern``, 3.1 to ``internat``)
        and ``stopwords_sha256`` (first 16 hex digits of the sorted list, when one is used)."""
        out: dict[str, str] = {}
        if self._stemmer is not None:
            out["pystemmer"] = str(Stemmer.version())
        if self.stop:
            out["stopwords_sha256"] = hashlib.sha256("\n".join(sorted(self.stop)).encode()).hexdigest()[:16]
        return out

    def manifest(self) -> dict[str, object]:
        """How the terms are made, for an index manifest: the settings, the stop-list size and the
        versions of the libraries behind them (PyStemmer for the stems, bm25s for the lists)."""
        return {**self.params(), "tokens": self.tokens, "min_chars": self.min_chars, "numbers": self.numbers,
                "stopword_count": len(self.stop),
                "versions": {"PyStemmer": _version("PyStemmer"), "bm25s": _version("bm25s")}}

    def words(self, text: str, *, exclude: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """The tokens of ``text`` that make terms, lower case, in order with repeats (stop words,
        short tokens, bare numbers when ``numbers`` is False and anything in ``exclude`` left out)."""
        out = []
        for w in self._token.findall(text.lower()):
            if w in self.stop or w in exclude or len(w) < self.min_chars or (not self.numbers and w.isdigit()):
                continue
            out.append(w)
        return out

    def terms(self, text: str, *, exclude: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """Terms of ``text`` in order, with repeats: ``words`` stemmed."""
        return [self._stem(w) for w in self.words(text, exclude=exclude)]

    def stem(self, word: str) -> str:
        """The term of one lower-case word (stemmed when the analyzer stems), stop words not removed."""
        return self._stem(word)
