"""The deterministic question parser of ``skillrag ask``: a small pyparsing grammar over the question
shapes the extractive fallback answers, then a noun-phrase analysis that finds the subject, its
parent entity and the asked attribute.

Shapes (keywords are case-insensitive; ``NP`` is a subject noun phrase, see below):

============================  ==================================================================
shape                         examples
============================  ==================================================================
``attribute-of``              What is the annual fee **of** Rho-Bank's Gold Rewards card?
                              How much is the late fee **on** the Gold Card from Acme Bank?
                              What is the MMSC URL **of** the APN settings?
``possessive``                What is the Gold Card's annual fee?  What is Brightwater Bank's
                              Gold Rewards Card annual fee? (owner, product, attribute)
``how-much``                  How much data can a customer refuel?  How many points does the
                              Gold Rewards Card earn?
``offer``                     Does Rho-Bank offer a Titanium Rewards Card?
``role``                      Who is the founder of Acme Bank?
``verb``                      What cash back does Acme Bank's Gold Card earn?
============================  ==================================================================

A noun phrase ``NP`` is read as: an optional determiner; an optional owner ending in a possessive
(``Brightwater Bank's``, ``Brightwater's``: the parent entity); the name, kept as written (a
lower-case head noun such as ``card`` belongs to it) with a parenthetical qualifier; and an
optional issuer after ``from``/``by``/``at``/``of``/``issued by``/``offered by`` (the parent entity
when it is capitalised). A name that starts with an organisation (``Acme Bank Gold Card``) is split
after its suffix word (Bank, Inc, …). In ``Owner's NAME ATTRIBUTE`` (one possessive, then more
words) the words after the possessive are split into the product's name (its capitalised run, or up
to a product head noun such as ``card`` or ``account``: ``PRODUCT_HEADS``) and the attribute; the
owner is the parent entity. A name with no capitalised word apart from acronyms and more
than one word (``APN settings``, ``data refuel``) is a *topic* — a policy, procedure or setting —
matched by word stems rather than as a proper name (``text.find_mentions``).

``parse_question`` returns ``None`` for any other shape; the caller then falls back to the older
pattern heuristics. The parse is pure: same question, same result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import pyparsing as pp

__all__ = ["AGENTS", "ENTITY_SUFFIXES", "PRODUCT_HEADS", "ROLES", "ParsedQuestion", "is_topic", "parse_question"]

#: Words that end an organisation's name (``Acme Bank``, ``Zip Inc``).
ENTITY_SUFFIXES = frozenset(
    ["bank", "inc", "corp", "corporation", "ltd", "llc", "plc", "group", "company", "co", "gmbh", "ag", "sa"]
)
#: Head nouns that end a product's name (``Gold Rewards card``, ``Everyday Saver account``).
PRODUCT_HEADS = frozenset(
    ["card", "account", "loan", "mortgage", "plan", "program", "programme", "subscription", "agreement",
     "contract", "policy", "package", "bundle", "certificate", "deposit", "line", "membership", "pass"]
)
#: Roles asked about (``Who is the founder of Acme Bank?``): the subject is then a person.
ROLES = frozenset(
    [
        "founder", "co-founder", "cofounder", "ceo", "cfo", "cto", "coo", "owner", "director", "chairman",
        "chair", "president", "shareholder", "contractor", "auditor", "partner", "trustee",
    ]
)
#: Who acts in a how-much question (``a customer``): never the subject.
AGENTS = frozenset(
    ["customer", "customers", "user", "users", "client", "clients", "member", "members", "cardholder",
     "cardholders", "subscriber", "subscribers", "agent", "agents", "i", "we", "you", "they", "someone",
     "one", "account holder", "holder", "holders"]
)


@dataclass(frozen=True)
class ParsedQuestion:
    """What the grammar read: ``form`` (the shape's name in the module table), the subject's
    ``name`` as written, its ``parent`` entity, the ``attribute`` asked (None for existence and role
    questions), the ``role`` word, and whether the name is a ``topic`` (module doc)."""

    form: str
    name: str
    parent: str | None = None
    attribute: str | None = None
    role: str | None = None
    topic: bool = False


def _kw(words: str) -> pp.ParserElement:
    return pp.one_of(words, caseless=True, as_keyword=True)


_WORD = pp.Regex(r"[A-Za-z0-9][A-Za-z0-9+&\-\u2010\u2011]*\.?")
_POSS = pp.Regex(r"['’]s\b|(?<=s)['’](?=\s)")
_PAREN = pp.Regex(r"\([^()]{1,30}\)")
_QMARK = pp.Regex(r"[?.!]+")
_WH = _kw("what which")
_BE = _kw("is are was were")
_DET = _kw("the a an any my our your their its this that these those")
_LINK = _kw("of for on")
_ISSUER = pp.Group(_kw("issued offered provided sold run") + pp.CaselessKeyword("by")) | _kw("from by at with of")
_AUX = _kw("can could does do did is are will would should may might must")
_HOW = pp.CaselessKeyword("how") + _kw("much many long often")

# a noun phrase: [det] [owner 's] name-words [(qualifier)] [issuer-prep [det] org-words]
_name_word = ~_ISSUER + ~_AUX + _WORD
_owner = pp.Group(pp.OneOrMore(_WORD) + _POSS)
_NP = (
    pp.Opt(_DET)
    + pp.Opt(_owner)("owner")
    + pp.Group(pp.OneOrMore(_name_word) + pp.Opt(_PAREN))("name")
    + pp.Opt(pp.Suppress(_ISSUER) + pp.Opt(_DET) + pp.Group(pp.OneOrMore(_WORD))("issuer"))
)
_END = pp.Opt(_QMARK) + pp.StringEnd()

_ATTR_OF = (
    (_WH | _HOW) + _BE + pp.Opt(_DET) + pp.Group(pp.OneOrMore(~_LINK + _WORD))("attr") + _LINK + _NP + _END
)
# "What is the Gold Card's annual fee?" / "What is Acme Bank's Gold Card's late fee?"
_poss_tail = pp.Group(pp.OneOrMore(_WORD) + pp.Opt(_PAREN))("name") + _POSS + pp.Group(pp.OneOrMore(_WORD))("attr")
_POSSESSIVE = _WH + _BE + pp.Opt(_DET) + ((_owner("owner") + _poss_tail) | _poss_tail) + _END
_HOW_MUCH = (
    _HOW + pp.Group(pp.ZeroOrMore(~_AUX + _WORD))("measure") + _AUX
    + pp.Group(pp.OneOrMore(_WORD | _POSS.copy().set_parse_action(lambda: "'s") | _PAREN))("rest") + _END
)
_OFFER = (
    _kw("does do did can will is")
    + pp.Group(pp.OneOrMore(~_kw("offer offers have has provide provides issue issues sell sells") + _WORD))("org")
    + _kw("offer offers have has provide provides issue issues sell sells")
    + pp.Opt(_DET) + pp.Group(pp.OneOrMore(_WORD) + pp.Opt(_PAREN))("name") + _END
)
_ROLE = pp.CaselessKeyword("who") + _BE + pp.Opt(_DET) + pp.Group(pp.OneOrMore(~_LINK + _WORD))("role") + _LINK + _NP + _END
_VERB = (
    _WH + pp.Group(pp.OneOrMore(~_AUX + _WORD))("attr") + _AUX
    + pp.Group(pp.OneOrMore(_WORD | _POSS.copy().set_parse_action(lambda: "'s") | _PAREN))("rest") + _END
)

_YEAR = re.compile(r"\s+(?:in|for|during)\s+(?:the\s+year\s+)?(19\d\d|20\d\d)\b", re.IGNORECASE)
_PLACE = re.compile(r"\s+in\s+(?:the\s+)?([A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)*)(?=\s*(?:[?.!]|\s+in\s|$))")


def _join(tokens: Iterable[object]) -> str:
    return " ".join(str(t) for t in tokens)


def _is_cap(word: str) -> bool:
    return word[:1].isupper()


def _is_acronym(word: str) -> bool:
    w = word.rstrip(".")
    return len(w) >= 2 and (w.isupper() or (w[:-1].isupper() and w[-1] == "s"))


def is_topic(name: str) -> bool:
    """True for a name of two or more words none of which is a capitalised proper-name word
    (acronyms such as ``APN`` aside): ``APN settings``, ``data refuel``."""
    words = re.sub(r"\([^()]*\)", "", name).split()
    return len(words) >= 2 and not any(_is_cap(w) and not _is_acronym(w) for w in words)


def _split_org(words: list[str]) -> tuple[str | None, list[str]]:
    """``Acme Bank Gold Card`` → (``Acme Bank``, ``Gold Card``): a capitalised organisation suffix
    inside the name (not its last word) ends the parent entity."""
    for i, w in enumerate(words[:-1]):
        if _is_cap(w) and w.lower().rstrip(".") in ENTITY_SUFFIXES and i > 0 and _is_cap(words[0]):
            return " ".join(words[: i + 1]), words[i + 1 :]
    return None, words


def _looks_like_org(words: list[str]) -> bool:
    return bool(words) and _is_cap(words[0])


def _np(res: pp.ParseResults) -> tuple[str, str | None] | None:
    """(name, parent) of a parsed noun phrase."""
    name_words = [str(t) for t in res["name"]]
    parent = None
    if "owner" in res and len(res["owner"]):
        owner = res["owner"]
        tokens = owner[0] if isinstance(owner[0], pp.ParseResults) else owner
        parent = _join([t for t in tokens if not re.fullmatch(r"['’]s?|['’]", str(t))])
    if "issuer" in res and len(res["issuer"]):
        issuer = [str(t) for t in res["issuer"]]
        if _looks_like_org(issuer) and parent is None:
            parent = " ".join(issuer)
        elif not _looks_like_org(issuer):
            name_words = name_words + ["of"] + issuer  # "the rules of procedure": one lower-case name
    if parent is None:
        parent, name_words = _split_org(name_words)
    if not name_words:
        return None
    return " ".join(name_words), parent


def _rest_np(tokens: list[str]) -> tuple[str, str | None, list[str]] | None:
    """Split the words after an auxiliary (``Acme Bank 's Gold Card earn``) into (name, parent,
    verb words): the owner before ``'s``, then the name up to its capitalised run (or up to a known
    head noun), the rest is the verb phrase."""
    parent = None
    if "'s" in tokens:
        i = tokens.index("'s")
        parent, tokens = " ".join(t for t in tokens[:i] if t.lower() not in _DETS), tokens[i + 1 :]
    words = [t for t in tokens if t.lower() not in _DETS]
    if not words:
        return None
    cut = 0
    while cut < len(words) and (_is_cap(words[cut]) or words[cut].startswith("(")):
        cut += 1
    if cut == 0:
        return None
    if parent is None:
        parent, name = _split_org(words[:cut])
    else:
        name = words[:cut]
    return " ".join(name), parent, words[cut:]


_DETS = {"the", "a", "an", "any", "my", "our", "your", "their", "its", "this", "that", "these", "those"}


def _strip_scope(q: str) -> str:
    q = _YEAR.sub("", q)
    return _PLACE.sub("", q)


def _depluralise(name: str) -> str:
    if name == name.lower() and " " not in name and len(name) > 3 and name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def _role_of(name: str) -> str | None:
    key = name.lower()
    return key if key in ROLES else None


def parse_question(question: str) -> ParsedQuestion | None:
    """Parse ``question`` into subject, parent entity and attribute (module doc), or ``None`` when
    it is not one of the shapes the grammar knows."""
    q = _strip_scope(" ".join(question.strip().split()))
    for form, grammar in (
        ("attribute-of", _ATTR_OF),
        ("possessive", _POSSESSIVE),
        ("offer", _OFFER),
        ("role", _ROLE),
        ("how-much", _HOW_MUCH),
        ("verb", _VERB),
    ):
        try:
            res = grammar.parse_string(q, parse_all=True)
        except pp.ParseException:
            continue
        parsed = _build(form, res)
        if parsed is not None:
            return parsed
    return None


def _split_name_attr(words: list[str]) -> tuple[str, str] | None:
    """``Gold Rewards Card annual fee`` → (``Gold Rewards Card``, ``annual fee``): the leading run
    of capitalised words (acronyms aside), else the words up to the last product head noun that is
    not the last word; None when neither splits the words in two."""
    i = 0
    while i < len(words) and ((_is_cap(words[i]) and not _is_acronym(words[i])) or words[i].startswith("(")):
        i += 1
    if 0 < i < len(words):
        return " ".join(words[:i]), " ".join(words[i:])
    for j in range(len(words) - 2, -1, -1):
        if _depluralise(words[j].lower()) in PRODUCT_HEADS:
            k = j + 1 + (words[j + 1].startswith("(") if j + 1 < len(words) else 0)
            if k < len(words):
                return " ".join(words[:k]), " ".join(words[k:])
    return None


def _build(form: str, res: pp.ParseResults) -> ParsedQuestion | None:
    if form in ("attribute-of", "possessive"):
        got = _np(res)
        if got is None:
            return None
        name, parent = got
        attr: str | None = _join(res["attr"])
        if form == "possessive" and parent is None:
            # "Brightwater Bank's Gold Rewards Card annual fee": the possessor owns the product
            split = _split_name_attr([str(t) for t in res["attr"]])
            if split and _depluralise(name.split()[-1].lower()) not in PRODUCT_HEADS:
                parent, (name, attr) = name, split
        role = _role_of(name)
        return ParsedQuestion(form, name, parent, attr, role, topic=role is None and is_topic(name))
    if form == "role":
        got = _np(res)
        role = _role_of(_join(res["role"]))
        if got is None or role is None:
            return None
        org, parent = got
        return ParsedQuestion(form, role, parent or org, None, role)
    if form == "offer":
        org = _join(res["org"])
        name = _depluralise(_join(res["name"]))
        return ParsedQuestion(form, name, org, None, None, topic=is_topic(name))
    tokens = [str(t) for t in res["rest"]]
    if form == "how-much":
        measure = [str(t) for t in res["measure"]]
        words = [t for t in tokens if t.lower() not in _DETS]
        if words and words[0].lower() in AGENTS:
            # "How much data can a customer refuel?": the subject is the action on the measured thing
            verb = words[1:]
            if not verb:
                return None
            name = " ".join(measure + verb) if measure else " ".join(verb)
            attr = " ".join(measure) or None
            return ParsedQuestion(form, name, None, attr, None, topic=is_topic(name))
        rest = _rest_np(tokens)
        if rest is None:
            return None
        name, parent, verb = rest
        attr = " ".join(measure + verb) or None
        return ParsedQuestion(form, name, parent, attr, _role_of(name))
    # verb: "What cash back does Acme Bank's Gold Card earn?"
    rest = _rest_np(tokens)
    if rest is None:
        return None
    name, parent, verb = rest
    attr = " ".join([*(str(t) for t in res["attr"]), *verb]) or None
    return ParsedQuestion(form, name, parent, attr, _role_of(name))
