"""Deterministic text helpers: phrase matching with offsets, look-alike names, units, values.

All offsets are character offsets into the string passed in. Matching is case-insensitive and
treats any hyphen or dash (``-``, U+2010–U+2015) and whitespace run as the same separator, so
``Rho-Bank`` matches ``Rho‑Bank`` (non-breaking hyphen) — that is typography, not a relaxed name.

A *topic* name (``APN settings``, ``data refuel``; ``question.is_topic``) is matched by its words'
Snowball stems (PyStemmer), in any order, within a few words on one line: ``refuel data`` and
``Data refueling`` both name the topic ``data refuel``.

Organisations (``organisations``, ``other_entities``) and the values-and-tables set
(``find_values``, ``value_kinds``, ``zero_value``, ``table_rows`` — Markdown tables as
markdown-it-py's GFM rule reads them) are generic: they know nothing of subjects or evidence, and
are kept together, apart from the name matching, for the shared ``text`` layer.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import Stemmer

from skillrag.corpus.model import Section
from skillrag.evidence.question import ENTITY_SUFFIXES, is_topic

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = [
    "FUNCTION_WORDS",
    "Cell",
    "Mention",
    "Span",
    "TableRow",
    "Value",
    "find_mentions",
    "find_values",
    "innermost_section",
    "named_subjects",
    "norm_name",
    "organisations",
    "other_entities",
    "proper_form",
    "same_org",
    "section_path",
    "slug",
    "snowball",
    "split_units",
    "stem_terms",
    "stem_word",
    "table_rows",
    "value_kinds",
    "zero_value",
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
    ``(savings)``). ``extended_by`` is the extra text (empty when the name stands alone).
    ``issuer`` is the organisation written right before the name, as an owner (``Harbor Bank's``)
    or a name ending in Bank, Inc, … (``Brightwater Bank`` Gold Card), or right after it with
    ``from``/``by``/``at``/``of``/``issued by``/``offered by``/``provided by`` (the Gold Card
    ``from Zenith Bank``): it says whose the subject is, it does not make it a different subject —
    unless the caller's parent entity is another organisation, in which case the issuer is also
    ``extended_by``."""

    start: int
    end: int
    text: str
    full_name: str
    extended_by: str = ""
    qualifier: str = ""
    issuer: str = ""


_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=8192)
def snowball(word: str) -> str:
    """The Snowball (Porter 2) stem of ``word``, lower-cased: ``refueling`` → ``refuel``."""
    return _STEMMER.stemWord(word.lower())


def same_org(a: str | None, b: str | None) -> bool:
    """True when two organisation names are the same, an organisation suffix aside:
    ``Brightwater`` and ``Brightwater Bank``; ``Rho-Bank`` and ``Rho Bank``."""
    if not a or not b:
        return False
    x, y = norm_name(a).split(), norm_name(b).split()
    if x == y:
        return True
    short, long_ = (x, y) if len(x) < len(y) else (y, x)
    return long_[: len(short)] == short and all(w in ENTITY_SUFFIXES for w in long_[len(short) :])


_PREV_WORD = re.compile(r"([A-Za-z][\w'’+&" + _DASHES + r"]*)[ \t\u00a0]+$")
_PREV_RUN = re.compile(r"((?:[A-Z][\w'’+&" + _DASHES + r"]*[ \t\u00a0]+){0,3}[A-Z][\w'’+&" + _DASHES + r"]*)[ \t\u00a0]+$")
_TOPIC_STOP = frozenset(["a", "an", "the", "of", "for", "on", "in", "to", "and", "or", "with", "by", "at"])
#: Most words between the first and the last word of a topic's mention, beyond the topic's own.
TOPIC_SLACK = 6


def _issuer_before(before: str, word: str) -> str:
    """The organisation that ``word`` (the word right before a name) ends, or ``""``: an owner
    (``Harbor Bank's``) or a name ending in an organisation suffix (``Brightwater Bank``)."""
    possessive = re.search(r"['’]s?$", word) is not None and word[:1].isupper()
    last = norm_name(word).split()[-1:] or [""]
    if not possessive and not (word[:1].isupper() and last[0] in ENTITY_SUFFIXES):
        return ""
    run = _PREV_RUN.search(before)
    words = run.group(1).split() if run else [word]
    while len(words) > 1 and norm_name(words[0]) in FUNCTION_WORDS:
        words.pop(0)
    return re.sub(r"['’]s?$", "", " ".join(words))


