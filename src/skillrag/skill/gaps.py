"""Evidence gaps of an accepted output: warnings that ``save_output`` reports but never rejects on.

Three kinds, each a ``Gap(kind, message, subject)``:

* ``unquoted_identifier``: the guidance names something no snippet contains: a tool or system name
  (an identifier with an underscore, e.g. ``freeze_card_4410``, or anything in backticks), an amount
  (``$10``, ``25 USD``, ``2.5%``: currency and number must match) or a product name (two or more
  capitalised words, e.g. "Gold Rewards Card", that occur in one of the articles the output cites or
  the case read; the title of an article a snippet quotes covers it too). Names are compared
  case-insensitively; article ids are not identifiers.
* ``unused_snippet``: no step of the guidance uses the snippet: none shares one of its identifiers
  or three of its distinct content terms (all of them when it has fewer; English stop words dropped,
  Snowball stems). Steps are the numbered or bulleted lines of the guidance, else its paragraphs.
* ``unfetched_citation``: a snippet cites an article this case never read with ``get_article`` (the
  case's tool log in the workspace store knows).

These are heuristics meant to point at likely lost evidence (a step whose key fact has no quote
behind it); the evidence contract (``contract.validate_output``) is what accepts or rejects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from skillrag.skill.contract import normalize

__all__ = ["GAP_KINDS", "Gap", "evidence_gaps", "identifiers"]

GAP_KINDS = ("unquoted_identifier", "unused_snippet", "unfetched_citation")

_TOOL = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
_TICK = re.compile(r"`([^`\n]{2,80})`")
_CUR = {"$": "$", "usd": "$", "dollar": "$", "dollars": "$", "€": "€", "eur": "€", "euro": "€", "euros": "€",
        "£": "£", "gbp": "£", "pound": "£", "pounds": "£", "¥": "¥", "%": "%", "percent": "%"}
_AMOUNT = re.compile(
    r"(?P<pre>[$€£¥])\s?(?P<n1>\d[\d,]*(?:\.\d+)?)"
    r"|(?P<n2>\d[\d,]*(?:\.\d+)?)\s?(?P<post>%|percent\b|USD\b|EUR\b|GBP\b|dollars?\b|euros?\b|pounds?\b)",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][\w'’+&-]*(?:[ \t]+(?:of[ \t]+|&[ \t]+)?[A-Z0-9][\w'’+&-]*)+")
_JOIN = {"of", "&"}
_STEP = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+•])\s+")


@dataclass(frozen=True)
class Gap:
    """One warning: ``kind`` (one of ``GAP_KINDS``), a one-line ``message`` for the agent, and the
    ``subject`` it is about (the identifier, or ``snippets[i]``)."""

    kind: str
    message: str
    subject: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "subject": self.subject, "message": self.message}


def _amount_key(m: re.Match[str]) -> tuple[str, float] | None:
    number = (m.group("n1") or m.group("n2") or "").replace(",", "")
    unit = (m.group("pre") or m.group("post") or "").lower()
    try:
        return _CUR[unit], float(number)
    except (KeyError, ValueError):
        return None


def _amounts(text: str) -> dict[tuple[str, float], str]:
    out: dict[tuple[str, float], str] = {}
    for m in _AMOUNT.finditer(text):
        key = _amount_key(m)
        if key is not None:
            out.setdefault(key, m.group(0).strip())
    return out


def _tools(text: str) -> set[str]:
    found = set(_TOOL.findall(text))
    for inner in _TICK.findall(text):
        inner = inner.strip().rstrip("()")
        if inner and " " not in inner:
            found.add(inner)
    return found


def _names(text: str, corpus: str) -> set[str]:
    """Capitalised runs of two or more words in ``text``; of each run, the longest part of at least
    two words that occurs in ``corpus`` (case-folded), so "Open Navy Blue Account" gives
    "Navy Blue Account" when that is the name the articles use."""
    out: set[str] = set()
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        best = ""
        for i in range(len(words)):
            for j in range(len(words), i + 1, -1):
                if words[i] in _JOIN or words[j - 1] in _JOIN or j - i < 2:
                    continue
                cand = " ".join(words[i:j])
                if len(cand) > len(best) and cand.casefold() in corpus:
                    best = cand
        if best:
            out.add(best)
    return out


def identifiers(text: str) -> set[str]:
    """Tool names and amounts in ``text`` as they are written (for tests and overlap checks)."""
    return _tools(text) | set(_amounts(text).values())


def _steps(guidance: str) -> list[str]:
    lines = [ln for ln in guidance.splitlines() if ln.strip()]
    steps: list[str] = []
    for ln in lines:
        if _STEP.match(ln) or not steps:
            steps.append(ln)
        else:
            steps[-1] += " " + ln.strip()
    if len(steps) <= 1 and "\n\n" in guidance:
        steps = [p for p in re.split(r"\n\s*\n", guidance) if p.strip()]
    return steps


def evidence_gaps(
    output: Mapping[str, Any],
    bodies: Mapping[str, str],
    *,
    titles: Mapping[str, str] | None = None,
    fetched: Iterable[str] | None = None,
    terms: Any = None,
) -> list[Gap]:
    """The gaps of an output the contract accepted (see module doc).

    ``bodies``: article id → body for the articles the output cites and those the case read (product
    names are looked up there); ``titles``: their titles; ``fetched``: ids the case read with
    ``get_article`` (None: unknown, so no ``unfetched_citation`` warning); ``terms``: a text analyser
    (default: ``skillrag.search.Analyzer()``'s ``terms``).
    """
    if terms is None:
        from skillrag.search.tokenize import Analyzer

        terms = Analyzer().terms
    guidance = str(output.get("guidance") or "")
    snippets = [s for s in output.get("snippets") or [] if isinstance(s, dict)]
    texts = [normalize(str(s.get("text") or "")) for s in snippets]
    quoted = "\n".join(texts)
    # a product name is covered by a snippet's text or by the title of the article the snippet quotes
    quoted_cf = "\n".join([quoted, *(normalize(str(s.get("source_title") or "")) for s in snippets)]).casefold()
    ids = {str(s.get("source_article")) for s in snippets} | set(bodies)
    gaps: list[Gap] = []

    # 1. identifiers in the guidance that no snippet holds
    guide = normalize(guidance)
    for tool in sorted(_tools(guide)):
        if tool in quoted or any(tool in i for i in ids):
            continue
        gaps.append(Gap("unquoted_identifier", f"the guidance names `{tool}` but no snippet contains it: quote "
                        "the passage that states it, or check the name", tool))
    have = _amounts(quoted)
    for key, written in _amounts(guide).items():
        if key not in have:
            gaps.append(Gap("unquoted_identifier", f"the guidance states the amount {written} but no snippet "
                            "contains it: quote the passage that states it, or check the figure", written))
    corpus = "\n".join([*(normalize(b) for b in bodies.values()), *(titles or {}).values()]).casefold()
    for name in sorted(_names(guide, corpus)):
        if name.casefold() in quoted_cf:
            continue
        gaps.append(Gap("unquoted_identifier", f"the guidance names {name!r} but no snippet contains it: quote "
                        "the passage about it, or check the name", name))

    # 2. snippets no step uses
    steps = _steps(guide)
    step_terms = [set(terms(st)) for st in steps]
    step_ids = [{x.casefold() for x in identifiers(st)} for st in steps]
    for i, (s, text) in enumerate(zip(snippets, texts, strict=True)):
        own = set(terms(text))
        own_ids = {x.casefold() for x in identifiers(text)}
        need = min(3, len(own))
        used = any(own_ids & sid or len(own & st) >= need for st, sid in zip(step_terms, step_ids, strict=True))
        if own and not used:
            gaps.append(Gap("unused_snippet", f"snippets[{i}] ({s.get('source_article')}) shares nothing with any "
                            "step of the guidance: tie it to the step it supports, or drop it", f"snippets[{i}]"))

    # 3. citations of articles this case never read
    if fetched is not None:
        read = set(fetched)
        seen: set[str] = set()
        for i, s in enumerate(snippets):
            aid = str(s.get("source_article") or "")
            if aid and aid not in read and aid not in seen:
                seen.add(aid)
                gaps.append(Gap("unfetched_citation", f"snippets[{i}] cites {aid}, which this case never read with "
                                "get_article: read it before relying on it", f"snippets[{i}]"))
    return gaps
