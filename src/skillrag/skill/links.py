"""Guidance steps linked to the snippets that back them: the one rule that the save warnings
(``skill.gaps``: which snippets a step's figures are matched against, which snippets no step uses)
and the review page (``skillrag.review``: "Evidence: snippet 3" beside a step) share.

**Steps.** The guidance's lines (blank lines dropped). A line that starts with a number followed by
``.`` or ``)`` is a numbered step, and the lines after it, up to the next numbered step, belong to it
(sub-bullets, wrapped text). A guidance with no numbered line is cut the same way at its bulleted lines
(``-``, ``*``, ``+``, ``•``), and one with neither at its paragraphs (blank-line separated). Lines before
the first step belong to no step (a heading, an opening summary). A step's ``number`` is the one
written, else its position (1-based), so "step 2" of a bulleted guidance is its second bullet.

**Links**, per snippet (a mapping with ``text`` and ``why``), by the first of these rules that links it:

1. **stated**: its ``why`` names steps that exist (``"step 3"``, ``"steps 2 and 4"``, ``"steps 2-4"``;
   the extractive harness writes ``"Backs step 3 (...)"`` and SKILL.md asks for "which step it supports").
   A ``why`` names the steps of the guidance it was written against (its *basis*: the agent's own
   guidance for the agent's snippets, the version a reviewer added a snippet to for that one). Read
   against another version (a reviewer's edit that reordered, added or removed steps), "step 3" is never
   taken as that version's step 3: it is the step whose first line, its number or bullet aside, is
   basis step 3's first line, wherever the edit moved it; when no step of the version has that line the
   stated rule does not apply and the rules below decide;
2. **quoted**: the first step whose text contains the snippet's text (the evidence contract's
   ``normalize``, case-folded);
3. **overlap**: every step that shares enough *content terms* with the snippet's text and ``why``: at
   least ``min(3, n)`` distinct terms (``n``: the snippet's own), or two terms that stand next to each
   other in both, in either order ("by invitation only" and "invitation-only" share *invit onli*). Terms are the search
   index's analyzer (``skillrag.text.Analyzer``: case-folded words, English stop words dropped, Snowball
   stems, a hyphen splits words, a tool name such as ``freeze_card_4410`` is one term). Numbers are not
   terms: a figure the two share never links them by itself, since the warnings ask which snippet *of the
   step* holds that figure.

A snippet that none of these links is linked to no step (``unused_snippet``; "not linked to a step" on
the review page).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillrag.skill.contract import normalize
from skillrag.text import Analyzer

__all__ = ["GuidanceLine", "GuidanceStep", "guidance_steps", "link_snippets", "link_steps", "split_guidance",
           "stated_steps", "step_heading", "strip_marker"]

_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+")
_BULLET = re.compile(r"^\s*[-*+•]\s+")
_STEP_REF = re.compile(r"\bsteps?\s+(\d{1,3}(?:\s*(?:,|&|and|-|\u2013|to)\s*\d{1,3})*)", re.IGNORECASE)
#: Most step numbers one range in a ``why`` expands to ("steps 2-4" is 3).
MAX_RANGE = 50
#: Fewest shared content terms an overlap link needs (fewer when the snippet has fewer).
MIN_SHARED_TERMS = 3

Terms = Callable[[str], list[str]]


@dataclass
class GuidanceLine:
    """One line of guidance: ``text``; ``number`` of a numbered step (None for any other line); the
    ``snippets`` (0-based indices) linked to the step this line heads, each with ``how`` it was linked
    (``stated`` | ``quoted`` | ``overlap``); ``para``: the paragraph (blank-line separated) it is in."""

    text: str
    number: int | None = None
    snippets: list[int] = field(default_factory=list)
    how: dict[int, str] = field(default_factory=dict)
    para: int = 0


@dataclass
class GuidanceStep:
    """One step: its ``number`` (as written, else its position), the ``lines`` it spans (indices into
    the guidance's lines, the first heads it), its ``text`` (those lines joined), the ``snippets``
    linked to it with ``how``, and ``head``: the text of its first line."""

    number: int
    lines: list[int]
    text: str
    snippets: list[int] = field(default_factory=list)
    how: dict[int, str] = field(default_factory=dict)
    head: str = ""


def split_guidance(guidance: str) -> list[GuidanceLine]:
    """The lines of ``guidance`` (``\\n``-separated; blank lines dropped), numbered lines as steps."""
    lines: list[GuidanceLine] = []
    para = 0
    for raw in str(guidance).replace("\r\n", "\n").split("\n"):
        if not raw.strip():
            if lines and lines[-1].para == para:
                para += 1
            continue
        m = _NUMBERED.match(raw)
        lines.append(GuidanceLine(raw.strip(), int(m.group(1)) if m else None, para=para))
    return lines


def guidance_steps(lines: Sequence[GuidanceLine]) -> list[GuidanceStep]:
    """The steps of ``lines`` (``split_guidance``), as the module doc cuts them."""
    if any(ln.number is not None for ln in lines):
        heads = [i for i, ln in enumerate(lines) if ln.number is not None]
    elif any(_BULLET.match(ln.text) for ln in lines):
        heads = [i for i, ln in enumerate(lines) if _BULLET.match(ln.text)]
    else:
        heads = [i for i, ln in enumerate(lines) if i == 0 or ln.para != lines[i - 1].para]
    steps: list[GuidanceStep] = []
    for n, start in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        span = list(range(start, end))
        head = lines[start]
        number = head.number if head.number is not None else n + 1
        steps.append(GuidanceStep(number, span, " ".join(lines[i].text for i in span), head=head.text))
    return steps


def strip_marker(line: str) -> str:
    """``line`` without the step number (``2.``, ``2)``) or bullet that opens it."""
    return _BULLET.sub("", _NUMBERED.sub("", line, count=1), count=1)


def step_heading(step: GuidanceStep) -> str:
    """What identifies ``step`` across guidance versions: its first line (``head``) without the step
    number or bullet that opens it, normalised (``contract.normalize``) and case-folded."""
    return normalize(strip_marker(step.head)).casefold()


def stated_steps(why: str) -> list[int]:
    """Step numbers a snippet's ``why`` names, in order (ranges expanded, at most ``MAX_RANGE`` steps)."""
    out: list[int] = []
    for m in _STEP_REF.finditer(why or ""):
        nums = [int(x) for x in re.findall(r"\d{1,3}", m.group(1))]
        ranged = re.search(r"\d\s*(?:-|\u2013|to)\s*\d", m.group(1)) is not None and len(nums) == 2
        if ranged and nums[0] <= nums[1] <= nums[0] + MAX_RANGE:
            nums = list(range(nums[0], nums[1] + 1))
        out += [n for n in nums if n not in out]
    return out


