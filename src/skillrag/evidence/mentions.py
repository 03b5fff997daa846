"""Names in text, with offsets: phrase matching, look-alike names, organisations, sections.

All offsets are character offsets into the string passed in. Matching is case-insensitive and
treats any hyphen or dash (``-``, U+2010–U+2015) and whitespace run as the same separator, so
``Rho-Bank`` matches ``Rho‑Bank`` (non-breaking hyphen) — that is typography, not a relaxed name.

A *topic* name (``APN settings``, ``data refuel``; ``question.is_topic``) is matched by its words'
Snowball stems (PyStemmer), in any order, within a few words on one line: ``refuel data`` and
``Data refueling`` both name the topic ``data refuel``.

Sentence units, values, tables and the analyzer are the text layer's (``skillrag.text``);
``stem_terms`` is its analyzer as the ask flow compares words: ASCII letters and digits, the long
English stop list, Snowball stems.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skillrag.corpus.model import Section
from skillrag.evidence.question import ENTITY_SUFFIXES, is_topic
from skillrag.text import Analyzer, stem

__all__ = [
    "FUNCTION_WORDS",
    "Mention",
    "find_mentions",
    "innermost_section",
    "named_subjects",
    "norm_name",
    "organisations",
    "other_entities",
    "proper_form",
    "same_org",
    "section_path",
    "slug",
    "stem_terms",
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
    want = {stem(w) for w in re.findall(r"[A-Za-z0-9]+", re.sub(r"\([^()]*\)", "", name))}
    want -= _TOPIC_STOP
    if not want:
        return []
    out: list[Mention] = []
    for line in re.finditer(r"[^\n]+", text):
        toks = [(m.start() + line.start(), m.end() + line.start(), stem(m.group()))
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


def innermost_section(sections: Sequence[Section], pos: int) -> Section | None:
    """The deepest section whose span holds offset ``pos`` (None when no heading covers it)."""
    best: Section | None = None
    for sec in sections:
        if sec.start <= pos < sec.end and (best is None or sec.start >= best.start):
            best = sec
    return best


#: The analyzer the ask flow compares words with (module doc).
_TERMS = Analyzer("en_plus", "english", tokens="alnum", min_chars=1)


def stem_terms(text: str | None) -> set[str]:
    """Content words of ``text``: lower-cased ASCII words and numbers, the long English stop list
    (``skillrag.text.STOPWORDS_EN_PLUS``) left out, Snowball stems."""
    return set(_TERMS.terms(text)) if text else set()


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
