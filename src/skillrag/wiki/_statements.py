"""What the extractive builder reads from an article's own text (no model), on the text layer's
units (``skillrag.text``: sentences by pysbd, Markdown blocks by markdown-it, the one tool-name rule,
the rule a sentence states):

* *units*: sentences, list items and table rows of a block of Markdown, markup removed (a table row
  ``| Referral bonus | $100 |`` becomes ``Referral bonus: $100``);
* *purpose statements*: sentences that say what something is for (``This manual is for …``, ``… is
  designed for …``, ``Use this …``), the source of a page's intent;
* *explicit exclusions*: sentences that say what the text does not cover (``It does not cover
  billing disputes; for those, see …``), the only source of *does not solve*;
* a one-line *summary* of an article and the *key line* of an article for one aspect (the unit with
  the amount, condition or tool name that answers it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from skillrag.corpus import Article
from skillrag.text import has_figure, plain, rule_of, table_rows, tool_names
from skillrag.text import units as text_units
from skillrag.wiki.page import LinkType

__all__ = [
    "article_parts",
    "classify_link",
    "cut",
    "exclusions",
    "has_tool",
    "key_line",
    "purpose_statements",
    "summary_line",
    "units",
]

_PURPOSE = re.compile(
    r"\b(?:this (?:article|guide|page|section|manual|handbook|document|procedure|policy|program|account|card)"
    r"(?: is| explains| describes| covers| helps| lets| shows| sets out| says)|use this|is designed (?:for|to)|"
    r"designed for|is (?:built|meant|intended) for|helps? (?:you|customers|agents|businesses)|"
    r"lets? (?:you|customers)|allows? (?:you|customers)|is for|purpose of|explains? (?:how|what|when|why))\b"
    r"|^it covers\b",
    re.IGNORECASE,
)
_EXCLUSION = re.compile(
    r"\b(?:(?:this|the) (?:article|guide|page|section|manual|handbook|document|procedure|policy|workflow|process)"
    r"|it)\s+(?:does not|doesn't|do not|will not|won't|cannot|can't|is not (?:meant|intended) to)\s+"
    r"(?:cover|apply to|include|address|handle|decide|explain|describe|deal with|discuss|replace)\b"
    r"|\b(?:not covered (?:here|in this)|(?:is|are) out of scope|outside (?:the|its) scope)\b",
    re.IGNORECASE,
)
_REDIRECT = re.compile(r"^for (?:questions about |help with |information (?:on|about) )?[^,;]{3,80}, "
                       r"(?:see|refer to|read|go to)\b", re.IGNORECASE)
_HEADING_TYPES: tuple[tuple[LinkType, tuple[str, ...]], ...] = (
    (LinkType.escalation, ("escalat", "contact", "dispute", "complaint", "support code", "transfer to")),
    (LinkType.troubleshooting, ("troubleshoot", "common reason", "problem", "issue", "error", "resolve", "declin")),
    (LinkType.eligibility, ("eligib", "qualif", "requirement", "prerequisite", "who can", "before you", "availab")),
    (LinkType.fee, ("fee", "charge", "cost", "apr", "apy", "interest", "rate", "price", "rebate", "reward")),
    (LinkType.limit, ("limit", "cap", "threshold", "timeline", "timing", "processing time", "cadence", "minimum")),
    (LinkType.procedure, ("procedure", "how to", "steps", "process", "opening", "closing", "apply", "setup",
                          "set up", "request", "submit", "using", "how it works", "what to do")),
    (LinkType.policy, ("policy", "rule", "term", "important", "note", "restriction", "compliance", "must")),
    (LinkType.definition, ("overview", "what is", "about", "definition", "summary", "snapshot", "purpose",
                           "key specification", "feature", "benefit")),
)


def cut(text: str, n: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``n`` characters (`` …`` when cut)."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def has_tool(text: str) -> bool:
    """True when ``text`` names a tool (``skillrag.text.tool_names``: backticked, called, named a tool,
    or numbered like ``open_bank_account_4821``)."""
    return bool(tool_names(text))


def units(text: str) -> list[str]:
    """Sentences, list items and table rows of a block of Markdown (``skillrag.text.units``), markup
    removed; headings, rules and code dropped. A table row is ``cell: cell; cell`` (the header row is
    dropped)."""
    rows = {r.start: r for r in table_rows(text)}
    out: list[str] = []
    for u in text_units(text):
        if u.kind == "header":
            continue
        if u.kind == "row":
            row = rows.get(u.start)
            cells = [c for c in (plain(c.text) for c in row.cells) if c] if row else []
            if cells:
                out.append(cells[0] + (": " + "; ".join(cells[1:]) if len(cells) > 1 else ""))
            continue
        line = plain(u.text)
        if line:
            out.append(line)
    return out


def article_parts(art: Article) -> list[tuple[str, str]]:
    """``(heading, text)`` of the article's leaf sections; the text before the first heading comes
    first under the article's title."""
    secs = sorted(art.sections, key=lambda s: s.start)
    if not secs:
        return [(art.title, art.body)]
    parts: list[tuple[str, str]] = []
    if secs[0].start > 0 and art.body[: secs[0].start].strip():
        parts.append((art.title, art.body[: secs[0].start]))
    for i, s in enumerate(secs):
        end = secs[i + 1].start if i + 1 < len(secs) else len(art.body)
        parts.append((s.heading, art.body[s.start : min(end, s.end) if s.end > s.start else end]))
    return parts


