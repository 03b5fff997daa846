"""What a long request is about, read from its text alone: the sentences that state the problem and
the names it mentions.

A case or a query is often not a clean ticket: τ²-bench scenarios are instructions to a simulated
customer, a persona, and directions for the conversation ("If the agent asks…", "You are playing the
role of…", "Don't dump all your information at once"). ``about_conversation`` tells such a sentence;
``request_sentences`` keeps the others, in order. ``capitalised_names`` finds the capitalised phrases a
text mentions (candidate products, accounts, tools: "Platinum Rewards Card", "EcoCard", "Rho-Bank+").

One rule, used by the extractive harness's case reading (``skillrag.harness._focus``) and by the
retriever's query focusing (``search.query_focus``, ``skillrag.search.retriever``).
"""

from __future__ import annotations

import re

from skillrag.text._analyzer import STOP_WORDS
from skillrag.text._sentences import sentence_texts

__all__ = ["about_conversation", "capitalised_names", "flat_sentences", "request_sentences"]

#: Sentences about the conversation (role-play directions, what the agent might say), not the problem.
ABOUT_CONVERSATION = re.compile(
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
_NAME = re.compile(r"\b(?:[A-Z][\w'\-+]*[+]?)(?:[ \t]+(?:of[ \t]+|the[ \t]+|&[ \t]+)?[A-Z][\w'\-+]*[+]?)*")
_INNER_CAPS = re.compile(r"[a-z][A-Z]|[A-Za-z][-+][A-Za-z+]|[A-Za-z]\+$")


def flat_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (``sentence_texts``) on one line each: ``**`` dropped and white-space
    runs flattened first, so a Markdown scenario reads as prose."""
    return sentence_texts(" ".join(text.replace("**", "").split()))


def about_conversation(sentence: str) -> bool:
    """True when ``sentence`` is about the conversation itself (a role-play direction, what the agent
    may say or ask, how to answer), not about the problem."""
    return ABOUT_CONVERSATION.search(sentence) is not None


def request_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that are not about the conversation (``about_conversation``), in order,
    each on one line (``flat_sentences``). ``[]`` when every sentence is (or the text is blank)."""
    return [s for s in flat_sentences(text) if not about_conversation(s)]


def capitalised_names(text: str) -> list[str]:
    """Capitalised phrases of ``text`` in order of first mention, case-insensitively distinct: runs of
    capitalised words (two or more, or one with inner capitals / a hyphen / a plus: "EcoCard",
    "Rho-Bank+"), without leading or trailing stop words, possessive owners ("Sofia's Light Green
    Account" → "Light Green Account") or SHOUTED words; longer than three characters."""
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
