"""What a case is about, read deterministically: the customer's want, the names and tools it mentions,
the facts a specialist must check, and the content terms a quoted passage may match.

Case text is often not a clean ticket (τ²-bench cases are instructions to a simulated customer), so
sentences about the conversation itself ("If the agent asks…", "You are playing the role of…") are
kept out of the queries and the facts (the text layer's rule, ``skillrag.text.about_conversation``;
names are its ``capitalised_names``). Content words are the text layer's (``skillrag.text``: no
stop words of the ``content`` list, no words of fewer than three letters, no bare numbers, Snowball
stems) less words that the case only ever writes capitalised inside a sentence (names: the bank's,
the customer's); a product name counts only as the whole phrase, once the help center confirms it
(see ``skillrag.harness.extractive``). Sentences, tool names and values are the text layer's too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from skillrag.skill import Case
from skillrag.text import (
    ALL_KINDS,
    Analyzer,
    about_conversation,
    capitalised_names,
    find_values,
    flat_sentences,
    tool_names,
)

__all__ = ["CaseFocus", "case_focus", "content_analyzer", "content_terms"]
_NON_CUSTOMER = ("agent", "assistant", "system", "bot", "specialist", "representative")
_TOKEN = re.compile(r"(?u)\b\w[\w'\-+]*\b")
#: Besides a value (``skillrag.text.find_values``): a day of the year without one ("3/14", "March 5"), or
#: something the customer does not have ("I don't have a membership").
_FACT = re.compile(
    r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}\b|"
    r"\b(?:no|not|never|don't|doesn't|do not|does not)\b[^.]{0,40}\b(?:subscription|member|"
    r"membership|account|card|plan)\b",
    re.IGNORECASE,
)
#: Contact details: a case sentence holding one is identity data, not a fact about the request.
_CONTACT = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b")


@lru_cache(maxsize=8)
def content_analyzer(stemmer: str | None = "english") -> Analyzer:
    """The analyzer of content words: the ``content`` stop list, at least three letters, no bare numbers."""
    return Analyzer("content", stemmer, min_chars=3, numbers=False)


def content_terms(text: str, analyzer: Analyzer, *, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Content terms of ``text`` in order (with repeats), stemmed as ``analyzer`` stems: no stop words
    (``skillrag.text.STOP_WORDS``), no words of fewer than three letters, no bare numbers, nothing in
    ``exclude`` (lower-case words)."""
    return content_analyzer(analyzer.stemmer_name).terms(text, exclude=exclude)


@dataclass(frozen=True)
class CaseFocus:
    """A case, read for a briefing.

    ``want``: what the customer wants (contact reason, reason path, first customer message when it adds
    something). ``detail``: the case's other informative sentences (notes, customer messages; nothing
    about the conversation itself), at most about ``DETAIL_CHARS`` characters. ``names``: capitalised
    phrases the case mentions (candidate products, accounts, tools), in order of first mention.
    ``tools``: tool names it mentions. ``facts``: whole case sentences that state amounts, dates, counts,
    or that something is absent (a specialist checks them against the records). ``name_words``: words the
    case only writes capitalised inside a sentence. ``want_terms`` / ``terms``: content terms (stems) of
    the want / of the whole case focus.
    """

    want: str
    detail: str
    names: tuple[str, ...]
    tools: tuple[str, ...]
    facts: tuple[str, ...]
    name_words: frozenset[str]
    want_terms: frozenset[str]
    terms: frozenset[str]
    common_words: frozenset[str] = frozenset()  # stems of the words the case writes in lower case

    def product_names(self) -> list[str]:
        """The names that look like products, accounts or tools: three words or more, or a last word
        that is a common noun the case also writes in lower case ("Green Account" when the case says
        "account"; not "Mei-Lin Chen" or "Sunset Boulevard"), or a single word with inner capitals or a
        hyphen ("EcoCard")."""
        out = []
        stemmer = Analyzer(None, "english")
        for n in self.names:
            last = stemmer.terms(n.split()[-1].lower().strip("+"))
            if len(n.split()) == 1 or len(n.split()) >= 3 or (last and last[-1] in self.common_words):
                out.append(n)
        # a fragment of a longer name that starts the same way adds nothing ("Light Blue", "Light Blue Account")
        return [n for n in out if not any(o != n and o.lower().startswith(n.lower() + " ") for o in out)]