def _content(text: str, terms: Terms) -> list[str]:
    """``terms(text)`` without numbers (see the module doc), in order."""
    return [t for t in terms(text) if not t.isdigit()]


def _pairs(seq: list[str]) -> set[frozenset[str]]:
    """The pairs of terms that stand next to each other in ``seq`` (in either order)."""
    return {frozenset((a, b)) for a, b in itertools.pairwise(seq) if a != b}


def link_steps(steps: Sequence[GuidanceStep], snippets: Sequence[Any], *, terms: Terms | None = None,
               basis: Sequence[str | None] | None = None) -> list[int]:
    """Link each snippet to ``steps`` in place (module doc); returns the indices of the snippets linked
    to no step (anything that is not a mapping is one). ``terms``: a text analyser (default
    ``skillrag.text.Analyzer().terms``, the search index's). ``basis``: for each snippet (same order), the guidance its
    ``why``'s step numbers refer to when that is not the guidance ``steps`` were cut from (an edited
    version: the stated rule then reads "step N" as basis step N, found in ``steps`` by its first line;
    module doc); None, or a None entry, when the ``why`` refers to ``steps`` themselves."""
    if terms is None:
        terms = Analyzer().terms
    by_number: dict[int, GuidanceStep] = {}
    for st in steps:
        by_number.setdefault(st.number, st)
    by_heading: dict[str, list[GuidanceStep]] = {}
    for st in steps:
        by_heading.setdefault(step_heading(st), []).append(st)
    bases: dict[str, dict[int, GuidanceStep | None]] = {}

    def stated(n: int, guidance: str | None) -> GuidanceStep | None:
        if guidance is None:
            return by_number.get(n)
        if guidance not in bases:  # basis step number -> the step of ``steps`` with its first line
            bases[guidance] = {}
            seen: dict[str, int] = {}
            for bst in guidance_steps(split_guidance(guidance)):
                key = step_heading(bst)
                nth = seen[key] = seen.get(key, -1) + 1  # the n-th step with a first line is the n-th one
                same = by_heading.get(key, [])
                bases[guidance].setdefault(bst.number, same[nth] if nth < len(same) else None)
        return bases[guidance].get(n)

    step_seq = [_content(st.text, terms) for st in steps]
    step_terms = [set(s) for s in step_seq]
    step_pairs = [_pairs(s) for s in step_seq]
    step_norm = [normalize(st.text).casefold() for st in steps]
    unlinked: list[int] = []
    for i, snip in enumerate(snippets):
        if not isinstance(snip, dict):
            unlinked.append(i)
            continue
        text, why = str(snip.get("text") or ""), str(snip.get("why") or "")
        written_for = basis[i] if basis is not None and i < len(basis) else None
        named = (stated(n, written_for) for n in stated_steps(why))
        targets = [(st, "stated") for st in named if st is not None]
        targets = list({id(st): (st, how) for st, how in targets}.values())
        needle = normalize(text).casefold()
        if not targets and needle:
            quoted = next((st for st, hay in zip(steps, step_norm, strict=True) if needle in hay), None)
            if quoted is not None:
                targets = [(quoted, "quoted")]
        if not targets:
            seq = _content(text, terms) + _content(why, terms)
            own, pairs = set(seq), _pairs(_content(text, terms)) | _pairs(_content(why, terms))
            need = min(MIN_SHARED_TERMS, len(own))
            targets = [(st, "overlap") for st, have, hp in zip(steps, step_terms, step_pairs, strict=True)
                       if own and (len(own & have) >= need or pairs & hp)]
        if not targets:
            unlinked.append(i)
        for st, how in targets:
            if i not in st.snippets:
                st.snippets.append(i)
                st.how[i] = how
    return unlinked


def link_snippets(lines: list[GuidanceLine], snippets: Sequence[Any], *, terms: Terms | None = None,
                  basis: Sequence[str | None] | None = None) -> list[int]:
    """Link each snippet to the steps of ``lines`` (``split_guidance``) in place: a step's links are set
    on the line that heads it. Returns the indices of the snippets linked to no step (module doc);
    ``basis`` as for ``link_steps``."""
    steps = guidance_steps(lines)
    unlinked = link_steps(steps, snippets, terms=terms, basis=basis)
    for st in steps:
        head = lines[st.lines[0]]
        for i in st.snippets:
            if i not in head.snippets:
                head.snippets.append(i)
                head.how[i] = st.how[i]
    return unlinked
