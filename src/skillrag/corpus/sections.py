"""Split Markdown into heading-delimited sections with character offsets."""

from __future__ import annotations

import re

from skillrag.corpus.model import Section

__all__ = ["first_heading", "parse_sections"]

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    marks = [m.start() for m in _FENCE.finditer(text)]
    return [(marks[i], marks[i + 1]) for i in range(0, len(marks) - 1, 2)]


def parse_sections(body: str) -> list[Section]:
    """ATX headings (``#`` … ``######``) outside code fences, each running to the next heading of
    the same or higher level (or the end). Offsets index ``body`` in characters."""
    fences = _fenced_spans(body)
    heads = [
        m
        for m in _HEADING.finditer(body)
        if not any(a <= m.start() < b for a, b in fences)
    ]
    out: list[Section] = []
    for i, m in enumerate(heads):
        level = len(m.group(1))
        end = len(body)
        for n in heads[i + 1 :]:
            if len(n.group(1)) <= level:
                end = n.start()
                break
        out.append(Section(heading=m.group(2).strip(), level=level, start=m.start(), end=end))
    return out


def first_heading(body: str) -> str | None:
    """The text of the first ATX heading, or None."""
    secs = parse_sections(body)
    return secs[0].heading if secs else None
