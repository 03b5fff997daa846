"""Quotable passages of an article: whole list items, whole sentences, whole small tables.

``split_passages`` walks an article body line by line and yields candidate snippets, each an exact
slice ``body[start:end]``, never cut inside a sentence: a list item (with its wrapped continuation
lines) is one passage; a lead-in that ends with a colon is kept together with the short list it
introduces; a paragraph is cut into sentences by ``pysbd`` (rule-based sentence boundary detection,
Sadvilkar & Neumann, 2020, so "e.g.", "U.S." or "$5.00" never end a sentence); a small table is one
passage (its header travels with its rows). Each passage records the nearest heading above it, whether
it is a numbered step, the tool names it mentions, the rule it states (a condition, a limit, an amount)
and, when it must never be quoted, why (``noise``):

* ``agent`` – an instruction to an AI agent about how to converse or call tools ("You should only make
  one tool call at a time"), not a step of the business procedure;
* ``parameter`` – a tool parameter line or table ("credit_card_account_id (string, required): …");
* ``marketing`` – a promotional line ("Do you love your card? Share the love…");
* ``question`` – a question (FAQ headings, rhetorical questions): a briefing quotes answers, not questions;
* ``lead-in`` – a sentence that only announces what follows ("Check these in order:") when what follows
  is too long to travel with it.

Glossary entries (``term: definition`` lines under a glossary / definitions / tools heading) are marked
``glossary``; the harness drops them when the same term is already quoted from a procedure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pysbd

__all__ = ["Passage", "RuleInfo", "rule_of", "split_passages", "tool_names", "uses_tool"]

#: Paragraph lines and list items longer than this (characters) are cut into sentences.
LINE_LIMIT = 320
#: A lead-in ("… the following:") and the list under it stay one passage up to this many characters.
BLOCK_LIMIT = 700
#: … when every item of that list is at most this long (characters).
SUBITEM_LIMIT = 160
#: A table (header + rows) is one passage up to this many characters; a larger one is quoted row by row.
TABLE_LIMIT = 900

_LIST_MARK = re.compile(r"^(\s*)(?:(\d{1,3})[.)]|[-*+\u2022])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*\S)\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)?([^*_\n]{2,100}?)(?:\*\*|__)\s*:?\s*$")
_TABLE_LINE = re.compile(r"^\s*\|")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_MARKUP = re.compile(r"\*\*|__")
_FENCE = re.compile(r"^\s*(?:```|~~~)")

# --- tools -------------------------------------------------------------------------------------
_IDENT = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
#: An identifier is a tool when the text uses it as one: backticked (alone or as a call, `` `name(args)` ``),
#: called, or named a tool / function.
_TOOL_CONTEXT = re.compile(
    rf"`({_IDENT})(?:`|\()"
    rf"|\b(?:use|uses|using|call|calls|calling|run|invoke|invoking|via)\s+(?:the\s+)?({_IDENT})\b"
    rf"|\b({_IDENT})\s+(?:tool|function|endpoint|action)\b"
    rf"|\btool:\s*`?({_IDENT})\b",
    re.IGNORECASE,
)
_ANY_IDENT = re.compile(rf"\b({_IDENT})\b")
#: Identifiers that name a field or a value, not an action: ``card_id``, ``'annual_fee'``.
_FIELD_SUFFIX = re.compile(r"_(?:id|ids|type|date|at|by|amount|name|number|status|code|count|time|"
                           r"address|email|phone)$")
_QUOTED = re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|\u2018[^\u2019\n]{1,80}\u2019|\u201c[^\u201d\n]{1,80}\u201d")


def uses_tool(text: str) -> bool:
    """True when ``text`` tells the reader to use a tool: a tool name after use/call/run/invoke/via,
    before "tool"/"function", after "Tool:", or in backticks (alone or as a call: `` `name(args)` ``)."""
    return any(not _FIELD_SUFFIX.search(next(g for g in m.groups() if g)) for m in _TOOL_CONTEXT.finditer(text))


def tool_names(text: str) -> tuple[str, ...]:
    """Tool-like identifiers in ``text``, in order of first mention: snake_case names that the text
    uses as a tool (backticked, after use/call/run/invoke, before "tool"/"function" or "("), plus any
    other snake_case name with two or more underscores (``freeze_debit_card_3892``)."""
    found: dict[str, None] = {}
    for m in _TOOL_CONTEXT.finditer(text):
        name = next(g for g in m.groups() if g)
        if not _FIELD_SUFFIX.search(name):
            found.setdefault(name, None)
    bare = _QUOTED.sub(" ", text)  # quoted identifiers are values ('annual_fee_waived'), not tools
    for m in _ANY_IDENT.finditer(bare):
        name = m.group(1)
        if name.count("_") >= 2 and not _FIELD_SUFFIX.search(name):
            found.setdefault(name, None)
    return tuple(found)


# --- rules -------------------------------------------------------------------------------------
_CONDITION = re.compile(
    r"\b(must(?: not)?|never|only|required|requires|cannot|can't|can not|do not|don't|does not|may not|"
    r"not eligible|ineligible|eligible|eligibility|unless|if|before|after|always|prohibited|mandatory|"
    r"not allowed|allowed|permitted|qualif(?:y|ies|ied))\b",
    re.IGNORECASE,
)
_LIMIT = re.compile(
    r"\b(?:at least|at most|no more than|no less than|more than|less than|up to|maximum|minimum|max|min|"
    r"within|over|under|exceed(?:s|ing)?|limit(?:ed|s)?|cap(?:ped)?|threshold|deadline|window)\b[^.;:]{0,40}?"
    r"(?:\$\s?\d[\d,.]*|\d[\d,.]*\s?%|\d[\d,.]*\s*(?:business\s+|calendar\s+)?"
    r"(?:days?|hours?|minutes?|weeks?|months?|years?|transactions?|times?|attempts?|cards?)\b|\d[\d,.]*)",
    re.IGNORECASE,
)
_AMOUNT = re.compile(
    r"(?:\$\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?%|\b\d[\d,]*(?:\.\d+)?\s*(?:business\s+|calendar\s+)?"
    r"(?:days?|hours?|weeks?|months?|years?)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class RuleInfo:
    """The rule a passage states: ``kind`` is ``limit`` (a bound with a number), ``amount`` (a fee,
    rate or period), ``condition`` (must / only / unless / eligible …); ``phrase`` is the words that
    state it, as they appear in the passage (whole words, at most about 60 characters)."""

    kind: str
    phrase: str


def _phrase(text: str, m: re.Match[str], width: int = 60) -> str:
    s, e = m.start(), m.end()
    if e - s < width:  # widen to whole words around the match, within the clause
        left = text.rfind(" ", max(0, s - (width - (e - s)) // 2), s)
        s = left + 1 if left >= 0 else s
        right = text.find(" ", e + (width - (e - s)) // 2)
        e = right if right > 0 else len(text)
    out = " ".join(_MARKUP.sub("", text[s:e]).split())
    return out.strip(" ,;:(").rstrip(".")


def rule_of(text: str) -> RuleInfo | None:
    """The first rule ``text`` states (a limit before an amount before a condition), or None."""
    for kind, pat in (("limit", _LIMIT), ("amount", _AMOUNT), ("condition", _CONDITION)):
        m = pat.search(text)
        if m:
            return RuleInfo(kind, _phrase(text, m))
    return None


# --- what must never be quoted -------------------------------------------------------------------
_AGENT = re.compile(
    r"\b(?:tool calls?|function calls?|one (?:tool|function) call|make up (?:any )?(?:information|procedures?)|"
    r"hallucinat\w*|as an ai\b|\bai (?:agents?|assistants?|models?|systems?|bots?)\b|language model|llm\b|"
    r"system prompt|(?:ignore|disregard|forget|override) (?:all |any |the |your )*(?:previous |prior |above |earlier |"
    r"preceding |other )?(?:instructions|prompts?|rules|guidelines|directions)\b|"
    r"^\W*(?:assistant|chatbot)\s*:|"
    r"(?:the|this) (?:ai )?assistant\b|respond to the user at the same time|"
    r"you (?:are|act as) (?:a|an|the) (?:helpful |customer service |support |virtual )?(?:agent|assistant|bot)\b|"
    r"(?:do not|don't|never) (?:provide|give|offer) (?:any )?(?:information|knowledge|procedures|opinions|subjective)"
    r"[^.]*(?:not provided|user|tools)|"
    r"deny (?:the )?user requests?|"
    r"(?:json|markdown) format|chain[- ]of[- ]thought|step[- ]by[- ]step reasoning)",
    re.IGNORECASE,
)
_PARAM = re.compile(
    r"^\W*`?[A-Za-z_][\w.]*`?\s*[:\-\u2013\u2014]?\s*\((?:[^)]*\b(?:string|str|integer|int|number|float|"
    r"decimal|boolean|bool|array|list|object|dict|date|datetime|enum|required|optional)\b[^)]*)\)"
    r"|^\W*(?:tool )?(?:arguments|parameters|params|inputs|fields)(?: for [`\w]+)?\s*:\s*$"
    r"|^\W*tool arguments\b|\b(?:arguments|parameters) (?:are|is) accepted\b|\badditional parameters\b",
    re.IGNORECASE,
)
_PARAM_HEADER = re.compile(r"^\s*\|[^|\n]*\b(?:field|parameter|argument|param)s?\b[^|\n]*\|[^\n]*"
                           r"\b(?:required|type|value)", re.IGNORECASE)
_MARKETING = re.compile(
    r"\b(?:share the love|don't miss|do not miss|limited[- ]time|sign up today|start earning today|join (?:now|today)|"
    r"act now|what are you waiting for|(?:do )?you love your|tell your friends|spread the word|"
    r"we're here to help|we are here to help|don't hesitate to|do not hesitate to)\b",
    re.IGNORECASE,
)
_GLOSSARY_HEADING = re.compile(
    r"\b(?:glossary|definitions?|terminology|key terms|abbreviations|available tools|tool (?:list|glossary|"
    r"catalog(?:ue)?|overview)|tools)\b",
    re.IGNORECASE,
)
_DEFINITION = re.compile(r"^\W*`?([\w][\w .\-/]{0,60}?)`?\s*(?::|\u2014|\u2013| - )\s+\S")


def _noise(text: str) -> str | None:
    flat = " ".join(_MARKUP.sub("", text).split())
    if _AGENT.search(flat):
        return "agent"
    if _PARAM.search(flat) or _PARAM_HEADER.search(text):
        return "parameter"
    if _MARKETING.search(flat) or flat.endswith("!"):
        return "marketing"
    if flat.rstrip("*_ )\"'").endswith("?"):
        return "question"
    if flat.endswith(":"):
        return "lead-in"
    return None


def _instruction_in_parameter(text: str) -> bool:
    """True for a parameter line that goes on to tell the reader what to do ("**transaction_id** (string) -
    ID of the transaction. Use get_transactions_9173 to find it."): its sentences are passages of their
    own, so the instruction can be quoted while the parameter definition stays noise."""
    return _noise(text) == "parameter" and len(_sentences(text)) > 1 and any(
        _noise(text[a:b]) is None and uses_tool(text[a:b]) for a, b in _sentences(text)[1:])


@dataclass(frozen=True)
class Passage:
    """A candidate snippet: ``body[start:end]`` of article ``article_id`` (an exact slice, whole
    sentences or list items), the nearest ``heading`` above it, its ``position`` among the article's
    passages, whether it ``is_step`` (a numbered list item), the ``tools`` it names, whether it
    ``is_rule`` (with the ``rule`` it states), ``noise`` (why it must not be quoted, or None), whether
    it is a ``glossary`` entry, its ``step_no`` and whether it ``uses_tool`` (tells the reader to use one)."""

    article_id: str
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


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


_FALLBACK_SENT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z\"'(`*])")


def _sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (offsets into ``text``), whitespace trimmed."""
    spans: list[tuple[int, int]] = []
    try:
        segs = _segmenter().segment(text)
        ok = all(text[s.start : s.end] == s.sent for s in segs)
    except (ValueError, IndexError, TypeError, AttributeError):  # pysbd fails on a few odd inputs
        segs, ok = [], False
    if ok and segs:
        raw = [(s.start, s.end) for s in segs]
    else:
        raw, pos = [], 0
        for m in _FALLBACK_SENT.finditer(text):
            raw.append((pos, m.start()))
            pos = m.end()
        raw.append((pos, len(text)))
    for s, e in raw:
        chunk = text[s:e]
        st = s + len(chunk) - len(chunk.lstrip())
        en = s + len(chunk.rstrip())
        if en > st:
            spans.append((st, en))
    # a "sentence" that does not end a sentence (no closing punctuation) followed by one that starts in
    # lower case was cut at an abbreviation pysbd did not know: join them
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and text[s : s + 1].islower() and not re.search(r"[.!?:;][\"')\]]*$", text[merged[-1][0] : merged[-1][1]]):
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


#: A sentence that points back within its first words ("Escalate these to …", "They must …"): quoted
#: alone it drops the condition it depends on, so it stays with the sentence before it.
_BACK_REFERENCE = re.compile(r"^\W*(?:[\w'`]+\W+){0,3}?(?:these|those|they|them|such|this|it)\b(?!\s*[:(])",
                             re.IGNORECASE)


def _with_antecedents(body: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``pieces`` (sentence spans of one paragraph or list item, in order) with each sentence that
    refers back (``_BACK_REFERENCE``) joined to the one before it, as long as the two fit in
    ``LINE_LIMIT`` characters: "Medical cancellations waive the fee. Escalate these to Member Care."
    is one passage, so the escalation is never quoted without what "these" are."""
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        if out and b - out[-1][0] <= LINE_LIMIT and _BACK_REFERENCE.match(body[a:b]):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


@dataclass
class _Line:
    start: int  # offset of the line in the body
    content: str  # without the line break
    indent: int
    mark_end: int  # offset (in content) where the text starts, after any list marker
    number: int | None  # the number of a numbered list item
    is_item: bool


def _lines(body: str) -> list[_Line]:
    out: list[_Line] = []
    offset = 0
    for raw in body.splitlines(keepends=True):
        content = raw.rstrip("\r\n")
        m = _LIST_MARK.match(content)
        indent = len(content) - len(content.lstrip())
        out.append(_Line(offset, content, indent, m.end() if m else indent,
                         int(m.group(2)) if m and m.group(2) else None, bool(m)))
        offset += len(raw)
    return out


def split_passages(
    article_id: str, body: str, *, min_chars: int = 15, max_chars: int = 2000
) -> list[Passage]:
    """Candidate passages of ``body`` in article order (see the module docstring). Every
    ``Passage.text == body[start:end]``. Headings and table rules are never passages; passages shorter
    than ``min_chars`` or longer than ``max_chars`` are dropped."""
    lines = _lines(body)
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
        noise = None if block else _noise(text)
        if block and _PARAM_HEADER.search(text):
            noise = "parameter"
        glossary = glossary_section and bool(_DEFINITION.match(_MARKUP.sub("", text)))
        rule = rule_of(text)
        out.append(Passage(article_id=article_id, start=s, end=e, text=text, heading=heading,
                           position=len(out), is_step=is_step, tools=tool_names(text),
                           is_rule=rule is not None, rule=rule, noise=noise, glossary=glossary,
                           step_no=step_no, uses_tool=uses_tool(text)))

    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i]
        content = ln.content
        if _FENCE.match(content):  # a fenced code block is an example, never a quotable step
            i += 1
            while i < n and not _FENCE.match(lines[i].content):
                i += 1
            i += 1
            continue
        if not content.strip() or _TABLE_RULE.match(content) and not _TABLE_LINE.match(content):
            i += 1
            continue
        h = _HEADING.match(content)
        if h or (not ln.is_item and _BOLD_LINE.match(content) and len(content.strip()) <= 100
                 and not content.strip().endswith(".")):
            text = h.group(1) if h else _BOLD_LINE.match(content).group(1)  # type: ignore[union-attr]
            heading = " ".join(_MARKUP.sub("", text).split()).rstrip(":")
            glossary_section = bool(_GLOSSARY_HEADING.search(heading))
            i += 1
            continue
        if _TABLE_LINE.match(content):  # a table: whole when small, else row by row
            j = i
            while j < n and _TABLE_LINE.match(lines[j].content):
                j += 1
            start, end = ln.start, lines[j - 1].start + len(lines[j - 1].content)
            if end - start <= TABLE_LIMIT:
                emit(start, end, block=True)
            else:
                for row in lines[i + 1 : j]:
                    if not _TABLE_RULE.match(row.content):
                        emit(row.start, row.start + len(row.content))
            i = j
            continue
        # the item / paragraph line and its wrapped continuation lines
        j = i + 1
        while j < n and lines[j].content.strip() and not lines[j].is_item and not _HEADING.match(lines[j].content) \
                and not _TABLE_LINE.match(lines[j].content) and not _FENCE.match(lines[j].content) \
                and (not ln.is_item or lines[j].indent > ln.indent):
            j += 1
        text_start = ln.start + ln.mark_end
        text_end = lines[j - 1].start + len(lines[j - 1].content.rstrip())
        if ln.is_item:
            whole = text_end - text_start <= LINE_LIMIT and not _instruction_in_parameter(body[text_start:text_end])
            pieces = [(text_start, text_end)] if whole else \
                [(text_start + a, text_start + b) for a, b in _sentences(body[text_start:text_end])]
        else:  # a paragraph: sentence by sentence
            pieces = [(text_start + a, text_start + b) for a, b in _sentences(body[text_start:text_end])]
        pieces = _with_antecedents(body, pieces)
        # a lead-in ending with ":" stays with the short list under it ("Inform the customer of the following:")
        block_end = None
        if pieces and body[pieces[-1][0] : pieces[-1][1]].endswith(":"):
            k = j
            while k < n and not lines[k].content.strip():
                k += 1
            sub_end, short = k, True
            while sub_end < n and lines[sub_end].is_item and (not ln.is_item or lines[sub_end].indent > ln.indent):
                short = short and len(lines[sub_end].content.strip()) <= SUBITEM_LIMIT
                sub_end += 1
            if sub_end > k and short:
                end = lines[sub_end - 1].start + len(lines[sub_end - 1].content.rstrip())
                if end - pieces[-1][0] <= BLOCK_LIMIT:
                    block_end, j = end, sub_end
        for idx, (a, b) in enumerate(pieces):
            last = idx == len(pieces) - 1
            emit(a, block_end if (last and block_end is not None) else b,
                 is_step=ln.number is not None and idx == 0, step_no=ln.number if idx == 0 else None)
        i = j
    return out