def _topic_mentions(name: str, text: str) -> list[Mention]:
    want = {snowball(w) for w in re.findall(r"[A-Za-z0-9]+", re.sub(r"\([^()]*\)", "", name))}
    want -= _TOPIC_STOP
    if not want:
        return []
    out: list[Mention] = []
    for line in re.finditer(r"[^\n]+", text):
        toks = [(m.start() + line.start(), m.end() + line.start(), snowball(m.group()))
                for m in re.finditer(r"[A-Za-z0-9]+", line.group())]
        i = 0
        while i < len(toks):
            if toks[i][2] not in want:
                i += 1
                continue
            seen: set[str] = set()
            hit = None
            for j in range(i, min(len(toks), i + len(want) + TOPIC_SLACK)):
                if toks[j][2] in want:
                    seen.add(toks[j][2])
                if seen == want:
                    hit = j
                    break
            if hit is None:
                i += 1
                continue
            a, b = toks[i][0], toks[hit][1]
            out.append(Mention(a, b, text[a:b], text[a:b]))
            i = hit + 1
    return out

_QUALIFIER = re.compile(r"^[ \t]*\(([^()\n]{1,30})\)")

#: An organisation's name: a capitalised word before Bank, Inc, Corp, Ltd, LLC, PLC, Company or
#: Credit Union (``Brightwater Bank``, ``Rho-Bank``).
_ORG_SUFFIX = r"(Bank|Inc|Corp|Corporation|Ltd|LLC|PLC|Company|Credit Union)\b"
_ENTITY = re.compile(r"\b([A-Z][\w&'’]*)[ \t\-\u2010\u2011]+" + _ORG_SUFFIX)
_ISSUER_AFTER = re.compile(
    r"[ \t]+(?:from|by|at|of|(?:issued|offered|provided)[ \t]+by)[ \t]+(?:the[ \t]+)?"
    r"([A-Z][\w&]*)[ \t\-\u2010\u2011]+" + _ORG_SUFFIX
)


def find_mentions(name: str, text: str, *, allowed_prefix: str | None = None) -> list[Mention]:
    """Every occurrence of ``name`` in ``text`` with its look-alike extension, if any.

    A capitalised word right before the match that is not a function word (see ``FUNCTION_WORDS``)
    and not part of ``allowed_prefix`` (the parent entity, as in ``Rho-Bank Gold Card``) extends
    the name into a different subject. An organisation right before it (``Harbor Bank's``,
    ``Brightwater Bank``) is its ``issuer``, not an extension, unless ``allowed_prefix`` names
    another organisation. A parenthetical right after it is kept as ``qualifier``. A topic name
    (module doc) is matched by stems and has no extensions.
    """
    if is_topic(name):
        return _topic_mentions(name, text)
    allowed = set(norm_name(allowed_prefix).split()) if allowed_prefix else set()
    out: list[Mention] = []
    for m in _phrase_pattern(name).finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start : m.start()]
        ext = ""
        issuer = ""
        pw = _PREV_WORD.search(before)
        if pw:
            word = pw.group(1)
            base = norm_name(word)
            issuer = _issuer_before(before, word)
            if issuer:
                if allowed_prefix and not same_org(issuer, allowed_prefix):
                    ext = issuer  # another organisation's product of the same name
            elif word[0].isupper() and base not in FUNCTION_WORDS and not (set(base.split()) <= allowed):
                ext = word
        q = _QUALIFIER.match(text[m.end() : m.end() + 40])
        qualifier = q.group(1).strip() if q else ""
        if not issuer:
            after = _ISSUER_AFTER.match(text, q.end() + m.end() if q else m.end())
            if after and norm_name(after.group(1)) not in _NOT_A_NAME:
                issuer = _org_name(after)
                if allowed_prefix and not ext and not same_org(issuer, allowed_prefix):
                    ext = issuer
        full = f"{ext} {m.group(0)}" if ext else m.group(0)
        if qualifier:
            full = f"{full} ({qualifier})"
        out.append(Mention(m.start(), m.end(), m.group(0), full, ext, qualifier, issuer))
    return out


