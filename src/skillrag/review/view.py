"""Pure helpers of the review page: guidance steps linked to snippets, and an article body cut
into segments so that each snippet can be marked at its character offsets.

Linking a snippet to a guidance step (deterministic, in this order):

1. **stated**: the snippet's ``why`` names the step (``"step 3"``, ``"steps 2 and 4"``,
   ``"steps 2-4"``; the extractive harness writes ``"Backs step 3 (...)"``, ``SKILL.md`` asks the
   model to say "which step it supports").
2. **quoted**: otherwise, the first step whose text contains the snippet's text (after the
   evidence contract's ``normalize``, case-folded).
3. **overlap**: otherwise, the step holding the largest share of the snippet's words (letters and
   digits, three or more characters, case-folded), when that share is at least ``MIN_OVERLAP``.

A snippet that none of these links is shown as "not linked to a step". Steps are the guidance
lines that start with a number followed by ``.`` or ``)``; other lines are kept as plain text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillrag.skill.contract import normalize

__all__ = ["MIN_OVERLAP", "GuidanceLine", "Segment", "Span", "link_snippets", "segments", "split_guidance"]

#: Least share of a snippet's words a step must contain for an ``overlap`` link.
MIN_OVERLAP = 0.6

_STEP = re.compile(r"^\s*(\d{1,3})[.)]\s+")
_STEP_REF = re.compile(r"\bsteps?\s+(\d{1,3}(?:\s*(?:,|&|and|-|\u2013|to)\s*\d{1,3})*)", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]{3,}")


@dataclass
class GuidanceLine:
    """One line of guidance: ``text``; ``number`` of the step (None for a plain line); the
    ``snippets`` (0-based indices) linked to the step, each with ``how`` it was linked."""

    text: str
    number: int | None = None
    snippets: list[int] = field(default_factory=list)
    how: dict[int, str] = field(default_factory=dict)


def split_guidance(guidance: str) -> list[GuidanceLine]:
    """The lines of ``guidance`` (``\\n``-separated; blank lines dropped), numbered lines as steps."""
    lines = []
    for raw in str(guidance).replace("\r\n", "\n").split("\n"):
        if not raw.strip():
            continue
        m = _STEP.match(raw)
        lines.append(GuidanceLine(raw.strip(), int(m.group(1)) if m else None))
    return lines


def stated_steps(why: str) -> list[int]:
    """Step numbers a snippet's ``why`` names, in order (ranges expanded, at most 50 steps)."""
    out: list[int] = []
    for m in _STEP_REF.finditer(why or ""):
        nums = [int(x) for x in re.findall(r"\d{1,3}", m.group(1))]
        ranged = re.search(r"\d\s*(?:-|\u2013|to)\s*\d", m.group(1)) is not None and len(nums) == 2
        if ranged and nums[0] <= nums[1] <= nums[0] + 50:
            nums = list(range(nums[0], nums[1] + 1))
        out += [n for n in nums if n not in out]
    return out


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def link_snippets(lines: list[GuidanceLine], snippets: Sequence[Any]) -> list[int]:
    """Link each snippet (a dict with ``text`` and ``why``; anything else is skipped) to steps of
    ``lines`` in place (module doc). Returns the indices of the snippets linked to no step."""
    steps = [ln for ln in lines if ln.number is not None]
    by_number: dict[int, GuidanceLine] = {}
    for ln in steps:
        by_number.setdefault(ln.number, ln)  # type: ignore[arg-type]
    unlinked: list[int] = []
    for i, snip in enumerate(snippets):
        if not isinstance(snip, dict):
            unlinked.append(i)
            continue
        text = str(snip.get("text") or "")
        targets = [(by_number[n], "stated") for n in stated_steps(str(snip.get("why") or "")) if n in by_number]
        if not targets and text.strip():
            needle = normalize(text).casefold()
            quoted = next((ln for ln in steps if needle and needle in normalize(ln.text).casefold()), None)
            if quoted is not None:
                targets = [(quoted, "quoted")]
            else:
                words = _words(text)
                best, share = None, 0.0
                for ln in steps:
                    s = len(words & _words(ln.text)) / len(words) if words else 0.0
                    if s > share:
                        best, share = ln, s
                if best is not None and share >= MIN_OVERLAP:
                    targets = [(best, "overlap")]
        if not targets:
            unlinked.append(i)
        for ln, how in targets:
            if i not in ln.snippets:
                ln.snippets.append(i)
                ln.how[i] = how
    return unlinked


@dataclass(frozen=True)
class Span:
    """Snippet ``index`` (0-based) marked at ``body[start:end]``; ``kind`` says how the place was
    found: ``stored`` (the saved offsets, article unchanged) or ``located`` (found again in a
    changed article, or the stored offsets did not hold)."""

    index: int
    start: int
    end: int
    kind: str = "stored"


@dataclass(frozen=True)
class Segment:
    """A run of ``text`` of the body covered by the same snippets (``covers``, sorted indices;
    empty = plain text). ``opens`` lists the snippets that start here, ``closes`` those that end
    here (the page puts an anchor at each start and a back-link at each end)."""

    text: str
    covers: tuple[int, ...] = ()
    opens: tuple[int, ...] = ()
    closes: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()


def segments(body: str, spans: Iterable[Span]) -> list[Segment]:
    """``body`` cut at every span boundary, so overlapping snippets need no nested marks.
    Spans outside ``0..len(body)`` or empty are ignored. ``"".join(s.text) == body`` always."""
    good = [s for s in spans if 0 <= s.start < s.end <= len(body)]
    cuts = sorted({0, len(body), *(s.start for s in good), *(s.end for s in good)})
    out: list[Segment] = []
    for a, b in itertools.pairwise(cuts):
        covering = sorted((s for s in good if s.start <= a and b <= s.end), key=lambda s: s.index)
        out.append(Segment(
            body[a:b],
            tuple(s.index for s in covering),
            tuple(s.index for s in covering if s.start == a),
            tuple(s.index for s in covering if s.end == b),
            tuple(dict.fromkeys(s.kind for s in covering)),
        ))
    return out
