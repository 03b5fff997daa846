"""Identifiers: the one validator of every id that comes into skillrag, whatever its kind.

Every kind is a rule (``IdRule``) in ``ID_RULES``; ``check_id(value, kind)`` returns ``value`` when the
whole of it obeys the rule and raises ``InvalidIdError`` otherwise (one line, the value cut to
``SHOWN_CHARS``). Patterns are anchored with ``\\A``/``\\Z`` (never ``$``, which also matches before a
final newline), so ``"ok\\n"`` is no id of any kind.

=========  =======================================================================================
kind       rule
=========  =======================================================================================
article    letters, digits and ``_ . - + ( ) : #``, at most 200, no ``..`` (``#`` joins a split
           document's id and a section slug; a reference note is ``SKILL:<id>``)
section    the same as ``article`` (a section-article is an article)
source     an id a source file sets: ``article`` without ``#`` (kept for section ids)
case       letters, digits and ``_ - + ( ) :``, at most 200, and not a name the workspace uses under
           ``runs/`` (``RUNS_SUBFOLDERS``): a case id names the folder ``runs/<id>/`` and the review
           link ``/review/<id>``, so it has no ``.`` (every file the workspace writes has a
           suffix: no case id can name ``tool_calls.jsonl``, ``<id>.record.json`` …) and no ``#``
page       lower-case letters, digits and single dashes, at most 120 (also the file name ``<id>.md``)
skill      lower-case letters, digits and single hyphens, at most 64 (the Agent Skills ``name``)
thread     letters, digits and ``_ . -``, at most 128 (a chat thread; never ``::``)
=========  =======================================================================================

This module sits at the bottom of the package graph (it imports only ``skillrag.errors``), so every
package checks ids through it: ``corpus.check_id`` is this function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillrag.errors import InvalidIdError

__all__ = ["ID_RULES", "RUNS_SUBFOLDERS", "SHOWN_CHARS", "IdRule", "check_id", "id_rule", "is_id", "make_id"]

#: Folders under ``runs/`` that the workspace's own commands write (``ask`` answers, ``eval run``
#: outputs): a case folder may never be one of them.
RUNS_SUBFOLDERS = ("ask", "eval")
#: Most characters of a refused value an error message quotes (a 100 KB "id" makes a one-line error).
SHOWN_CHARS = 80


@dataclass(frozen=True)
class IdRule:
    """One kind of id: ``first`` and ``chars``, the character classes (regular-expression class
    bodies) of its first and its other characters, or a whole ``body`` pattern instead; ``max_len``
    characters at most; ``describe``, the text an error gives; whether ``..`` is refused; and the
    ``reserved`` names (compared case-insensitively, for case-insensitive file systems)."""

    kind: str
    describe: str
    max_len: int
    chars: str = ""
    first: str = "A-Za-z0-9"
    body: str = ""
    no_double_dot: bool = False
    reserved: frozenset[str] = field(default_factory=frozenset)

    @property
    def pattern(self) -> str:
        """The anchored pattern (``\\A…\\Z``, length included), e.g. for a JSON schema or an HTTP path."""
        body = self.body or f"[{self.first}][{self.chars}]{{0,{self.max_len - 1}}}"
        return rf"\A(?=.{{1,{self.max_len}}}\Z){body}\Z" if self.body else rf"\A{body}\Z"

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)

    @property
    def schema_pattern(self) -> str:
        """``^…$`` without look-arounds, for a JSON schema or pydantic's ``Field(pattern=)`` (engines whose
        ``$`` is the end of the text); only for kinds given by ``chars``. ``..`` and reserved names are
        refused by ``check_id`` alone."""
        if self.body:
            raise KeyError(f"id kind {self.kind!r} has no look-around-free pattern")
        return f"^[{self.first}][{self.chars}]{{0,{self.max_len - 1}}}$"

    def accepts(self, value: object) -> bool:
        """True when ``value`` is a string that is wholly an id of this kind."""
        if not isinstance(value, str) or not self.regex.fullmatch(value):
            return False
        if self.no_double_dot and ".." in value:
            return False
        return value.casefold() not in self.reserved


_COMPILED: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    got = _COMPILED.get(pattern)
    if got is None:
        got = _COMPILED[pattern] = re.compile(pattern, re.DOTALL)
    return got


_ARTICLE_CHARS = r"A-Za-z0-9_.()+\-:#"

#: Every kind of id, by name (module doc).
ID_RULES: dict[str, IdRule] = {
    "article": IdRule("article", "letters, digits, _ . - + ( ) : # only", 200, _ARTICLE_CHARS, no_double_dot=True),
    "section": IdRule("section", "letters, digits, _ . - + ( ) : # only", 200, _ARTICLE_CHARS, no_double_dot=True),
    "source": IdRule("source", "letters, digits and _ . - + ( ) : only, starting with a letter or digit, at most "
                     "200 characters", 200, r"A-Za-z0-9_.()+\-:", no_double_dot=True),
    "case": IdRule("case", "letters, digits and _ - + ( ) : only, at most 200 characters; no '.' or '#', and not "
                   + " or ".join(RUNS_SUBFOLDERS) + ": a case id names its folder under runs/",
                   200, r"A-Za-z0-9_()+\-:", reserved=frozenset(RUNS_SUBFOLDERS)),
    "page": IdRule("page", "lower-case letters, digits, single dashes", 120,
                   body=r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9]))*"),
    "skill": IdRule("skill", "lowercase letters, digits and single hyphens", 64, body=r"[a-z0-9]+(?:-[a-z0-9]+)*"),
    "thread": IdRule("thread", "1-128 of letters, digits, _ . -", 128, r"A-Za-z0-9_.\-"),
}


def id_rule(kind: str) -> IdRule:
    """The rule of ``kind`` (a key of ``ID_RULES``); ``KeyError`` names the kinds for an unknown one."""
    try:
        return ID_RULES[kind]
    except KeyError:
        raise KeyError(f"unknown id kind {kind!r} (known: {', '.join(ID_RULES)})") from None


def is_id(value: object, kind: str = "article") -> bool:
    """True when the whole of ``value`` is an id of ``kind``."""
    return id_rule(kind).accepts(value)


def shown(value: object) -> str:
    """``repr(value)``, cut to ``SHOWN_CHARS`` characters with the length noted, for an error line."""
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    size = f" ({len(value):,} chars)" if isinstance(value, str) else ""
    return f"{text[:SHOWN_CHARS]}…{size}"


def check_id(value: str, kind: str = "article") -> str:
    """Return ``value`` if the whole of it is an id of ``kind`` (``ID_RULES``), else raise
    ``InvalidIdError``: ``'a/b' is not a valid case id (letters, digits …)``."""
    rule = id_rule(kind)
    if not rule.accepts(value):
        raise InvalidIdError(f"{shown(value)} is not a valid {kind} id ({rule.describe})")
    return value


def make_id(raw: str, kind: str, *, max_chars: int = 128) -> str:
    """An id of ``kind`` made from free text (an imported record's own id): ``raw`` itself when it is
    one, else each run of characters the kind does not allow replaced by ``-`` (``..`` collapsed), cut
    to ``max_chars``; ``""`` when nothing valid is left. Only for kinds given by ``chars``."""
    rule = id_rule(kind)
    if rule.accepts(raw):
        return raw
    if not rule.chars:
        raise KeyError(f"make_id: kind {kind!r} has no character class")
    slug = re.sub(f"[^{rule.chars}]+", "-", str(raw)).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)[:max_chars].rstrip("-.")
    return slug if rule.accepts(slug) else ""
