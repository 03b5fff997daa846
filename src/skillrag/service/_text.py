"""Small text helpers for the service: key terms of a question and the best passage of a body.

Key terms are lower-cased word tokens minus English stop words (bm25s ``STOPWORDS_EN_PLUS``);
overlap is counted on Snowball stems (PyStemmer) so ``accounts`` matches ``account``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

__all__ = ["Passage", "best_passages", "key_terms", "stems"]

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
_STOP = frozenset(w.lower() for w in STOPWORDS_EN_PLUS)
# A passage ends after . ! ? or a line break; keeps offsets so a quote is an exact slice of the body.
_PASSAGE = re.compile(r"[^\n.!?]*(?:[.!?]+|\n|$)")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def key_terms(text: str) -> list[str]:
    """Distinct non-stop-word tokens of ``text``, lower case, in first-seen order."""
    seen: list[str] = []
    for tok in _WORD.findall(text or ""):
        t = tok.lower().strip("'_-")
        if len(t) < 2 or t in _STOP or t in seen:
            continue
        seen.append(t)
    return seen


def stems(text: str) -> set[str]:
    """Snowball stems of the key terms of ``text``."""
    return set(_stemmer().stemWords(key_terms(text)))


@dataclass(frozen=True)
class Passage:
    """``body[start:end]`` with the number of query stems it contains (``overlap``)."""

    start: int
    end: int
    text: str
    overlap: int


def best_passages(body: str, query: str, *, min_chars: int = 40, max_chars: int = 400, n: int = 1) -> list[Passage]:
    """The ``n`` passages of ``body`` sharing the most query stems, best first (ties: earlier first).

    A passage is a sentence or line (not a Markdown heading), widened with the following ones until
    it has ``min_chars`` characters and cut to at most ``max_chars``; its text is always exactly ``body[start:end]``
    (surrounding white space trimmed). Passages with no overlap are not returned.
    """
    want = stems(query)
    if not want or not body:
        return []
    spans = [(m.start(), m.end()) for m in _PASSAGE.finditer(body) if m.end() > m.start()]
    found: list[Passage] = []
    for i, (s, e) in enumerate(spans):
        head = body[s:e].strip()
        if not head or head.startswith("#"):
            continue  # blank lines and Markdown headings do not start a quote
        j = i
        while e - s < min_chars and j + 1 < len(spans):
            j += 1
            e = spans[j][1]
        e = min(e, s + max_chars)
        raw = body[s:e]
        lead = len(raw) - len(raw.lstrip())
        s2, e2 = s + lead, s + len(raw.rstrip())
        if e2 - s2 < min(min_chars, len(body.strip())):
            continue
        overlap = len(want & stems(body[s2:e2]))
        if overlap:
            found.append(Passage(s2, e2, body[s2:e2], overlap))
    found.sort(key=lambda p: (-p.overlap, p.start))
    out: list[Passage] = []
    for p in found:
        if all(p.end <= q.start or p.start >= q.end for q in out):
            out.append(p)
        if len(out) == n:
            break
    return out
