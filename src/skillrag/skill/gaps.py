"""Evidence gaps of an accepted output: warnings that ``save_output`` reports but never rejects on.

Five kinds, each a ``Gap(kind, message, subject)``:

* ``unquoted_identifier``: the guidance names something no snippet backs: a tool or system name
  (``skillrag.text.code_names``: an identifier with an underscore, e.g. ``freeze_card_4410``, or
  anything in backticks: wider than the tool rule, so a field name such as ``card_id`` counts too), an
  amount (money or a percentage as ``skillrag.text.find_values`` reads them: ``$10``, ``25 USD``,
  ``2.5%``: currency and number must match) or a product name (two or more
  capitalised words, at least two of them words rather than numbers, e.g. "Gold Rewards Card", that
  occur in one of the articles the output cites or the case read; the title of an article a snippet
  quotes covers it too). Everything is compared case-insensitively ("Tier 1 Plan" is covered by
  "TIER 1 PLAN"); quote marks around a name, a possessive ``'s`` and a leading article or determiner
  ("The Green Account" is the Green Account) are not part of it; an amount ends at its last digit
  ("$15," is $15; a comma inside one only separates thousands: "$1,500"); article ids are not
  identifiers. Structure labels (a word and a number: "Step 1", "Tier 2", "CODE 05") and emphasis
  ("Check ALL", "Do NOT": fewer than two words that are not stop words) are not names.

  **An amount is matched against the snippets of the step that states it**: the snippets linked to that
  step by the one step-to-snippet rule (``skill.links``: the snippet's ``why`` names the step, else the
  step quotes it, else they share enough content terms; a shared figure alone never links them). So a
  figure that merely appears in some unrelated snippet is still flagged, and the message names the
  snippets that hold it and the steps they are linked to: naming the step in the right snippet's ``why``
  ("step 3") settles it. An amount on a line before the first step belongs to no step: any snippet backs
  it. Tool and product names are matched against all snippets (a name is the same thing in every step).

  **Computed figures are not unquoted figures**: an amount that an entry of the output's ``derived`` list
  states (``{"value": "$50", "from": ["$200", "$150"], "how": "annual fee $200 minus the $150 credit"}``)
  is not flagged; the entry's sources are checked instead (``unsupported_derived``).

  **Case facts are not policy claims**: an identifier that occurs in the agent-facing case
  (``case_text``: its notes, messages and field names, e.g. the customer's "$700", a competitor's
  "8%", a user id ``friend_user_5839``, the customer's "Cobalt Blue" account, ``as_of``) is never
  flagged, whatever the articles say.

  **An argument is not a tool**: an identifier that is not a tool name (``skillrag.text.tool_names``,
  the one rule, applied to the guidance and to the articles) and that an article the case read writes
  (a tool's argument or field such as ``transaction_id`` or ``card_action``, or its plural
  ``transaction_ids``; a value such as ``annual_fee_waived``) is documented where it was read and is not
  flagged: naming each argument of a
  tool call (SKILL.md's hard-case method) never costs a snippet. A tool name still needs one.
* ``unsupported_derived``: a ``derived`` entry lists a ``from`` item that no snippet contains and the
  case does not state (an item holding amounts is matched by value, "$200" is "$200.00"; any other by
  its text, normalised, any case). Subject ``derived[i]``.
* ``unused_snippet``: the snippet is linked to no step of the guidance by that same rule (also the
  review page's): its ``why`` names no step, no step quotes it, and no step shares enough of its content
  terms (those of its text and its ``why``; case, hyphens and inflection do not matter:
  "invitation-only" and "by invitation only" share *invit onli*). A snippet with no content terms at
  all (only figures) is not judged.
* ``unfetched_citation``: a snippet cites an article this case never read with ``get_article`` (the
  case's tool log in the workspace store knows).
* ``source_title_mismatch``: a snippet's ``source_title`` is not the title of the article it cites
  (compared after the contract's ``normalize``, case-insensitively): copy it from the article header.

These are heuristics meant to point at likely lost evidence (a step whose key fact has no quote
behind it); the evidence contract (``contract.validate_output``) is what accepts or rejects.

Why amounts per step, and names not: an earlier version matched every identifier against all snippets,
because a snippet's step was only known for sure when its ``why`` named it, and false alarms made
agents bend their guidance. Agents now name the step in every ``why`` (220 of 220 snippets in the
issue-22 runs), the link rule is shared with the review page, and the message says how to settle a
figure quoted under another step; a figure that the wrong snippet happens to contain was the miss
agents reported. A product named in several steps is quoted once, so names stay global.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from skillrag.skill.contract import normalize
from skillrag.skill.links import guidance_steps, link_steps, split_guidance
from skillrag.text import IDENTIFIER_PATTERN, STOPWORDS_EN_PLUS, Analyzer, code_names, find_values, tool_names

#: A bare snake_case identifier (an argument or value name), as opposed to other backticked code.
_IDENT_ONLY = re.compile(IDENTIFIER_PATTERN)

__all__ = ["GAP_KINDS", "Gap", "case_text", "evidence_gaps", "identifiers"]

GAP_KINDS = ("unquoted_identifier", "unsupported_derived", "unused_snippet", "unfetched_citation",
             "source_title_mismatch")

#: The kinds of value that count as amounts: money and percentages.
_AMOUNT_KINDS = frozenset({"money", "pct"})
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


def _amounts(text: str) -> dict[str, str]:
    """The amounts of ``text``: normalised value (``usd:15.00``) → the amount as written."""
    out: dict[str, str] = {}
    for v in find_values(text, _AMOUNT_KINDS):
        out.setdefault(v.normalized, v.text.strip())
    return out


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
                if sum(1 for w in words[i:j] if _WORDY.search(w) and w.casefold() not in STOPWORDS_EN_PLUS) < 2:
                    # a structure label ("Step 1", "Tier 2", "CODE 05") or emphasis ("Check ALL", "Do NOT":
                    # found by the agent harness), not a name: a name has two words that are not stop words
                    continue
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
        self.tools = {t.casefold() for t in code_names(norm)}
        self.text = norm.casefold()

    def names(self, name: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", self.text) is not None


def identifiers(text: str) -> set[str]:
    """Tool names and amounts in ``text`` as they are written (for tests and overlap checks)."""
    return set(code_names(text)) | set(_amounts(text).values())


def evidence_gaps(
    output: Mapping[str, Any],
    bodies: Mapping[str, str],
    *,
    titles: Mapping[str, str] | None = None,
    fetched: Iterable[str] | None = None,
    terms: Any = None,
    case: str | None = None,
    basis: list[str | None] | None = None,
) -> list[Gap]:
    """The gaps of an output the contract accepted (see module doc).

    ``bodies``: article id → body for the articles the output cites and those the case read (product
    names are looked up there); ``titles``: their titles (None: unknown, so no
    ``source_title_mismatch`` warning); ``fetched``: ids the case read with ``get_article`` (None:
    unknown, so no ``unfetched_citation`` warning); ``terms``: a text analyser (default:
    ``skillrag.text.Analyzer()``'s ``terms``, the search index's); ``case``: the agent-facing case as text
    (``case_text``; None: unknown, so every identifier counts as a policy claim); ``basis``: for each
    entry of ``output["snippets"]``, the guidance its ``why``'s step numbers refer to when it is not
    ``output["guidance"]`` (a reviewer's edited version; ``skill.links.link_steps``).
    """
    if terms is None:
        terms = Analyzer().terms
    guidance = str(output.get("guidance") or "")
    listed = list(output.get("snippets") or [])
    snippets = [s for s in listed if isinstance(s, dict)]
    if basis is not None:
        basis = [b for b, s in zip(basis, listed, strict=False) if isinstance(s, dict)]
    texts = [normalize(str(s.get("text") or "")) for s in snippets]
    quoted = "\n".join(texts)
    # a product name is covered by a snippet's text or by the title of the article the snippet quotes
    quoted_cf = "\n".join([quoted, *(normalize(str(s.get("source_title") or "")) for s in snippets)]).casefold()
    ids = {str(s.get("source_article")).casefold() for s in snippets} | {b.casefold() for b in bodies}
    facts = _CaseFacts(case or "")
    gaps: list[Gap] = []

    # 1. identifiers in the guidance that no snippet holds (and the case does not state)
    guide = normalize(guidance)
    bodies_read = [normalize(b) for b in bodies.values()]
    tools = {t.casefold() for t in tool_names(guide)} | {t.casefold() for b in bodies_read for t in tool_names(b)}
    documented = "\n".join(bodies_read).casefold()
    for tool in sorted(code_names(guide)):
        cf = tool.casefold()
        if cf in quoted_cf or cf in facts.tools or any(cf in i for i in ids):
            continue
        forms = (cf, cf[:-1]) if cf.endswith("s") else (cf,)  # transaction_ids: the plural of an argument
        if cf not in tools and _IDENT_ONLY.fullmatch(tool) and any(
                re.search(rf"(?<![\w]){re.escape(f)}(?![\w])", documented) for f in forms):
            continue  # an argument or value an article read writes: not a tool claim (module doc)
        gaps.append(Gap("unquoted_identifier", f"the guidance names `{tool}` but no snippet contains it: quote "
                        "the passage that states it, or check the name", tool))
    steps = guidance_steps(split_guidance(guidance))
    unlinked = link_steps(steps, snippets, terms=terms, basis=basis)
    held = [set(_amounts(t)) for t in texts]  # the amounts each snippet states
    derived, gaps_derived = _derived(output, held, quoted_cf, facts)
    in_step = [set(_amounts(normalize(st.text))) for st in steps]
    for key, written in _amounts(guide).items():
        if key in facts.amounts or key in derived:
            continue
        holders = [i for i, h in enumerate(held) if key in h]
        if not holders:
            gaps.append(Gap("unquoted_identifier", f"the guidance states the amount {written} but no snippet "
                            "contains it: quote the passage that states it, list it under derived if you computed "
                            "it, or check the figure", written))
            continue
        # a figure is matched against the snippets of the step that states it (a line before the first
        # step belongs to none: any snippet backs it)
        bare = [st for st, have in zip(steps, in_step, strict=True)
                if key in have and not any(i in st.snippets for i in holders)]
        if not bare:
            continue
        where = ", ".join(f"snippets[{i}] ({_linked(i, steps, unlinked)})" for i in holders[:3])
        nums = ", ".join(str(st.number) for st in bare[:-1]) + (" and " if len(bare) > 1 else "") + str(bare[-1].number)
        said = f"step {nums} states" if len(bare) == 1 else f"steps {nums} state"
        gaps.append(Gap("unquoted_identifier", f"{said} the amount {written}, but no snippet linked to "
                        f"{'that step' if len(bare) == 1 else 'those steps'} contains it; {where} "
                        f"{'does' if len(holders) == 1 else 'do'}: name the step in the why of the snippet that "
                        "backs it (\"step N\"), quote the passage that does, or list it under derived if you "
                        "computed it", written))
    gaps += gaps_derived
    corpus = "\n".join([*(normalize(b) for b in bodies.values()), *(titles or {}).values()]).casefold()
    for name in sorted(_names(guide, corpus)):
        if name.casefold() in quoted_cf or facts.names(name):
            continue
        gaps.append(Gap("unquoted_identifier", f"the guidance names {name!r} but no snippet contains it: quote "
                        "the passage about it, or check the name", name))

    # 2. snippets no step uses (the one step-to-snippet rule, ``skill.links``)
    for i in unlinked:
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


def _linked(i: int, steps: list[Any], unlinked: list[int]) -> str:
    """Where snippet ``i`` is linked, in words (for a message)."""
    if i in unlinked:
        return "linked to no step"
    nums = [str(st.number) for st in steps if i in st.snippets]
    return f"linked to step {', '.join(nums)}"


def _derived(output: Mapping[str, Any], held: list[set[str]], quoted_cf: str,
             facts: _CaseFacts) -> tuple[set[str], list[Gap]]:
    """The amounts the output's ``derived`` entries state (a figure computed from quoted ones is not an
    unquoted figure) and a ``unsupported_derived`` gap for each entry with a ``from`` item that no
    snippet contains and the case does not state. A ``from`` item that holds amounts is matched by
    value ("$200" is "$200.00"); any other by its text (normalised, any case)."""
    entries = output.get("derived")
    stated: set[str] = set()
    gaps: list[Gap] = []
    quoted_amounts = set().union(*held) if held else set()
    for i, d in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(d, Mapping):
            continue
        value = str(d.get("value") or "")
        stated |= set(_amounts(normalize(value)))
        missing: list[str] = []
        sources = d.get("from")
        for item in sources if isinstance(sources, list) else []:
            text = normalize(str(item))
            keys = set(_amounts(text))
            if keys:
                ok = all(k in quoted_amounts or k in facts.amounts for k in keys)
            else:
                ok = bool(text) and (text.casefold() in quoted_cf or text.casefold() in facts.text)
            if not ok:
                missing.append(str(item))
        if missing:
            listed = ", ".join(repr(m) for m in missing)
            gaps.append(Gap("unsupported_derived", f"derived[{i}] ({value}) comes from {listed}, which no snippet "
                            f"contains: quote the passage that states it, or correct derived[{i}].from",
                            f"derived[{i}]"))
    return stated, gaps


def _fold(text: str) -> str:
    return normalize(text).casefold()