_NOT_A_NAME = FUNCTION_WORDS | {
    "between",
    "contact",
    "other",
    "every",
    "standard",
    "linked",
    "notify",
    "find",
    "retrieving",
}


def _org_name(m: re.Match[str]) -> str:
    return f"{m.group(1)}{'-' if m.string[m.end(1)] == '-' else ' '}{m.group(2)}"


def organisations(text: str) -> list[str]:
    """Organisation names in ``text``, in order, each once: a capitalised word before Bank, Inc,
    Corp, Ltd, LLC, PLC, Company or Credit Union (``Brightwater Bank``, ``Rho-Bank``)."""
    out: list[str] = []
    for m in _ENTITY.finditer(text):
        if norm_name(m.group(1)) in _NOT_A_NAME:
            continue
        name = _org_name(m)
        if not any(same_org(name, o) for o in out):
            out.append(name)
    return out


def other_entities(text: str, parent: str) -> list[str]:
    """Organisation names in ``text`` (see ``organisations``) that are not ``parent``
    (``Brightwater Bank`` is the parent ``Brightwater``: ``same_org``)."""
    want = norm_name(parent)
    return [
        name
        for name in organisations(text)
        if not same_org(name, parent) and not want.endswith(norm_name(name))
    ]


def proper_form(name: str, texts: Iterable[str]) -> str | None:
    """The way ``texts`` most often write ``name`` (matched case-insensitively, dashes and spaces
    as one separator, as ``find_mentions`` matches a proper name) as a proper name: every word
    capitalised, function words such as ``of`` aside (``gold rewards card`` → ``Gold Rewards
    Card``). None when they never write it so; ties go to the first seen."""
    try:
        pat = _phrase_pattern(name)
    except ValueError:
        return None
    want = [t for t in _SPLIT.split(name.strip()) if t]
    seen: dict[str, int] = {}
    for text in texts:
        for m in pat.finditer(text):
            words = [t for t in _SPLIT.split(m.group(0)) if t]
            if len(words) != len(want):
                continue
            words[-1] = words[-1][: len(want[-1])]  # "Cards" for "card": the name's own number
            if all(w[:1].isupper() or w.lower() in FUNCTION_WORDS for w in words) and words[0][:1].isupper():
                form = " ".join(words)
                seen[form] = seen.get(form, 0) + 1
    return max(seen, key=lambda f: seen[f]) if seen else None


_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_SENT_END = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z0-9\"'(“])")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]")


def split_units(body: str) -> Iterator[Span]:
    """Sentence-sized spans of ``body``: each non-heading line, split at sentence ends (a table
    row, a line opening with ``|``, is one span); list markers and surrounding whitespace are left
    out. Spans are exact: ``body[s:e] == text``."""
    pos = 0
    for line in body.splitlines(keepends=True):
        start, stripped = pos, line.rstrip("\r\n")
        pos += len(line)
        if not stripped.strip() or _HEADING.match(stripped) or set(stripped.strip()) <= set("-|=*_ :"):
            continue
        lm = _LIST_MARK.match(stripped)
        offset = lm.end() if lm else len(stripped) - len(stripped.lstrip())
        if stripped[offset:].startswith("|"):
            cuts = [offset, len(stripped)]
        else:
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