def is_statement(unit: str) -> bool:
    """A full sentence rather than a lead-in (``Follow these steps:``) or a short label."""
    return len(unit.split()) >= 6 and not unit.rstrip().endswith(":")


def purpose_statements(art: Article, limit: int = 2) -> list[str]:
    """Up to ``limit`` sentences of the article that state a purpose (module doc), first ones first;
    only full sentences from its first 1,500 characters count."""
    found = []
    for u in units(art.body[:1500]):
        if is_statement(u) and _PURPOSE.search(u) and not _EXCLUSION.search(u) and u not in found:
            found.append(u)
            if len(found) == limit:
                break
    return found


def exclusions(art: Article) -> list[str]:
    """Sentences of the article that explicitly exclude something from what it covers (module doc)."""
    out = []
    for u in units(art.body):
        for part in re.split(r";\s+", u) if _EXCLUSION.search(u) else [u]:
            if (_EXCLUSION.search(u) or _REDIRECT.match(part)) and u not in out:
                out.append(u)
                break
    return out


def first_statement(art: Article) -> str | None:
    for u in units(art.body):
        if is_statement(u):
            return u
    return None


def summary_line(art: Article, max_chars: int = 160) -> str:
    """One line on what ``art`` covers: its first purpose statement, else its first full sentence,
    else its section headings, else its first line; at most ``max_chars`` characters."""
    lead = purpose_statements(art, 1)
    if lead:
        return cut(lead[0], max_chars)
    heads = [s.heading for s in art.sections if s.level <= 3]
    first = first_statement(art)
    if first and len(first) >= 40:
        return cut(first, max_chars)
    if len(heads) >= 2:
        return cut("Sections: " + "; ".join(heads), max_chars)
    us = units(art.body)
    return cut(first or (us[0] if us else art.title), max_chars)


def key_line(texts: Iterable[str], terms: set[str], stem: object, max_chars: int = 200) -> str:
    """The unit of ``texts`` that best answers an aspect given by stemmed ``terms``: it names a term,
    a figure, a tool, a rule (``skillrag.text.rule_of``); shorter wins a tie. ``stem(word) -> stem``."""
    best, best_score = "", -1.0
    for pos, u in enumerate(u for t in texts for u in units(t)):
        words = {stem(w) for w in re.findall(r"[a-z0-9]+", u.lower())}  # type: ignore[operator]
        score = 2.0 * bool(words & terms) + 2.0 * has_figure(u) + 2.0 * has_tool(u) \
            + 1.0 * (rule_of(u) is not None) - (1.0 if len(u) > max_chars else 0.0) - 0.01 * pos
        if len(u.split()) < 3:
            score -= 2.0
        if score > best_score:
            best, best_score = u, score
    return cut(best, max_chars)


def classify_link(heading: str, sentence: str = "") -> LinkType:
    """The link type of a sentence from a section with this heading: a tool name in the sentence wins,
    then keywords of the heading, then keywords of the sentence, else ``reference``."""
    if has_tool(sentence):
        return LinkType.tool
    for text in (heading.lower(), sentence.lower()):
        for kind, keys in _HEADING_TYPES:
            if any(k in text for k in keys):
                return kind
    return LinkType.reference
