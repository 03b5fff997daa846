"""Sentence-sized units of a Markdown body, with exact offsets: what a checker compares a claim with.

``units`` yields each sentence of each paragraph and list item (``sentences``: pysbd, which also
ends a sentence at a line break) and each row of each table (the header row too, ``kind="header"``);
headings, rules and code are not units. List markers and surrounding white space are left out, so
``body[start:end] == text`` always.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from skillrag.text._markdown import blocks, line_starts
from skillrag.text._sentences import sentences

__all__ = ["Span", "units"]


@dataclass(frozen=True)
class Span:
    """``body[start:end] == text``; ``kind``: ``sentence`` (of a paragraph or list item), ``row`` (a
    table body row) or ``header`` (a table's header row)."""

    start: int
    end: int
    text: str
    kind: str = "sentence"


@lru_cache(maxsize=2048)
def _units(body: str) -> tuple[Span, ...]:
    out: list[Span] = []
    starts = line_starts(body)
    for b in blocks(body):
        if b.kind in ("paragraph", "item"):
            out += [Span(b.start + x, b.start + y, b.text[x:y]) for x, y in sentences(b.text)]
        elif b.kind == "table":
            for line in range(b.line, b.end_line):
                a, e = starts[line], starts[line + 1]
                raw = body[a:e]
                text = raw.strip()
                if not text or set(text) <= set("-|:= \t"):
                    continue  # the delimiter row
                s = a + len(raw) - len(raw.lstrip())
                out.append(Span(s, s + len(text), text, "header" if line == b.line else "row"))
    return tuple(out)


def units(body: str) -> list[Span]:
    """The sentence-sized units of ``body`` in order (module doc)."""
    return list(_units(body))
