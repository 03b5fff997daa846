"""What must never be quoted as guidance, and why (``noise``):

* ``agent`` – an instruction to an AI agent about how to converse or call tools ("You should only make
  one tool call at a time"), or text that tries to steer one ("ignore all previous instructions"), not
  a step of a business procedure;
* ``parameter`` – a tool parameter line or table ("credit_card_account_id (string, required): …");
* ``marketing`` – a promotional line ("Do you love your card? Share the love…");
* ``question`` – a question (FAQ headings, rhetorical questions): guidance quotes answers, not questions;
* ``lead-in`` – a sentence that only announces what follows ("Check these in order:").

Also here: glossary headings and ``term: definition`` lines (``is_glossary_heading``, ``is_definition``),
so a caller can tell a glossary entry from a step.
"""

from __future__ import annotations

import re

__all__ = ["is_definition", "is_glossary_heading", "is_parameter_table", "noise"]

_MARKUP = re.compile(r"\*\*|__")
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


def is_parameter_table(text: str) -> bool:
    """True when ``text`` opens with a table header of tool parameters (``| Field | Type | Required |``)."""
    return _PARAM_HEADER.search(text) is not None


def noise(text: str) -> str | None:
    """Why ``text`` (a sentence, list item or table) must never be quoted as guidance (module doc), or
    None when it may be. Emphasis marks and white-space runs do not count."""
    flat = " ".join(_MARKUP.sub("", text).split())
    if _AGENT.search(flat):
        return "agent"
    if _PARAM.search(flat) or is_parameter_table(text):
        return "parameter"
    if _MARKETING.search(flat) or flat.endswith("!"):
        return "marketing"
    if flat.rstrip("*_ )\"'").endswith("?"):
        return "question"
    if flat.endswith(":"):
        return "lead-in"
    return None


def is_glossary_heading(heading: str) -> bool:
    """True for a heading of a glossary, a list of definitions or a tool list."""
    return _GLOSSARY_HEADING.search(heading) is not None


def is_definition(text: str) -> bool:
    """True for a ``term: definition`` line (``term — definition``, `` `term` - definition``)."""
    return _DEFINITION.match(_MARKUP.sub("", text)) is not None
