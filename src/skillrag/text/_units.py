"""Units of a Markdown body, with exact offsets: what a checker compares a claim with, and what a reader
skims.

``units`` yields each sentence of each paragraph and list item (``sentences``: pysbd, which also
ends a sentence at a line break) and each row of each table (the header row too, ``kind="header"``);
headings, rules and code are not units. List markers and surrounding white space are left out, so
``body[start:end] == text`` always.

``reading_units`` yields the pieces a reader takes in at a glance (a search hit's preview is made of
them): a paragraph, or one list item with its marker (``1. ``, ``- ``), whole up to ``max_chars`` and
cut into its sentences past that; each table row as ``units`` gives it; a code block whole (an example
call is worth reading). Headings and rules are not reading units.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from skillrag.text._markdown import blocks, line_starts
from skillrag.text._sentences import sentences

__all__ = ["Span", "reading_units", "units"]


@dataclass(frozen=True)
class Span:
    """``body[start:end] == text``; ``kind``: ``sentence`` (of a paragraph or list item), ``row`` (a
    table body row) or ``header`` (a table's header row); a ``reading_units`` span may also be a whole
    ``paragraph``, ``item`` (with its list marker) or ``code`` block."""

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


def reading_units(body: str, max_chars: int = 400) -> list[Span]:
    """The reading units of ``body`` in order (module doc); empty for a blank body. ``max_chars``: the
    longest paragraph or list item (marker included) kept whole, in characters."""
    out: list[Span] = []
    for b in blocks(body):
        if b.kind in ("paragraph", "item"):
            start = b.start
            if b.kind == "item":  # back over the list marker before the item's text on its line
                start -= len(body[body.rfind("\n", 0, b.start) + 1 : b.start].lstrip())
            if b.end - start <= max_chars:
                out.append(Span(start, b.end, body[start : b.end], b.kind))
            else:
                out += [Span(b.start + x, b.start + y, b.text[x:y]) for x, y in sentences(b.text)]
        elif b.kind == "table":
            out += [Span(b.start + u.start, b.start + u.end, u.text, u.kind)
                    for u in _units(b.text) if u.kind != "sentence"]
        elif b.kind == "code":
            out.append(Span(b.start, b.end, body[b.start : b.end], "code"))
    return out
