"""What a case is about, read deterministically: the customer's want, the names and tools it mentions,
the facts a specialist must check, and the content terms a quoted passage may match.

Case text is often not a clean ticket (τ²-bench cases are instructions to a simulated customer), so
sentences about the conversation itself ("If the agent asks…", "You are playing the role of…") are
kept out of the queries and the facts. Content words are the text layer's (``skillrag.text``: no
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
from skillrag.text import ALL_KINDS, STOP_WORDS, Analyzer, find_values, sentence_texts, tool_names

__all__ = ["CaseFocus", "case_focus", "content_analyzer", "content_terms"]
_NON_CUSTOMER = ("agent", "assistant", "system", "bot", "specialist", "representative")
_TOKEN = re.compile(r"(?u)\b\w[\w'\-+]*\b")
#: Sentences about the conversation (role-play directions, what the agent might say), not the problem.
_ABOUT_CONVERSATION = re.compile(
    r"\b(?:playing the role|you are playing|your character|role[- ]?play|pretend|simulat\w*|"
    r"the (?:support |service |customer service |customer support )?(?:agent|representative|assistant)\b|"
    r"customer service representative|never respond|respond as|conversation|bring (?:this|it) up|unless asked|"
    r"don't dump|do not dump|end the (?:call|chat|conversation)|"
    r"if (?:you are|you're) (?:asked|offered|told|recommended)|when asked|if asked|"
    r"\b(?:if|when|unless|once|until|after)\b[^.]{0,30}\bagent\b|"
    r"\bagent (?:asks|offers|mentions|recommends|says|corrects|suggests|tries|tells|explains|confirms)|"
    r"\b(?:if|when|once) (?:offered|asked|told|recommended|pressed)\b|"
    r"^\W*(?:important\W+)?(?:if|when|once)\b[^:]{0,100}:\s*[\"\u201c])",
    re.IGNORECASE,
)
#: Besides a value (``skillrag.text.find_values``): a day of the year without one ("3/14", "March 5"), or
#: something the customer does not have ("I don't have a membership").
_FACT = re.compile(
    r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}\b|"
    r"\b(?:no|not|never|don't|doesn't|do not|does not)\b[^.]{0,40}\b(?:subscription|member|"
    r"membership|account|card|plan)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b(?:[A-Z][\w'\-+]*[+]?)(?:[ \t]+(?:of[ \t]+|the[ \t]+|&[ \t]+)?[A-Z][\w'\-+]*[+]?)*")
#: Contact details: a case sentence holding one is identity data, not a fact about the request.
_CONTACT = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b")
_INNER_CAPS = re.compile(r"[a-z][A-Z]|[A-Za-z][-+][A-Za-z+]|[A-Za-z]\+$")


def _sentences(text: str) -> list[str]:
    """The sentences of ``text`` on one line each (``**`` and white-space runs flattened first)."""
    return sentence_texts(" ".join(text.replace("**", "").split()))


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


def _names(text: str) -> list[str]:
    """Capitalised phrases: runs of capitalised words (two or more, or one with inner capitals / a
    hyphen / a plus: "EcoCard", "Rho-Bank+"), without leading or trailing stop words, possessive owners
    ("Sofia's Light Green Account" → "Light Green Account") or SHOUTED words."""
    out: list[str] = []
    for m in _NAME.finditer(text):
        phrase = m.group(0)
        if "'s " in phrase:
            phrase = phrase.split("'s ")[-1]
        words = [w.strip("'") for w in phrase.split()]
        words = [w for w in words if not (len(w) > 1 and w.isupper() and not w.endswith("+"))]
        while words and words[0].lower() in STOP_WORDS:
            words.pop(0)
        while words and (words[-1].lower() in STOP_WORDS or words[-1].lower() in ("of", "the", "&")):
            words.pop()
        if not words:
            continue
        if len(words) == 1 and not _INNER_CAPS.search(words[0]):
            continue
        name = " ".join(words)
        if len(name) > 3 and name.lower() not in (o.lower() for o in out):
            out.append(name)
    return out


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
    reason = " ".join(s for s in _sentences(case.contact_reason) if not _ABOUT_CONVERSATION.search(s)) \
        or case.contact_reason.strip()
    want_parts = [reason, path.strip()]
    if customer:
        first = " ".join(s for s in _sentences(customer[0]) if not _ABOUT_CONVERSATION.search(s))
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
    all_sentences = [s for src in [case.contact_reason, *sources] for s in _sentences(src)]
    # a note that only introduces what follows ("About the customer:") or scripts a reply is not a fact
    informative = [s for s in dict.fromkeys(s for src in sources for s in _sentences(src))
                   if not _ABOUT_CONVERSATION.search(s) and not s.rstrip().endswith(":")]
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
    names = tuple(_names("\n".join(named_in)))
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
