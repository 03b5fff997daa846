"""Tool names: the one rule that says which identifiers in a text name a tool.

An *identifier* is a snake_case name, letters and digits joined by underscores (``card_id``,
``freeze_debit_card_3892``). It names a **tool** when

* the text uses it as one: in backticks (alone, `` `open_damage_claim` ``, or as a call,
  `` `open_damage_claim(order)` ``), written as a call (``get_transactions_9173({``), after *use*,
  *call*, *run*, *invoke* or *via* ("use the lookup_order tool"), before *tool*, *function*,
  *endpoint* or *action*, or after ``Tool:``; or
* it follows the tool-naming convention of numbered tools: words and a final number of three digits
  or more (``freeze_debit_card_3892``), unless the text writes it as an article id (``doc_`` first);

and it does not name a field or a value: a name ending in ``_id``, ``_type``, ``_date``, ``_amount``,
``_status`` … (``credit_card_account_id``) is an input, and a quoted name (``'annual_fee_waived'``)
is a value, never a tool.

``uses_tool`` is stricter: the text *tells the reader to use* a tool (the first group only).
``code_names`` is the wider set a claim checker compares: every identifier, and any span in backticks
without a space (```structural```).
"""

from __future__ import annotations

import re

__all__ = ["IDENTIFIER", "IDENTIFIER_PATTERN", "code_names", "is_field_name", "tool_names", "uses_tool"]

#: The bare pattern of a snake_case identifier (no anchors, no group), for patterns built on it.
IDENTIFIER_PATTERN = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_IDENT = IDENTIFIER_PATTERN
#: A snake_case identifier, standing alone (not part of a longer name, a path or a dotted name).
IDENTIFIER = re.compile(rf"(?<![\w.-])({_IDENT})(?![\w-])")
_CONTEXT = re.compile(
    rf"`({_IDENT})(?:`|\()"
    rf"|(?<![\w.`-])({_IDENT})\("
    rf"|\b(?:use|uses|using|call|calls|calling|run|invoke|invoking|via)\s+(?:the\s+)?`?({_IDENT})\b"
    rf"|\b({_IDENT})`?\s+(?:tool|function|endpoint|action)\b"
    rf"|\btool:\s*`?({_IDENT})\b",
    re.IGNORECASE,
)
#: The convention of numbered tools: words, then ``_`` and three digits or more.
_NUMBERED = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*_\d{3,}$")
_ARTICLE_ID = re.compile(r"^doc_", re.IGNORECASE)
#: Identifiers that name a field or a value, not an action: ``card_id``, ``transaction_date``.
_FIELD_SUFFIX = re.compile(r"_(?:id|ids|type|date|at|by|amount|name|number|status|code|count|time|birth|"
                           r"address|email|phone)$", re.IGNORECASE)
_QUOTED = re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|\u2018[^\u2019\n]{1,80}\u2019|\u201c[^\u201d\n]{1,80}\u201d")
_TICK = re.compile(r"`([^`\n]{2,80})`")


def is_field_name(name: str) -> bool:
    """True when identifier ``name`` names a field or a value (``card_id``, ``due_date``), not an action."""
    return _FIELD_SUFFIX.search(name) is not None


def uses_tool(text: str) -> bool:
    """True when ``text`` tells the reader to use a tool: a tool name in backticks, written as a call,
    after use / call / run / invoke / via, before tool / function / endpoint / action, or after
    ``Tool:`` (module doc)."""
    return any(not is_field_name(next(g for g in m.groups() if g)) for m in _CONTEXT.finditer(text))


def tool_names(text: str) -> tuple[str, ...]:
    """The tool names in ``text`` (module doc), in order of first mention, each once."""
    found: dict[str, None] = {}
    for m in _CONTEXT.finditer(text):
        name = next(g for g in m.groups() if g)
        if not is_field_name(name):
            found.setdefault(name, None)
    bare = _QUOTED.sub(" ", text)  # quoted identifiers are values ('annual_fee_waived'), not tools
    for m in IDENTIFIER.finditer(bare):
        name = m.group(1)
        if _NUMBERED.match(name) and not _ARTICLE_ID.match(name) and not is_field_name(name):
            found.setdefault(name, None)
    return tuple(found)


def code_names(text: str) -> tuple[str, ...]:
    """Every name ``text`` writes as code, in order of first mention, each once: each identifier
    (``card_id``, ``freeze_card_4410``) and each backticked span without a space (a call's ``()`` left
    out: ```lookup_order()``` is ``lookup_order``)."""
    found: dict[str, int] = {}
    for m in IDENTIFIER.finditer(text):
        found.setdefault(m.group(1), m.start())
    for m in _TICK.finditer(text):
        inner = m.group(1).strip().rstrip("()")
        if inner and " " not in inner:
            found.setdefault(inner, m.start())
    return tuple(sorted(found, key=found.__getitem__))