DETAIL_CHARS = 1200
WANT_WORDS = 70


def _customer_texts(case: Case) -> list[str]:
    return [m.content for m in case.case_messages if m.role.lower() not in _NON_CUSTOMER and m.content.strip()]


def _name_words(sentences: list[str]) -> frozenset[str]:
    """Lower-cased words written capitalised inside a sentence and never in lower case in the case."""
    capital: set[str] = set()
    lower: set[str] = set()
    for sent in sentences:
        for i, tok in enumerate(_TOKEN.findall(sent)):
            for part in re.split(r"[-+']", tok):
                if not part:
                    continue
                if part[0].isupper():
                    if i > 0:
                        capital.add(part.lower())
                elif part[0].islower():
                    lower.add(part.lower())
    return frozenset(capital - lower)


def case_focus(case: Case, analyzer: Analyzer | None = None) -> CaseFocus:
    """Read ``case`` for a briefing (see ``CaseFocus``). Deterministic; never reads ground truth."""
    analyzer = analyzer or Analyzer(None, "english")
    customer = _customer_texts(case)
    path = " ".join(case.contact_reason_path)
    reason = " ".join(s for s in flat_sentences(case.contact_reason) if not about_conversation(s)) \
        or case.contact_reason.strip()
    want_parts = [reason, path.strip()]
    if customer:
        first = " ".join(s for s in flat_sentences(customer[0]) if not about_conversation(s))
        flat_first, flat_reason = " ".join(first.split()).lower(), " ".join(reason.split()).lower()
        if flat_reason and flat_reason in flat_first:  # the message holds the reason: keep the message
            want_parts[0] = first
        elif flat_first and flat_first not in flat_reason:
            new = set(content_terms(first, analyzer)) - set(content_terms(reason, analyzer))
            if len(new) >= 2 or not reason:
                want_parts.append(first)
    want_words = " ".join(p for p in want_parts if p).split()
    want = " ".join(want_words[:WANT_WORDS])

    sources = [*case.case_notes, *customer]
    all_sentences = [s for src in [case.contact_reason, *sources] for s in flat_sentences(src)]
    # a note that only introduces what follows ("About the customer:") or scripts a reply is not a fact
    informative = [s for s in dict.fromkeys(s for src in sources for s in flat_sentences(src))
                   if not about_conversation(s) and not s.rstrip().endswith(":")]
    detail_parts: list[str] = []
    size = 0
    for s in informative:
        if size + len(s) > DETAIL_CHARS:
            break
        detail_parts.append(s)
        size += len(s) + 1
    detail = " ".join(detail_parts)

    text = "\n".join([case.contact_reason, path, *sources])
    named_in = [case.contact_reason, *(x for x in informative if not _CONTACT.search(x)), *customer]
    names = tuple(capitalised_names("\n".join(named_in)))
    tools = tool_names(text)
    facts = tuple(dict.fromkeys(s for s in informative if (find_values(s, ALL_KINDS) or _FACT.search(s))
                                and len(s) <= 240 and not _CONTACT.search(s)))
    name_words = _name_words(all_sentences)
    want_t = frozenset(content_terms(want, analyzer, exclude=name_words))
    terms = want_t | frozenset(content_terms(detail, analyzer, exclude=name_words))
    plain = _CONTACT.sub(" ", text)  # an e-mail address is not prose ("casey.rivera@…")
    common = frozenset(analyzer.terms(" ".join(set(re.findall(r"(?u)\b[a-z][a-z]+\b", plain)))))
    return CaseFocus(want=want, detail=detail if detail != want else "", names=names, tools=tools, facts=facts,
                     name_words=name_words, want_terms=want_t, terms=terms, common_words=common)
