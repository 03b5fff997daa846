"""Deterministic text helpers: phrase matching with offsets, look-alike names, units, values.

All offsets are character offsets into the string passed in. Matching is case-insensitive and
treats any hyphen or dash (``-``, U+2010–U+2015) and whitespace run as the same separator, so
``Rho-Bank`` matches ``Rho‑Bank`` (non-breaking hyphen) — that is typography, not a relaxed name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from skillrag.corpus.model import Section

__all__ = [
    "FUNCTION_WORDS",
    "Mention",
    "Span",
    "Value",
    "find_mentions",
    "find_values",
    "innermost_section",
    "named_subjects",
    "norm_name",
    "slug",
    "split_units",
    "stem_terms",
    "stem_word",
]

_DASHES = "\\-\u2010\u2011\u2012\u2013\u2014\u2015"
_SEP = f"[\\s{_DASHES}\u00a0]+"
_SPLIT = re.compile(f"[\\s{_DASHES}\u00a0]+")

#: Capitalised words that start a sentence or title without being part of a product's name.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "apply",
        "are",
        "at",
        "before",
        "but",
        "by",
        "can",
        "choose",
        "close",
        "compare",
        "current",
        "do",
        "does",
        "each",
        "every",
        "existing",
        "for",
        "from",
        "get",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "internal",
        "is",
        "it",
        "its",
        "manage",
        "managing",
        "my",
        "new",
        "no",
        "not",
        "note",
        "of",
        "on",
        "open",
        "or",
        "our",
        "over",
        "per",
        "please",
        "request",
        "see",
        "select",
        "that",
        "the",
        "their",
        "these",
        "this",
        "those",
        "to",
        "under",
        "use",
        "using",
        "via",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yes",
        "add",
        "activate",
        "cancel",
        "canceling",
        "replace",
        "replacing",
        "requesting",
        "tracking",
        "understanding",
        "viewing",
    ]
)


def norm_name(text: str) -> str:
    """Comparable form of a name: lower case, dashes and whitespace runs as one space, no ``'s``."""
    text = re.sub(r"['’]s\b", "", text.strip())
    return " ".join(t for t in _SPLIT.split(text.lower()) if t)


def slug(text: str) -> str:
    """``Gold Rewards Card`` → ``gold-rewards-card``."""
    return re.sub(r"[^a-z0-9]+", "-", norm_name(text)).strip("-") or "subject"


def _phrase_pattern(name: str) -> re.Pattern[str]:
    toks = [re.escape(t) for t in _SPLIT.split(name.strip()) if t]
    if not toks:
        raise ValueError("empty name")
    toks[-1] = toks[-1] + "(?:e?s)?" if toks[-1][-1:].isalpha() else toks[-1]
    return re.compile(r"(?<![\w])" + _SEP.join(toks) + r"(?![\w])", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Mention:
    """One occurrence of a name. ``full_name`` is the name as the text extends it: a capitalised
    word before it (``Business`` Gold Rewards Card) or a parenthetical after it (Green Account
    ``(savings)``). ``extended_by`` is the extra text (empty when the name stands alone)."""

    start: int
    end: int
    text: str
    full_name: str
    extended_by: str = ""
    qualifier: str = ""


_PREV_WORD = re.compile(r"([A-Za-z][\w'’+&" + _DASHES + r"]*)[ \t\u00a0]+$")
_QUALIFIER = re.compile(r"^[ \t]*\(([^()\n]{1,30})\)")


def find_mentions(name: str, text: str, *, allowed_prefix: str | None = None) -> list[Mention]:
    """Every occurrence of ``name`` in ``text`` with its look-alike extension, if any.

    A capitalised word right before the match that is not a function word (see ``FUNCTION_WORDS``)
    and not part of ``allowed_prefix`` (the parent entity, as in ``Rho-Bank Gold Card``) extends
    the name into a different subject. A parenthetical right after it is kept as ``qualifier``.
    """
    allowed = set(norm_name(allowed_prefix).split()) if allowed_prefix else set()
    out: list[Mention] = []
    for m in _phrase_pattern(name).finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start : m.start()]
        ext = ""
        pw = _PREV_WORD.search(before)
        if pw:
            word = pw.group(1)
            base = norm_name(word)
            if word[0].isupper() and base not in FUNCTION_WORDS and not (set(base.split()) <= allowed):
                ext = word
        q = _QUALIFIER.match(text[m.end() : m.end() + 40])
        qualifier = q.group(1).strip() if q else ""
        full = f"{ext} {m.group(0)}" if ext else m.group(0)
        if qualifier:
            full = f"{full} ({qualifier})"
        out.append(Mention(m.start(), m.end(), m.group(0), full, ext, qualifier))
    return out


