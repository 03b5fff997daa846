"""Pure helpers of the review page: guidance steps linked to snippets, and an article body cut
into segments so that each snippet can be marked at its character offsets.

Steps are linked to snippets by the one rule the save warnings use too (``skillrag.skill.links``, whose
module doc states it): the step a snippet's ``why`` names, else the step that quotes it, else every step
sharing enough of its content terms. ``GuidanceLine``, ``split_guidance``, ``stated_steps`` and
``link_snippets`` are that module's, re-exported here for the page.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from skillrag.skill.links import GuidanceLine, link_snippets, split_guidance, stated_steps

__all__ = ["GuidanceLine", "Segment", "Span", "link_snippets", "segments", "split_guidance", "stated_steps"]


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
