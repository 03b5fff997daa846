"""Values a text states, with exact offsets: money, percentages, durations, data amounts, counts of
things, URLs and dates; the kinds of value an attribute asks for; a zero stated in words; and the rule
a sentence states (a limit, an amount, a condition).

Nothing here knows about subjects, cases or evidence: callers decide what a value means to them.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from skillrag.text._analyzer import stem

__all__ = ["ALL_KINDS", "VALUE_KINDS", "RuleInfo", "Value", "find_values", "has_figure", "kind_of", "rule_of",
           "value_kinds", "zero_value"]

#: The kinds ``find_values`` returns unless asked for others: ``money`` (any currency: the normalised
#: form names it), ``pct``, ``dur`` (durations), ``size`` (data amounts), ``url`` and ``date``.
VALUE_KINDS = frozenset({"money", "pct", "dur", "size", "url", "date"})
#: … and ``count``: a number of things (``4 cards``, ``3 attempts``).
ALL_KINDS = VALUE_KINDS | {"count"}


@dataclass(frozen=True)
class Value:
    """A value found in text: ``kind`` (``VALUE_KINDS`` or ``count``); ``text`` as written;
    ``normalized`` compares (``usd:32.50``, ``eur:5.00``, ``pct:2.5``); ``start`` is its offset in
    the text searched."""

    kind: str
    text: str
    normalized: str
    start: int


_N = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SYMBOL = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy"}
_WORD_CURRENCY = {"usd": "usd", "dollar": "usd", "dollars": "usd", "eur": "eur", "euro": "eur", "euros": "eur",
                  "gbp": "gbp", "pound": "gbp", "pounds": "gbp"}
_MONEY = re.compile(
    rf"(?P<pre>[$€£¥])\s?(?P<n1>{_N})"
    rf"|\b(?P<n2>{_N})\s?(?P<post>USD|EUR|GBP|dollars?|euros?|pounds?)\b",
    re.IGNORECASE,
)
_PCT = re.compile(rf"({_N})\s?(?:%|percent\b)", re.IGNORECASE)
_DUR = re.compile(
    r"\b(\d+)[\s\-\u2011]+(business day|calendar day|day|hour|minute|week|month|year)s?\b", re.IGNORECASE
)
_COUNT = re.compile(r"\b(\d+)[\s\-\u2011]+(card|account|transaction|time|attempt|point|mile|payment|purchase|"
                    r"withdrawal|transfer|request|dispute)s?\b", re.IGNORECASE)
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
    month = mo if isinstance(mo, int) else _MONTHS.index(mo[:3].lower()) + 1
    try:
        day = _dt.date(y, month, d)
    except ValueError:
        return None
    return Value("date", m.group(0), f"date:{day.isoformat()}", m.start())


def _money(m: re.Match[str]) -> Value:
    if m.group("pre"):
        currency, n = _SYMBOL[m.group("pre")], m.group("n1")
    else:
        currency, n = _WORD_CURRENCY[m.group("post").lower()], m.group("n2")
    return Value("money", m.group(0), f"{currency}:{_num(n):.2f}", m.start())


def find_values(text: str, kinds: frozenset[str] = VALUE_KINDS) -> list[Value]:
    """The values of ``kinds`` in ``text``, in order of position. Money: ``$32.50`` → ``usd:32.50``,
    ``$5,000`` → ``usd:5000.00``, ``25 USD`` / ``25 dollars`` → ``usd:25.00`` (``€``/EUR/euros,
    ``£``/GBP/pounds, ``¥`` likewise); percentages: ``17.99%`` / ``2 percent`` → ``pct:17.99``;
    durations: ``105 days`` / ``5-day`` → ``dur:105 day``; data amounts: ``2 GB`` → ``size:2gb``,
    ``512 MB`` → ``size:0.5gb``; URLs: ``http://mms.example/x`` → ``url:http://mms.example/x``
    (trailing punctuation left out); dates: ``2025-03-01``, ``March 1, 2025``, ``1 March 2025`` →
    ``date:2025-03-01``; counts (only when asked): ``4 cards`` → ``count:4 card``."""
    out: list[Value] = []
    if "money" in kinds:
        out += [_money(m) for m in _MONEY.finditer(text)]
    if "size" in kinds:
        out += [
            Value("size", m.group(0), f"size:{_num(m.group(1)) * _SIZE_IN_GB[m.group(2).lower()]:g}gb", m.start())
            for m in _SIZE.finditer(text)
        ]
    if "url" in kinds:
        for m in _URL.finditer(text):
            url = m.group(0).rstrip(".,;:!?")
            out.append(Value("url", url, "url:" + url.lower().rstrip("/"), m.start()))
    if "pct" in kinds:
        out += [Value("pct", m.group(0), f"pct:{_num(m.group(1)):g}", m.start()) for m in _PCT.finditer(text)]
    if "dur" in kinds:
        out += [Value("dur", m.group(0), f"dur:{int(m.group(1))} {m.group(2).lower()}", m.start())
                for m in _DUR.finditer(text)]
    if "count" in kinds:
        out += [Value("count", m.group(0), f"count:{int(m.group(1))} {m.group(2).lower()}", m.start())
                for m in _COUNT.finditer(text)]
    if "date" in kinds:
        dates = [_date(m, int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in _DATE_ISO.finditer(text)]
        dates += [_date(m, int(m.group(3)), m.group(1), int(m.group(2))) for m in _DATE_MDY.finditer(text)]
        dates += [_date(m, int(m.group(3)), m.group(2), int(m.group(1))) for m in _DATE_DMY.finditer(text)]
        out += [d for d in dates if d is not None]
    return sorted(out, key=lambda v: v.start)


_CURRENCIES = frozenset(_SYMBOL.values())


def kind_of(normalized: str) -> str:
    """The kind (``Value.kind``) of a normalised value: ``usd:5.00`` → ``money``, ``pct:2`` → ``pct``."""
    prefix = normalized.split(":", 1)[0]
    return "money" if prefix in _CURRENCIES else prefix


_FIGURE = re.compile(r"[$€£¥%]|\d")


def has_figure(text: str) -> bool:
    """True when ``text`` holds a figure: a digit, a currency sign or a percent sign."""
    return _FIGURE.search(text) is not None


_MONEY_PCT = frozenset({"money", "pct"})
_MONEY_KINDS = frozenset({"money"})
#: The kinds of value an attribute's word asks for (by the word's stem).
_KINDS_BY_WORD: dict[str, frozenset[str]] = {
    **dict.fromkeys(["fee", "charge", "surcharge", "cost", "cashback", "cash", "back"], _MONEY_PCT),
    **dict.fromkeys(["price", "balance", "deposit", "payment", "penalty", "rebate", "overdraft", "salary"],
                    _MONEY_KINDS),
    **dict.fromkeys(["rate", "apr", "apy", "interest", "percentage", "percent", "yield"], frozenset(["pct"])),
    **dict.fromkeys(["url", "uri", "link", "website", "homepage"], frozenset(["url"])),
    **dict.fromkeys(["data", "storage"], frozenset(["size"])),
    **dict.fromkeys(
        ["window", "period", "duration", "day", "hour", "week", "wait", "long", "term", "grace"], frozenset(["dur"])
    ),
    **dict.fromkeys(["date", "expiry", "expiration", "due"], frozenset(["date"])),
    "deadline": frozenset(["date", "dur"]),
}
_KINDS_BY_STEM = {stem(w): k for w, k in _KINDS_BY_WORD.items()}
_WORDS = re.compile(r"[a-z0-9]+")


def value_kinds(attribute: str | None) -> frozenset[str] | None:
    """The kinds of value (``Value.kind``) that answer ``attribute``: the union over its words, by
    stem (``annual fee`` → money, pct; ``interest rate`` → pct; ``dispute window`` → dur; ``MMSC URL``
    → url; ``data`` → size; ``due date`` → date). None when no word names a kind: then any value
    answers it, the text after a label (``MMS proxy: proxy.example``) included."""
    kinds: set[str] = set()
    for word in _WORDS.findall((attribute or "").lower()):
        kinds |= _KINDS_BY_STEM.get(stem(word), frozenset())
    return frozenset(kinds) or None


_ZERO_BEFORE = re.compile(r"\b(?:no|zero)[ \t]+$", re.IGNORECASE)
_ZERO_AFTER = re.compile(
    r"[ \t]*(?::|\bis\b|\bare\b)?[ \t]*\**[ \t]*(none|free|no charge|nil|zero|n/a)\b", re.IGNORECASE
)


def zero_value(text: str, start: int, end: int, kinds: frozenset[str] | None) -> Value | None:
    """A zero stated in words for the attribute written at ``text[start:end]``, when the kinds
    asked for have a zero (money, ``usd:0.00`` whatever the currency; a percentage; data):
    ``no``/``zero`` right before it (``no annual
    fee``: the value text is ``no annual fee``), or ``none``, ``free``, ``no charge``, ``nil``,
    ``zero``, ``n/a`` right after it (``Annual fee: none``, ``the annual fee is free``)."""
    zero = next(
        ((k, n) for k, n in (("money", "usd:0.00"), ("pct", "pct:0"), ("size", "size:0gb")) if kinds and k in kinds),
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


# --- the rule a sentence states ---------------------------------------------------------------
_CONDITION = re.compile(
    r"\b(must(?: not)?|never|only|required|requires|cannot|can't|can not|do not|don't|does not|may not|"
    r"not eligible|ineligible|eligible|eligibility|unless|if|before|after|always|prohibited|mandatory|"
    r"not allowed|allowed|permitted|qualif(?:y|ies|ied))\b",
    re.IGNORECASE,
)
_LIMIT = re.compile(
    r"\b(?:at least|at most|no more than|no less than|more than|less than|up to|maximum|minimum|max|min|"
    r"within|over|under|exceed(?:s|ing)?|limit(?:ed|s)?|cap(?:ped)?|threshold|deadline|window)\b[^.;:]{0,40}?"
    r"(?:[$€£¥]\s?\d[\d,.]*|\d[\d,.]*\s?%|\d[\d,.]*\s*(?:business\s+|calendar\s+)?"
    r"(?:days?|hours?|minutes?|weeks?|months?|years?|transactions?|times?|attempts?|cards?)\b|\d[\d,.]*)",
    re.IGNORECASE,
)
_AMOUNT_KINDS = frozenset({"money", "pct", "dur"})
_MARKUP = re.compile(r"\*\*|__")


@dataclass(frozen=True)
class RuleInfo:
    """The rule a passage states: ``kind`` is ``limit`` (a bound with a number), ``amount`` (a fee,
    rate or period), ``condition`` (must / only / unless / eligible …); ``phrase`` is the words that
    state it, as they appear in the passage (whole words, at most about 60 characters)."""

    kind: str
    phrase: str


def _phrase(text: str, s: int, e: int, width: int = 60) -> str:
    if e - s < width:  # widen to whole words around the match, within the clause
        left = text.rfind(" ", max(0, s - (width - (e - s)) // 2), s)
        s = left + 1 if left >= 0 else s
        right = text.find(" ", e + (width - (e - s)) // 2)
        e = right if right > 0 else len(text)
    out = " ".join(_MARKUP.sub("", text[s:e]).split())
    return out.strip(" ,;:(").rstrip(".")


def rule_of(text: str) -> RuleInfo | None:
    """The first rule ``text`` states, or None: a limit (a bound word, ``at least`` … ``within`` …
    ``limit``, followed in the same clause by a number) before an amount (money, a percentage or a
    duration, as ``find_values`` reads them) before a condition (must / only / unless / eligible …)."""
    m = _LIMIT.search(text)
    if m:
        return RuleInfo("limit", _phrase(text, m.start(), m.end()))
    amount = next(iter(find_values(text, _AMOUNT_KINDS)), None)
    if amount is not None:
        return RuleInfo("amount", _phrase(text, amount.start, amount.start + len(amount.text)))
    m = _CONDITION.search(text)
    if m:
        return RuleInfo("condition", _phrase(text, m.start(), m.end()))
    return None