_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_SENT_END = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z0-9\"'(“])")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]")


def split_units(body: str) -> Iterator[Span]:
    """Sentence-sized spans of ``body``: each non-heading line, split at sentence ends; list
    markers and surrounding whitespace are left out. Spans are exact: ``body[s:e] == text``."""
    pos = 0
    for line in body.splitlines(keepends=True):
        start, stripped = pos, line.rstrip("\r\n")
        pos += len(line)
        if not stripped.strip() or _HEADING.match(stripped) or set(stripped.strip()) <= set("-|=*_ :"):
            continue
        lm = _LIST_MARK.match(stripped)
        offset = lm.end() if lm else len(stripped) - len(stripped.lstrip())
        cuts = [offset] + [m.end() for m in _SENT_END.finditer(stripped, offset)] + [len(stripped)]
        for a, b in itertools.pairwise(cuts):
            seg = stripped[a:b]
            lead = len(seg) - len(seg.lstrip())
            seg = seg.strip()
            if seg:
                s = start + a + lead
                yield Span(s, s + len(seg), seg)


def innermost_section(sections: Sequence[Section], pos: int) -> Section | None:
    """The deepest section whose span holds offset ``pos`` (None when no heading covers it)."""
    best: Section | None = None
    for sec in sections:
        if sec.start <= pos < sec.end and (best is None or sec.start >= best.start):
            best = sec
    return best


_STEM_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "on",
        "in",
        "at",
        "to",
        "by",
        "with",
        "from",
        "and",
        "or",
        "is",
        "are",
        "was",
        "be",
        "what",
        "which",
        "how",
        "much",
        "many",
        "does",
        "do",
        "can",
        "could",
        "would",
        "should",
        "will",
        "there",
        "any",
        "this",
        "that",
        "it",
        "its",
        "me",
        "my",
        "i",
        "we",
        "our",
        "your",
        "you",
        "about",
    ]
)


def stem_word(word: str) -> str:
    """One word as ``stem_terms`` keeps it: lower case, a plain plural ``s`` removed."""
    tok = word.lower()
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        tok = tok[:-1]
    return tok


def stem_terms(text: str | None) -> set[str]:
    """Content words of ``text``, lower-cased, with a plain plural ``s`` removed."""
    if not text:
        return set()
    out = set()
    for tok in re.findall(r"[a-z0-9]+", text.lower()):
        if tok not in _STEM_STOP:
            out.add(stem_word(tok))
    return out


@dataclass(frozen=True)
class Value:
    """A quantity found in text: ``kind`` is ``usd``, ``pct`` or ``dur``; ``normalized`` compares."""

    kind: str
    text: str
    normalized: str
    start: int


_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_PCT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_DUR = re.compile(
    r"\b(\d+)[\s\-\u2011]+(business day|calendar day|day|hour|minute|week|month|year)s?\b", re.IGNORECASE
)


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def find_values(text: str) -> list[Value]:
    """Money (``$32.50`` → ``usd:32.50``), percentages (``17.99%`` → ``pct:17.99``) and
    durations (``105 days`` → ``dur:105 day``) in ``text``, in order of position."""
    out = [Value("usd", m.group(0), f"usd:{_num(m.group(1)):.2f}", m.start()) for m in _MONEY.finditer(text)]
    out += [Value("pct", m.group(0), f"pct:{_num(m.group(1)):g}", m.start()) for m in _PCT.finditer(text)]
    out += [
        Value("dur", m.group(0), f"dur:{int(m.group(1))} {m.group(2).lower()}", m.start())
        for m in _DUR.finditer(text)
    ]
    return sorted(out, key=lambda v: v.start)


def named_subjects(text: str, head: str) -> list[str]:
    """Capitalised names in ``text`` that end in the noun ``head`` (``Silver Rewards Card`` for
    head ``Card``), leading function words removed; one-word bare heads are left out."""
    pat = re.compile(r"((?:[A-Z][\w'’+&" + _DASHES + r"]*[ \t\u00a0]+){1,5})(" + re.escape(head) + r")s?\b")
    names = []
    for m in pat.finditer(text):
        words = m.group(1).split()
        while words and norm_name(words[0]) in FUNCTION_WORDS:
            words.pop(0)
        if words:
            names.append(" ".join(words + [m.group(2)]))
    return names