# ---------------------------------------------------------------------------------------------
# Values and tables. Generic recognition, with exact offsets: the values a text states (money,
# percentages, durations, data amounts, URLs, dates), which kinds of value an attribute asks for,
# a stated zero ("no annual fee"), and the rows of Markdown tables with their header cells.
# Nothing here knows about subjects or evidence: this is the set to move into the `text` layer.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A value found in text: ``kind`` is ``usd``, ``pct``, ``dur``, ``size`` (data amounts),
    ``url`` or ``date``; ``normalized`` compares; ``start`` is its offset in the text searched."""

    kind: str
    text: str
    normalized: str
    start: int


_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_PCT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_DUR = re.compile(
    r"\b(\d+)[\s\-\u2011]+(business day|calendar day|day|hour|minute|week|month|year)s?\b", re.IGNORECASE
)
_SIZE = re.compile(r"\b(\d+(?:\.\d+)?)\s?(KB|MB|GB|TB)\b", re.IGNORECASE)
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>()\[\]\"'`]+")
_SIZE_IN_GB = {"kb": 1 / 1024 / 1024, "mb": 1 / 1024, "gb": 1.0, "tb": 1024.0}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH = (
    r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DATE_MDY = re.compile(rf"\b{_MONTH}[ \t]+(\d{{1,2}})(?:st|nd|rd|th)?,?[ \t]+(\d{{4}})\b")
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?[ \t]+{_MONTH}[ \t]+(\d{{4}})\b")


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _date(m: re.Match[str], y: int, mo: int | str, d: int) -> Value | None:
    import datetime as _dt

    month = mo if isinstance(mo, int) else _MONTHS.index(mo[:3].lower()) + 1
    try:
        day = _dt.date(y, month, d)
    except ValueError:
        return None
    return Value("date", m.group(0), f"date:{day.isoformat()}", m.start())


def find_values(text: str) -> list[Value]:
    """Money (``$32.50`` → ``usd:32.50``; ``$5,000`` → ``usd:5000.00``), percentages (``17.99%``
    → ``pct:17.99``), durations (``105 days`` → ``dur:105 day``), data amounts (``2 GB`` →
    ``size:2gb``, ``512 MB`` → ``size:0.5gb``), URLs (``http://mms.example/x`` →
    ``url:http://mms.example/x``, trailing punctuation left out) and dates (``2025-03-01``,
    ``March 1, 2025``, ``1 March 2025`` → ``date:2025-03-01``) in ``text``, in order of position."""
    out = [Value("usd", m.group(0), f"usd:{_num(m.group(1)):.2f}", m.start()) for m in _MONEY.finditer(text)]
    out += [
        Value("size", m.group(0), f"size:{_num(m.group(1)) * _SIZE_IN_GB[m.group(2).lower()]:g}gb", m.start())
        for m in _SIZE.finditer(text)
    ]
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(".,;:!?")
        out.append(Value("url", url, "url:" + url.lower().rstrip("/"), m.start()))
    out += [Value("pct", m.group(0), f"pct:{_num(m.group(1)):g}", m.start()) for m in _PCT.finditer(text)]
    out += [
        Value("dur", m.group(0), f"dur:{int(m.group(1))} {m.group(2).lower()}", m.start())
        for m in _DUR.finditer(text)
    ]
    dates = [_date(m, int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in _DATE_ISO.finditer(text)]
    dates += [_date(m, int(m.group(3)), m.group(1), int(m.group(2))) for m in _DATE_MDY.finditer(text)]
    dates += [_date(m, int(m.group(3)), m.group(2), int(m.group(1))) for m in _DATE_DMY.finditer(text)]
    out += [d for d in dates if d is not None]
    return sorted(out, key=lambda v: v.start)


_USD_PCT = frozenset(["usd", "pct"])
#: The kinds of value an attribute's word asks for (stems as ``stem_terms`` keeps them).
_KINDS_BY_WORD: dict[str, frozenset[str]] = {
    **dict.fromkeys(["fee", "charge", "surcharge", "cost", "cashback", "cash", "back"], _USD_PCT),
    **dict.fromkeys(
        ["price", "balance", "deposit", "payment", "penalty", "rebate", "overdraft", "salary"], frozenset(["usd"])
    ),
    **dict.fromkeys(["rate", "apr", "apy", "interest", "percentage", "percent", "yield"], frozenset(["pct"])),
    **dict.fromkeys(["url", "uri", "link", "website", "homepage"], frozenset(["url"])),
    **dict.fromkeys(["data", "storage"], frozenset(["size"])),
    **dict.fromkeys(
        ["window", "period", "duration", "day", "hour", "week", "wait", "long", "term", "grace"], frozenset(["dur"])
    ),
    **dict.fromkeys(["date", "expiry", "expiration", "due"], frozenset(["date"])),
    "deadline": frozenset(["date", "dur"]),
}


def value_kinds(attribute: str | None) -> frozenset[str] | None:
    """The kinds of value (``Value.kind``) that answer ``attribute``: the union over its words
    (``annual fee`` → usd, pct; ``interest rate`` → pct; ``dispute window`` → dur; ``MMSC URL``
    → url; ``data`` → size; ``due date`` → date). None when no word names a kind: then any value
    answers it, the text after a label (``MMS proxy: proxy.example``) included."""
    kinds: set[str] = set()
    for word in stem_terms(attribute):
        kinds |= _KINDS_BY_WORD.get(word, frozenset())
    return frozenset(kinds) or None


_ZERO_BEFORE = re.compile(r"\b(?:no|zero)[ \t]+$", re.IGNORECASE)
_ZERO_AFTER = re.compile(
    r"[ \t]*(?::|\bis\b|\bare\b)?[ \t]*\**[ \t]*(none|free|no charge|nil|zero|n/a)\b", re.IGNORECASE
)


def zero_value(text: str, start: int, end: int, kinds: frozenset[str] | None) -> Value | None:
    """A zero stated in words for the attribute written at ``text[start:end]``, when the kinds
    asked for have a zero (money, a percentage, data): ``no``/``zero`` right before it (``no annual
    fee``: the value text is ``no annual fee``), or ``none``, ``free``, ``no charge``, ``nil``,
    ``zero``, ``n/a`` right after it (``Annual fee: none``, ``the annual fee is free``)."""
    zero = next(
        ((k, n) for k, n in (("usd", "usd:0.00"), ("pct", "pct:0"), ("size", "size:0gb")) if kinds and k in kinds),
        None,
    )
    if zero is None:
        return None
    before = _ZERO_BEFORE.search(text, 0, start)
    if before and before.end() == start:
        return Value(zero[0], text[before.start() : end], zero[1], before.start())
    after = _ZERO_AFTER.match(text, end)
    if after:
        return Value(zero[0], after.group(1), zero[1], after.start(1))
    return None


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

    return MarkdownIt("commonmark").enable("table")


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
def table_rows(body: str) -> tuple[TableRow, ...]:
    """Every body row of every Markdown table in ``body`` (tables as markdown-it's GFM table rule
    reads them: a header row, a delimiter row, body rows), in order. Offsets are into ``body``."""
    if "|" not in body:
        return ()
    starts = [0] + [m.end() for m in re.finditer("\n", body)]
    rows: list[TableRow] = []
    header: tuple[str, ...] = ()
    in_head = False
    line: int | None = None
    cells: list[str] = []
    for tok in _markdown().parse(body):
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
            elif line is not None and line < len(starts):
                a = starts[line]
                b = body.find("\n", a)
                b = len(body) if b < 0 else b
                text = body[a:b].rstrip("\r")
                lead = len(text) - len(text.lstrip())
                text = text.strip()
                rows.append(TableRow(a + lead, a + lead + len(text), text, _cells(text, a + lead), header))
            line = None
    return tuple(rows)


def section_path(sections: Sequence[Section], pos: int) -> list[Section]:
    """Every section whose span holds offset ``pos``, the innermost first."""
    return sorted((s for s in sections if s.start <= pos < s.end), key=lambda s: (-s.start, -s.level))


def named_subjects(text: str, head: str) -> list[str]:
    """Capitalised names in ``text`` that end in the noun ``head``, in either case (``Silver
    Rewards Card`` for head ``Card`` or ``card``), leading function words removed; one-word bare
    heads are left out."""
    head_pat = "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in head)
    pat = re.compile(r"((?:[A-Z][\w'’+&" + _DASHES + r"]*[ \t\u00a0]+){1,5})(" + head_pat + r")s?\b")
    names = []
    for m in pat.finditer(text):
        words = m.group(1).split()
        while words and norm_name(words[0]) in FUNCTION_WORDS:
            words.pop(0)
        if words:
            names.append(" ".join(words + [m.group(2)]))
    return names
