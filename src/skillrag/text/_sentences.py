"""Sentences with exact offsets, and the sentences that point back to the one before.

``sentences`` cuts text with ``pysbd`` (rule-based sentence boundary detection, Sadvilkar & Neumann,
2020), so "e.g.", "U.S.", "$5.00" or "No. 4" never end a sentence. Offsets are character offsets into
the text given, whitespace trimmed, so ``text[start:end]`` is always the sentence as written. pysbd
ends a sentence at a line break too. Repairs:

* when pysbd fails on an input (it does on a few odd ones) or returns spans that are not slices of
  the text, a plain rule cuts after ``.``, ``!`` or ``?`` followed by white space and an upper-case
  letter, a digit, a quote or a bracket;
* a piece that does not end a sentence (no closing punctuation) followed by one that starts in lower
  case is one sentence (pysbd cut it at an abbreviation it did not know, or at a wrapped line);
* a closing quote or bracket that pysbd cut off stays with its sentence, and so does a piece that
  starts with a comma, a semicolon or a colon;
* an inline enumeration ("Requirements: 1) verified, 2) of age.") that pysbd cut before each ``1)``,
  ``(b)`` or ``2.`` on one line is one sentence.

Text with no line break and no ``.``, ``!``, ``?`` or ``…`` before a later word is one sentence
without asking pysbd (the common case, and pysbd is slow).

``refers_back`` tells a sentence that points back within its first words ("Escalate these to …",
"They must …"); ``with_antecedents`` joins each such sentence to the one before it, so it is never
quoted without what it refers to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import pysbd

__all__ = ["refers_back", "sentence_texts", "sentences", "with_antecedents"]

_FALLBACK = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z\"'(`*])")
#: Where a sentence might end inside the text: without one, the text is one sentence (pysbd is not asked).
_MAY_END = re.compile(r"[.!?\u2026]\S*\s+\S|[\r\n]\s*\S")
_ENDS = re.compile(r"[.!?:;][\"')\]]*$")
_CLOSING = re.compile(r"[\"')\]\u2019\u201d]+")
#: An inline enumerator ("1) ", "(b) ", "2. "): pysbd cuts before one even inside a sentence.
_ENUMERATOR = re.compile(r"\(?(?:\d{1,2}|[a-z])[.)]\s")
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u2019\u201d]*$")
#: A sentence that points back within its first words ("Escalate these to …", "They must …").
_BACK_REFERENCE = re.compile(r"^\W*(?:[\w'`]+\W+){0,3}?(?:these|those|they|them|such|this|it)\b(?!\s*[:(])",
                             re.IGNORECASE)


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _raw_spans(text: str) -> list[tuple[int, int]]:
    if not _MAY_END.search(text):
        return [(0, len(text))]
    try:
        segs = _segmenter().segment(text)
        ok = bool(segs) and all(text[s.start : s.end] == s.sent for s in segs)
    except (ValueError, IndexError, TypeError, AttributeError):  # pysbd fails on a few odd inputs
        segs, ok = [], False
    if ok:
        return [(s.start, s.end) for s in segs]
    raw, pos = [], 0
    for m in _FALLBACK.finditer(text):
        raw.append((pos, m.start()))
        pos = m.end()
    raw.append((pos, len(text)))
    return raw


@lru_cache(maxsize=16384)
def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    for s, e in _raw_spans(text):
        chunk = text[s:e]
        st = s + len(chunk) - len(chunk.lstrip())
        en = s + len(chunk.rstrip())
        if en > st:
            spans.append((st, en))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        prev = text[merged[-1][0] : merged[-1][1]] if merged else ""
        if merged and (_CLOSING.fullmatch(text[s:e]) or text[s] in ",;:"
                       or text[s : s + 1].islower() and not _ENDS.search(prev)
                       or _ENUMERATOR.match(text, s) and not _SENTENCE_END.search(prev)
                       and "\n" not in text[merged[-1][1] : s]):
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return tuple(merged)


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` in order (module doc): offsets into ``text``,
    surrounding white space left out; empty for blank text."""
    return list(_sentences(text))


def sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` as strings (``text[start:end]`` of each of ``sentences``)."""
    return [text[a:b] for a, b in _sentences(text)]


def refers_back(sentence: str) -> bool:
    """True when ``sentence`` points back within its first four words (these / those / they / them /
    such / this / it, not followed by ``:`` or ``(``): quoted alone it drops what it depends on."""
    return _BACK_REFERENCE.match(sentence) is not None


def with_antecedents(text: str, spans: Sequence[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """``spans`` (sentences of one paragraph or list item of ``text``, in order) with each sentence
    that ``refers_back`` joined to the one before it, as long as the two fit in ``limit`` characters:
    "Medical cancellations waive the fee. Escalate these to Member Care." is one span."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and b - out[-1][0] <= limit and refers_back(text[a:b]):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out
