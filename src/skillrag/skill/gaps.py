"""Evidence gaps of an accepted output: warnings that ``save_output`` reports but never rejects on.

Four kinds, each a ``Gap(kind, message, subject)``:

* ``unquoted_identifier``: the guidance names something no snippet contains: a tool or system name
  (an identifier with an underscore, e.g. ``freeze_card_4410``, or anything in backticks), an amount
  (``$10``, ``25 USD``, ``2.5%``: currency and number must match) or a product name (two or more
  capitalised words, at least two of them words rather than numbers, e.g. "Gold Rewards Card", that
  occur in one of the articles the output cites or the case read; the title of an article a snippet
  quotes covers it too). Everything is compared case-insensitively ("Tier 1 Plan" is covered by
  "TIER 1 PLAN"); quote marks around a name, a possessive ``'s`` and a leading article or determiner
  ("The Green Account" is the Green Account) are not part of it; an amount ends at its last digit
  ("$15," is $15; a comma inside one only separates thousands: "$1,500"); article ids are not identifiers. Structure labels (a word and a number: "Step 1", "Tier 2", "CODE 05") are not
  names. **Case facts are not policy claims**: an identifier that occurs in the agent-facing case
  (``case_text``: its notes, messages and field names, e.g. the customer's "$700", a competitor's
  "8%", a user id ``friend_user_5839``, the customer's "Cobalt Blue" account, ``as_of``) is never
  flagged, whatever the articles say.
* ``unused_snippet``: the snippet is linked to no step of the guidance by the one step-to-snippet rule
  (``skill.links``, also the review page's): its ``why`` names no step, no step quotes it, and no step
  shares enough of its content terms (those of its text and its ``why``; case, hyphens and inflection
  do not matter: "invitation-only" and "by invitation only" share *invit onli*). A snippet with no
  content terms at all (only figures) is not judged.
* ``unfetched_citation``: a snippet cites an article this case never read with ``get_article`` (the
  case's tool log in the workspace store knows).
* ``source_title_mismatch``: a snippet's ``source_title`` is not the title of the article it cites
  (compared after the contract's ``normalize``, case-insensitively): copy it from the article header.

These are heuristics meant to point at likely lost evidence (a step whose key fact has no quote
behind it); the evidence contract (``contract.validate_output``) is what accepts or rejects.

Identifiers are matched against **all** snippets, not against the snippets of the step that states
them. Matching per step would cost nothing to compute, but it needs each snippet's step, and that is
only known when its free-text ``why`` names the step ("step 3"); otherwise it is a guess (shared
words, as ``unused_snippet`` and the review page do). A wrong guess, or one quote backing two steps
("refund the $25 fee from step 2"), would flag outputs whose figure *is* quoted, and false alarms are
what made agents bend their guidance to silence this warning. A figure quoted under another step is
still verifiable: the review page links every snippet to its step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from skillrag.skill.contract import normalize
from skillrag.skill.links import guidance_steps, link_steps, split_guidance

__all__ = ["GAP_KINDS", "Gap", "case_text", "evidence_gaps", "identifiers"]

GAP_KINDS = ("unquoted_identifier", "unused_snippet", "unfetched_citation", "source_title_mismatch")

_TOOL = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-])")
_TICK = re.compile(r"`([^`\n]{2,80})`")
_CUR = {"$": "$", "usd": "$", "dollar": "$", "dollars": "$", "€": "€", "eur": "€", "euro": "€", "euros": "€",
        "£": "£", "gbp": "£", "pound": "£", "pounds": "£", "¥": "¥", "%": "%", "percent": "%"}
_AMOUNT = re.compile(
    r"(?P<pre>[$€£¥])\s?(?P<n1>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"|(?P<n2>\d+(?:,\d{3})*(?:\.\d+)?)\s?(?P<post>%|percent\b|USD\b|EUR\b|GBP\b|dollars?\b|euros?\b|pounds?\b)",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][\w'’+&-]*(?:[ \t]+(?:of[ \t]+|&[ \t]+)?[A-Z0-9][\w'’+&-]*)+")
_JOIN = {"of", "&"}
#: Words that open a sentence or a noun phrase ("The Green Account"), never the start of a name.
_LEADING = {"the", "a", "an", "this", "that", "these", "those", "our", "your", "their", "its", "my", "each", "every",
            "any", "some", "no", "both"}
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_WORDY = re.compile(r"[^\W\d_]{2,}")  # a word with letters, not a number or a code like "05"


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
        words = _name_words(m.group(0))
        best = ""
        for i in range(len(words)):
            for j in range(len(words), i + 1, -1):
                if words[i] in _JOIN or words[j - 1] in _JOIN or j - i < 2:
                    continue
                if sum(1 for w in words[i:j] if _WORDY.search(w)) < 2:
                    continue  # a structure label ("Step 1", "Tier 2", "CODE 05"), not a name
                cand = " ".join(words[i:j])
                if len(cand) > len(best) and cand.casefold() in corpus:
                    best = cand
        if best:
            out.add(best)
    return out


def _name_words(run: str) -> list[str]:
    """The words of a capitalised run, without quote marks around them; a possessive (``Account's``)
    ends the name."""
    words: list[str] = []
    for raw in run.split():
        w = raw.strip("'’")
        if _POSSESSIVE.search(raw):
            w = _POSSESSIVE.sub("", raw).strip("'’")
            if w:
                words.append(w)
            break
        if not w:
            break
        words.append(w)
    while words and words[0].casefold() in _LEADING:
        words.pop(0)  # "The Green Account" is the Green Account
    return words


def case_text(case: Any) -> str:
    """The agent-facing case as one text for ``evidence_gaps``: every field name and every value of
    ``case`` (a mapping such as ``Case.model_dump(mode="json")``, lists and nested mappings
    included), one per line."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                out.append(str(k))
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif value is not None:
            out.append(str(value))

    walk(case)
    return "\n".join(out)


class _CaseFacts:
    """What the case itself states: its amounts, identifiers and text (case-folded)."""

    def __init__(self, text: str) -> None:
        norm = normalize(text)
        self.amounts = set(_amounts(norm))
        self.tools = {t.casefold() for t in _tools(norm)}
        self.text = norm.casefold()

    def names(self, name: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", self.text) is not None


def identifiers(text: str) -> set[str]:
    """Tool names and amounts in ``text`` as they are written (for tests and overlap checks)."""
    return _tools(text) | set(_amounts(text).values())


def evidence_gaps(
    output: Mapping[str, Any],
    bodies: Mapping[str, str],
    *,
    titles: Mapping[str, str] | None = None,
    fetched: Iterable[str] | None = None,
    terms: Any = None,
    case: str | None = None,
) -> list[Gap]:
    """The gaps of an output the contract accepted (see module doc).

    ``bodies``: article id → body for the articles the output cites and those the case read (product
    names are looked up there); ``titles``: their titles (None: unknown, so no
    ``source_title_mismatch`` warning); ``fetched``: ids the case read with ``get_article`` (None:
    unknown, so no ``unfetched_citation`` warning); ``terms``: a text analyser (default:
    ``skillrag.search.Analyzer()``'s ``terms``); ``case``: the agent-facing case as text
    (``case_text``; None: unknown, so every identifier counts as a policy claim).
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
    ids = {str(s.get("source_article")).casefold() for s in snippets} | {b.casefold() for b in bodies}
    facts = _CaseFacts(case or "")
    gaps: list[Gap] = []

    # 1. identifiers in the guidance that no snippet holds (and the case does not state)
    guide = normalize(guidance)
    for tool in sorted(_tools(guide)):
        cf = tool.casefold()
        if cf in quoted_cf or cf in facts.tools or any(cf in i for i in ids):
            continue
        gaps.append(Gap("unquoted_identifier", f"the guidance names `{tool}` but no snippet contains it: quote "
                        "the passage that states it, or check the name", tool))
    have = _amounts(quoted)
    for key, written in _amounts(guide).items():
        if key not in have and key not in facts.amounts:
            gaps.append(Gap("unquoted_identifier", f"the guidance states the amount {written} but no snippet "
                            "contains it: quote the passage that states it, or check the figure", written))
    corpus = "\n".join([*(normalize(b) for b in bodies.values()), *(titles or {}).values()]).casefold()
    for name in sorted(_names(guide, corpus)):
        if name.casefold() in quoted_cf or facts.names(name):
            continue
        gaps.append(Gap("unquoted_identifier", f"the guidance names {name!r} but no snippet contains it: quote "
                        "the passage about it, or check the name", name))

    # 2. snippets no step uses (the one step-to-snippet rule, ``skill.links``)
    steps = guidance_steps(split_guidance(guidance))
    for i in link_steps(steps, snippets, terms=terms):
        s = snippets[i]
        if not any(not t.isdigit() for t in terms(texts[i])):
            continue  # nothing to tell its step by (only figures and stop words): not judged
        gaps.append(Gap("unused_snippet", f"snippets[{i}] ({s.get('source_article')}) is linked to no step of the "
                        "guidance: name the step it supports in its why (\"step 3\"), or drop it", f"snippets[{i}]"))

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

    # 4. titles that are not the cited article's
    for i, s in enumerate(snippets):
        aid = str(s.get("source_article") or "")
        title = (titles or {}).get(aid)
        given = str(s.get("source_title") or "")
        if title is not None and _fold(given) != _fold(title):
            gaps.append(Gap("source_title_mismatch", f"snippets[{i}].source_title {given!r} is not the title of "
                            f"{aid} ({title!r}): copy the title from the article header", f"snippets[{i}]"))
    return gaps


def _fold(text: str) -> str:
    return normalize(text).casefold()
