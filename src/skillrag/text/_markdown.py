"""Markdown blocks with exact offsets back into the raw text, read by a real parser.

``blocks`` parses a body with markdown-it-py (CommonMark with the GFM table rule; raw HTML is read as
text) and returns its leaf blocks in document order: headings, paragraphs, list items (the item's own
first paragraph, after its marker), tables, code (fenced or indented) and thematic rules. Every block
carries its source lines (markdown-it's line map) and character offsets, so ``body[start:end]`` is the
block as written, surrounding white space left out: a quote cut from a block is byte-exact.

``table_rows`` gives the body rows of every table with their cells (offsets too) and the header
cells' texts; ``plain`` removes inline markup from one line for reading (never for quoting).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["Block", "Cell", "TableRow", "blocks", "line_starts", "plain", "table_rows"]

_LINE = re.compile(r"\r\n|\r|\n")
_ITEM_MARK = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_QUOTE_MARK = re.compile(r"[ \t]*(?:>[ \t]?)+")


@dataclass(frozen=True)
class Block:
    """One leaf block of a Markdown body.

    ``kind``: ``heading``, ``paragraph``, ``item`` (a list item's first paragraph, its marker left
    out), ``table``, ``code`` or ``rule``. ``body[start:end] == text``. ``line`` / ``end_line``: its
    source lines, 0-based, end exclusive. ``depth``: how many lists hold it (1 for an item of a
    top-level list). ``number``: an ordered item's number. ``level``: a heading's level. ``title``: a
    heading's text (markup kept, ``#`` marks left out). For an item, ``item_lines`` are the lines of
    the whole item (nested blocks included) and ``list_lines`` those of its list. ``indent``: the
    column of the first character of its first line (an item's marker).
    """

    kind: str
    start: int
    end: int
    text: str
    line: int
    end_line: int
    depth: int = 0
    number: int | None = None
    level: int = 0
    title: str = ""
    item_lines: tuple[int, int] | None = None
    list_lines: tuple[int, int] | None = None
    indent: int = 0


@dataclass(frozen=True)
class Cell:
    """One table cell: ``text == body[start:end]`` (pipes and padding left out; may be empty)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class TableRow:
    """One body row of a Markdown (GFM) table: the row's line (``body[start:end] == text``), its
    ``cells`` in column order, and the ``header`` cells' texts of its table (as markdown-it reads
    them). The header row and the delimiter row are not rows."""

    start: int
    end: int
    text: str
    cells: tuple[Cell, ...]
    header: tuple[str, ...]


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


@lru_cache(maxsize=4096)
def _tokens(body: str) -> tuple[Token, ...]:
    return tuple(_markdown().parse(body))


def line_starts(body: str) -> list[int]:
    """The offset of each line of ``body`` (lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as CommonMark
    reads them), plus ``len(body)`` last."""
    return [0, *(m.end() for m in _LINE.finditer(body)), len(body)]


def _line_end(body: str, starts: list[int], line: int) -> int:
    """Offset of the end of ``line``'s content (before its line break)."""
    a, b = starts[line], starts[min(line + 1, len(starts) - 1)]
    while b > a and body[b - 1] in "\r\n":
        b -= 1
    return b


def _span(body: str, starts: list[int], first: int, last: int, skip: re.Pattern[str] | None = None
          ) -> tuple[int, int]:
    """Offsets of lines ``first`` .. ``last - 1`` of ``body``, white space (and, on the first line,
    what ``skip`` matches) left out."""
    n = len(starts) - 1
    first, last = min(first, n), min(max(last, first + 1), n)
    a = starts[first]
    if skip is not None:
        m = skip.match(body, a, _line_end(body, starts, first))
        if m:
            a = m.end()
    b = _line_end(body, starts, last - 1) if last > first else a
    while a < b and body[a].isspace():
        a += 1
    while b > a and body[b - 1].isspace():
        b -= 1
    return a, b


@lru_cache(maxsize=4096)
def _blocks(body: str) -> tuple[Block, ...]:
    starts = line_starts(body)
    out: list[Block] = []
    lists: list[tuple[int, int]] = []  # the open lists' line maps
    items: list[tuple[tuple[int, int], int | None, bool]] = []  # open items: lines, number, first child seen
    quoted = 0
    toks = _tokens(body)
    for i, tok in enumerate(toks):
        t = tok.type
        if t in ("bullet_list_open", "ordered_list_open"):
            lists.append((tok.map[0], tok.map[1]) if tok.map else (0, 0))
        elif t in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif t == "list_item_open":
            number = int(tok.info) if tok.info.isdigit() else None
            items.append(((tok.map[0], tok.map[1]) if tok.map else (0, 0), number, False))
        elif t == "list_item_close":
            items.pop()
        elif t == "blockquote_open":
            quoted += 1
        elif t == "blockquote_close":
            quoted -= 1
        elif tok.map is None:
            continue
        elif t == "paragraph_open":
            first, last = tok.map
            is_item = bool(items) and not items[-1][2] and items[-1][0][0] == first
            if items:
                items[-1] = (items[-1][0], items[-1][1], True)
            skip = _ITEM_MARK if is_item else (_QUOTE_MARK if quoted else None)
            if is_item and quoted:
                skip = re.compile(_QUOTE_MARK.pattern + _ITEM_MARK.pattern)
            a, b = _span(body, starts, first, last, skip)
            if b <= a:
                continue
            if is_item:
                out.append(Block("item", a, b, body[a:b], first, last, len(lists), items[-1][1],
                                 item_lines=items[-1][0], list_lines=lists[-1]))
            else:
                out.append(Block("paragraph", a, b, body[a:b], first, last, len(lists)))
        else:
            if items:
                items[-1] = (items[-1][0], items[-1][1], True)
            first, last = tok.map
            kind = {"heading_open": "heading", "table_open": "table", "fence": "code", "code_block": "code",
                    "hr": "rule"}.get(t)
            if kind is None:
                continue
            a, b = _span(body, starts, first, last, _QUOTE_MARK if quoted else None)
            if b <= a:
                continue
            if kind == "heading":
                title = toks[i + 1].content if i + 1 < len(toks) else ""
                out.append(Block("heading", a, b, body[a:b], first, last, len(lists), level=int(tok.tag[1:]),
                                 title=title.strip()))
            else:
                out.append(Block(kind, a, b, body[a:b], first, last, len(lists)))
    return tuple(_with_indent(body, starts, b) for b in out)


def _with_indent(body: str, starts: list[int], b: Block) -> Block:
    a = starts[b.line]
    raw = body[a : _line_end(body, starts, b.line)]
    indent = len(raw) - len(raw.lstrip(" \t"))
    return b if indent == 0 else replace(b, indent=indent)


def blocks(body: str) -> list[Block]:
    """The leaf blocks of ``body`` in document order (module doc)."""
    return list(_blocks(body))


_BAR = re.compile(r"(?<!\\)\|")


def _cells(line: str, offset: int) -> tuple[Cell, ...]:
    edges = [-1] + [m.start() for m in _BAR.finditer(line)] + [len(line)]
    out = []
    for a, b in itertools.pairwise(edges):
        seg = line[a + 1 : b]
        if not seg.strip() and (a == -1 or b == len(line)):
            continue  # outside the outer pipes
        lead = len(seg) - len(seg.lstrip())
        text = seg.strip()
        out.append(Cell(offset + a + 1 + lead, offset + a + 1 + lead + len(text), text))
    return tuple(out)


@lru_cache(maxsize=2048)
def _table_rows(body: str) -> tuple[TableRow, ...]:
    if "|" not in body:
        return ()
    starts = line_starts(body)
    rows: list[TableRow] = []
    header: tuple[str, ...] = ()
    in_head = False
    line: int | None = None
    cells: list[str] = []
    for tok in _tokens(body):
        if tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            line, cells = (tok.map[0] if tok.map else None), []
        elif tok.type == "inline" and line is not None:
            cells.append(tok.content)
        elif tok.type == "tr_close":
            if in_head:
                header = tuple(cells)
            elif line is not None and line < len(starts) - 1:
                a, b = _span(body, starts, line, line + 1)
                rows.append(TableRow(a, b, body[a:b], _cells(body[a:b], a), header))
            line = None
    return tuple(rows)


def table_rows(body: str) -> tuple[TableRow, ...]:
    """Every body row of every Markdown table in ``body`` (tables as markdown-it's GFM table rule
    reads them: a header row, a delimiter row, body rows), in order. Offsets are into ``body``."""
    return _table_rows(body)


_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
_LEAD_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def plain(line: str) -> str:
    """One line of Markdown for reading: a list marker, ``**``/``__`` emphasis, backticks and link
    targets removed (``[text](url)`` → ``text``), surrounding white space trimmed."""
    line = _LEAD_MARK.sub("", line.strip())
    return _MARKUP.sub(lambda m: m.group(1) or "", line).strip()
