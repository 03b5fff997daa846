"""Quotable passages of a Markdown body: whole list items, whole sentences, whole small tables.

``passages`` reads the body's blocks (``blocks``: markdown-it, with exact offsets) and yields the
candidate quotes, each an exact slice ``body[start:end]``, never cut inside a sentence: a list item
(with its wrapped continuation lines) is one passage when it fits ``LINE_LIMIT``, else it is cut into
sentences; a paragraph is cut into sentences (``sentences``: pysbd, so "e.g.", "U.S." or "$5.00"
never end one); a sentence that points back ("Escalate these to …") stays with the one before it; a
lead-in that ends with a colon is kept together with the short list it introduces; a small table is
one passage (its header travels with its rows), a larger one is quoted row by row. Headings, bold
one-line labels (``**Eligibility**``), rules and code (fenced or indented: examples, never steps) are
never passages; a heading names the passages under it.

Each passage records the nearest heading above it, whether it is a numbered step (and its number),
the tool names it mentions and whether it tells the reader to use one (``tool_names``,
``uses_tool``), the rule it states (``rule_of``), why it must never be quoted (``noise``), and
whether it is a glossary entry (a ``term: definition`` line under a glossary / definitions / tools
heading).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillrag.text._markdown import Block, blocks, table_rows
from skillrag.text._noise import is_definition, is_glossary_heading, is_parameter_table, noise
from skillrag.text._sentences import sentences, with_antecedents
from skillrag.text._tools import tool_names, uses_tool
from skillrag.text._values import RuleInfo, rule_of

__all__ = ["BLOCK_LIMIT", "LINE_LIMIT", "SUBITEM_LIMIT", "TABLE_LIMIT", "Passage", "passages"]

#: Paragraph lines and list items longer than this (characters) are cut into sentences.
LINE_LIMIT = 320
#: A lead-in ("… the following:") and the list under it stay one passage up to this many characters.
BLOCK_LIMIT = 700
#: … when every item of that list is at most this long (characters).
SUBITEM_LIMIT = 160
#: A table (header + rows) is one passage up to this many characters; a larger one is quoted row by row.
TABLE_LIMIT = 900

_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)?([^*_\n]{2,100}?)(?:\*\*|__)\s*:?\s*$")
_MARKUP = re.compile(r"\*\*|__")


@dataclass(frozen=True)
class Passage:
    """A candidate quote: ``body[start:end] == text`` (whole sentences or list items), the nearest
    ``heading`` above it, its ``position`` among the body's passages, whether it ``is_step`` (a
    numbered list item, number ``step_no``), the ``tools`` it names, whether it ``is_rule`` (with the
    ``rule`` it states), ``noise`` (why it must not be quoted, or None), whether it is a ``glossary``
    entry and whether it ``uses_tool`` (tells the reader to use one)."""

    start: int
    end: int
    text: str
    heading: str
    position: int
    is_step: bool
    tools: tuple[str, ...]
    is_rule: bool
    rule: RuleInfo | None = None
    noise: str | None = None
    glossary: bool = False
    step_no: int | None = None
    uses_tool: bool = False


def _instruction_in_parameter(text: str) -> bool:
    """True for a parameter line that goes on to tell the reader what to do ("**transaction_id** (string) -
    ID of the transaction. Use get_transactions_9173 to find it."): its sentences are passages of their
    own, so the instruction can be quoted while the parameter definition stays noise."""
    if noise(text) != "parameter":
        return False
    spans = sentences(text)
    return len(spans) > 1 and any(noise(text[a:b]) is None and uses_tool(text[a:b]) for a, b in spans[1:])


def _label(b: Block) -> tuple[str, int] | None:
    """A paragraph whose first line is a bold label (``**Eligibility**``, ``**Fees:**``): the label and
    the offset where the rest of the paragraph starts (``b.end`` when nothing follows)."""
    nl = b.text.find("\n")
    first = b.text if nl < 0 else b.text[:nl]
    m = _BOLD_LINE.match(first)
    if not m or len(first.strip()) > 100 or first.strip().endswith("."):
        return None
    rest = b.end if nl < 0 else b.start + nl + 1
    return m.group(1), rest


def _line_chars(body: str, b: Block) -> int:
    """Length of ``b`` with its list marker (from the start of its line), white space trimmed."""
    return len(body[body.rfind("\n", 0, b.start) + 1 : b.end].strip())


def _list_under(bs: list[Block], i: int, lead: Block) -> list[int]:
    """The indices of the list items that a lead-in ending ``bs[i]`` introduces: an item's nested items
    (or, when the author indented them too little for CommonMark to nest them, the items right under it
    that are indented more than its marker), or the items of the list right after a paragraph;
    consecutive lines only (a blank line or a paragraph ends the list)."""
    out: list[int] = []
    k = i + 1
    if lead.kind == "item":
        end = lead.item_lines[1] if lead.item_lines else lead.end_line
        prev = lead.end_line
        while k < len(bs) and bs[k].kind == "item" and bs[k].line == prev \
                and (bs[k].line < end or bs[k].indent > lead.indent):
            out.append(k)
            prev = bs[k].end_line
            k += 1
    elif k < len(bs) and bs[k].kind == "item":
        prev = bs[k].line
        while k < len(bs) and bs[k].kind == "item" and bs[k].line == prev:
            out.append(k)
            prev = bs[k].end_line
            k += 1
    return out


def passages(body: str, *, min_chars: int = 15, max_chars: int = 2000) -> list[Passage]:
    """Candidate passages of ``body`` in order (module doc). Every ``Passage.text == body[start:end]``;
    passages shorter than ``min_chars`` or longer than ``max_chars`` are dropped."""
    out: list[Passage] = []
    heading = ""
    glossary_section = False

    def emit(s: int, e: int, *, is_step: bool = False, step_no: int | None = None, block: bool = False) -> None:
        chunk = body[s:e]
        s += len(chunk) - len(chunk.lstrip())
        e = s + len(body[s:e].rstrip())
        text = body[s:e]
        if not (min_chars <= len(text) <= max_chars):
            return
        why = None if block else noise(text)
        if block and is_parameter_table(text):
            why = "parameter"
        rule = rule_of(text)
        out.append(Passage(start=s, end=e, text=text, heading=heading, position=len(out), is_step=is_step,
                           tools=tool_names(text), is_rule=rule is not None, rule=rule, noise=why,
                           glossary=glossary_section and is_definition(text), step_no=step_no,
                           uses_tool=uses_tool(text)))

    bs = blocks(body)
    done: set[int] = set()
    for i, b in enumerate(bs):
        if i in done or b.kind in ("code", "rule"):
            continue
        if b.kind == "heading":
            heading = " ".join(_MARKUP.sub("", b.title).split()).rstrip(":")
            glossary_section = is_glossary_heading(heading)
            continue
        if b.kind == "table":
            if b.end - b.start <= TABLE_LIMIT:
                emit(b.start, b.end, block=True)
            else:
                for row in table_rows(body):
                    if b.start <= row.start < b.end:
                        emit(row.start, row.end)
            continue
        start = b.start
        if b.kind == "paragraph":
            label = _label(b)
            if label is not None:
                heading = " ".join(_MARKUP.sub("", label[0]).split()).rstrip(":")
                glossary_section = is_glossary_heading(heading)
                start = label[1]
                if start >= b.end:
                    continue
        text = body[start : b.end]
        if b.kind == "item" and len(text) <= LINE_LIMIT and not _instruction_in_parameter(text):
            pieces = [(start, b.end)]
        else:
            pieces = [(start + x, start + y) for x, y in sentences(text)]
        pieces = with_antecedents(body, pieces, LINE_LIMIT)
        # a lead-in ending with ":" stays with the short list under it ("Inform the customer of the following:")
        block_end = None
        if pieces and body[pieces[-1][0] : pieces[-1][1]].endswith(":"):
            under = _list_under(bs, i, b)
            if under and all(_line_chars(body, bs[k]) <= SUBITEM_LIMIT for k in under) \
                    and bs[under[-1]].end - pieces[-1][0] <= BLOCK_LIMIT:
                block_end = bs[under[-1]].end
                done.update(under)
        number = b.number if b.kind == "item" else None
        for idx, (x, y) in enumerate(pieces):
            last = idx == len(pieces) - 1
            emit(x, block_end if (last and block_end is not None) else y,
                 is_step=number is not None and idx == 0, step_no=number if idx == 0 else None)
    return out
