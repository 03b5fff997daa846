"""The preview of a hit: the passage of the article that best matches the query, and its section.

An article body is cut into passages at its structure: its reading units (``skillrag.text.reading_units``:
a paragraph, one list item with its marker, one table row, a code block; a paragraph or item longer than
``MAX_CHARS`` is cut into its sentences; Markdown headings are not passages, they name the section; rules
are not passages either). The passages are scored with BM25 (Robertson & Zaragoza
2009; the index's ``skillrag.text.BM25``: ``search.bm25_k1`` and ``search.bm25_b``, term idf from the
search index, length normalised by the article's mean passage length) against the query's distinct terms; ties go to the earlier passage, and when no passage shares
a term with the query the first passage is the preview. The preview is the best passage, followed by
the next passages of the same section while the whole fits in ``PREVIEW_CHARS`` characters; a passage
longer than that is cut at word boundaries around its first matching term, ``…`` marking each cut.
Whitespace runs are collapsed, so a preview is for reading, not for quoting: quotes come from
``get_article``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from skillrag.text import BM25, Span, reading_units

__all__ = ["PREVIEW_CHARS", "ScoredText", "analyse", "best_passage"]

#: Longest preview, in characters (whitespace collapsed).
PREVIEW_CHARS = 280
#: Passages longer than this are cut into sentences.
MAX_CHARS = 400

_WORD = re.compile(r"(?u)\b\w\w+\b")
_WS = re.compile(r"\s+")


def _section_of(pos: int, sections: Sequence[object]) -> tuple[str, int]:
    """``(heading, start)`` of the innermost section holding offset ``pos`` (``("", -1)``: none)."""
    best, best_start = "", -1
    for sec in sections:
        start, end = int(getattr(sec, "start", 0)), int(getattr(sec, "end", 0))
        if start <= pos < end and start > best_start:
            best, best_start = str(getattr(sec, "heading", "")), start
    return best, best_start


def _flat(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _cut(text: str, limit: int, at: int) -> str:
    """``text`` (flat) cut to at most ``limit`` characters at word boundaries, starting a little before
    offset ``at`` so that it stays inside; ``…`` marks each cut."""
    if len(text) <= limit:
        return text
    start = max(0, min(at - limit // 3, len(text) - limit + 1))
    while start > 0 and not text[start - 1].isspace():  # back to the start of a word
        start -= 1
    end = start + limit - (1 if start else 0) - 1
    if end >= len(text):
        end = len(text)
    else:
        stop = end
        while stop > start and not text[stop].isspace():  # back to the end of a word
            stop -= 1
        end = stop if stop > start else end  # one word longer than the limit: cut it
    body = text[start:end].strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


@dataclass(frozen=True)
class ScoredText:
    """An article's passages with their term counts (``bags``) and lengths in terms: what scoring a
    query against it needs, computed once per article version (``analyse``)."""

    passages: tuple[Span, ...]
    bags: tuple[dict[str, int], ...]
    lengths: tuple[int, ...]


def analyse(body: str, terms: Callable[[str], list[str]]) -> ScoredText:
    """Split ``body`` into passages and count each passage's terms."""
    passages = reading_units(body, MAX_CHARS)
    bags: list[dict[str, int]] = []
    for p in passages:
        bag: dict[str, int] = {}
        for t in terms(body[p.start : p.end]):
            bag[t] = bag.get(t, 0) + 1
        bags.append(bag)
    return ScoredText(tuple(passages), tuple(bags), tuple(sum(b.values()) for b in bags))


def best_passage(
    body: str,
    sections: Sequence[object],
    query_weights: Mapping[str, float],
    terms: Callable[[str], list[str]],
    *,
    chars: int = PREVIEW_CHARS,
    analysed: ScoredText | None = None,
    bm25: BM25 | None = None,
) -> tuple[str, str]:
    """``(preview, section heading)`` for ``body`` (see module doc).

    ``query_weights``: the query's distinct terms with their idf (analysed as ``terms`` analyses
    text); ``terms``: the index's analyzer; ``sections``: objects with ``heading, start, end``;
    ``analysed``: ``analyse(body, terms)`` if already computed (callers cache it per article version);
    ``bm25``: the index's parameters (``BM25.of(settings)``; default ``BM25()``, the settings' defaults).
    """
    got = analysed if analysed is not None else analyse(body, terms)
    bm25 = bm25 or BM25()
    passages = got.passages
    if not passages:
        return "", ""
    scores = [0.0] * len(passages)
    if query_weights:
        avg = max(1.0, sum(got.lengths) / len(got.lengths))
        for i, bag in enumerate(got.bags):
            score = 0.0
            for t, tf in bag.items():  # a passage has fewer distinct terms than a long query
                w = query_weights.get(t)
                if w is not None:
                    score += w * bm25.weight(tf, got.lengths[i], avg)
            scores[i] = score
    best = max(range(len(passages)), key=lambda i: (scores[i], -i))
    first = passages[best]
    section, sec_start = _section_of(first.start, sections)
    text = _flat(body[first.start : first.end])
    if len(text) > chars:
        at = 0
        if query_weights:
            for m in _WORD.finditer(text):
                hit = terms(m.group(0))
                if hit and hit[0] in query_weights:
                    at = m.start()
                    break
        return _cut(text, chars, at), section
    for nxt in passages[best + 1 :]:
        if _section_of(nxt.start, sections)[1] != sec_start:
            break
        more = _flat(body[nxt.start : nxt.end])
        if len(text) + 1 + len(more) > chars:
            break
        text = f"{text} {more}"
    return text, section
