"""Section-level articles: a long document split at its headings.

A document is split when it is longer than ``corpus.split_chars`` characters, or always (when it has
headings) with ``corpus.split_headings`` / ``skillrag ingest --split-sections``. It is cut at the
shallowest heading level that occurs at least twice (so a single ``# Title`` is not a split point);
a part still longer than ``split_chars`` is cut again at its own sub-headings. Text before the first
cut (the title and an introduction) is its own section when it holds more than headings, else it
joins the first section. The parts partition the document: joined in order they give its body back,
byte for byte, and each part's body is the exact slice of the document it came from, so a quote
checked against a section is a quote of the document.

Ids: ``<doc-id>#<slug of the section's own heading>``; a slug repeated in one document gets ``-2``,
``-3`` … in document order, so an edit to one section leaves the other sections' ids alone.
Titles: ``<document title>: <heading path joined by " > ">``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillrag.corpus.model import Section, SourceArticle
from skillrag.corpus.sections import parse_sections

__all__ = ["INTRO_HEADING", "section_slug", "should_split", "split_document"]

#: Heading of the part before the first cut when it has no heading of its own (besides the title).
INTRO_HEADING = "Introduction"
_MAX_SLUG = 60
_MAX_ID = 200  # ``ID_PATTERN`` admits at most 200 characters
_HEADING_LINE = re.compile(r"^#{1,6}[ \t].*$", re.MULTILINE)


def section_slug(heading: str) -> str:
    """``"Roaming & Travel (EU)"`` -> ``"roaming-travel-eu"``; at most 60 characters, never empty."""
    slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:_MAX_SLUG].rstrip("-")
    return slug or "section"


def should_split(body: str, *, split_chars: int, split_headings: bool) -> bool:
    """True when a document of this ``body`` is to be split (it must also have headings to cut at)."""
    return split_headings or (split_chars > 0 and len(body) > split_chars)


@dataclass(frozen=True)
class _Part:
    start: int
    end: int
    path: tuple[str, ...]


def _has_text(text: str) -> bool:
    """More than headings and whitespace."""
    return bool(_HEADING_LINE.sub("", text).strip())


def _enclosing(heads: list[Section], at: int, level: int) -> list[str]:
    """Headings of the sections of a level above ``level`` that contain offset ``at`` (outermost first)."""
    return [s.heading for s in heads if s.level < level and s.start < at < s.end]


def _title_free(path: tuple[str, ...], title: str) -> tuple[str, ...]:
    """``path`` without a leading heading that repeats the document title."""
    if path and path[0].strip().lower() == title.strip().lower():
        return path[1:]
    return path


def _cut(body: str, heads: list[Section], start: int, end: int, base: tuple[str, ...], own: str | None,
         split_chars: int, title: str) -> list[_Part]:
    """Cut ``body[start:end]`` into parts at the shallowest heading level that gives two parts or
    more, recursively for parts over ``split_chars``. ``own``: the heading the range starts with
    (None for the whole document); ``base``: the heading path above it."""
    inner = [h for h in heads if start < h.start < end or (own is None and h.start == start)]
    for level in sorted({h.level for h in inner}):
        cuts = [h for h in inner if h.level == level]
        if len(cuts) + _has_text(body[start : cuts[0].start]) >= 2:
            return _cut_at(body, heads, inner, level, start, end, base, own, split_chars, title)
    return []


def _cut_at(body: str, heads: list[Section], inner: list[Section], level: int, start: int, end: int,
            base: tuple[str, ...], own: str | None, split_chars: int, title: str) -> list[_Part]:
    cuts = [h for h in inner if h.level == level]
    here = base + ((own,) if own is not None else ())
    parts: list[_Part] = []
    if _has_text(body[start : cuts[0].start]):
        path = here or _title_free(tuple(_enclosing(heads, cuts[0].start, level)), title)
        parts.append(_Part(start, cuts[0].start, path or (INTRO_HEADING,)))
        first_start = cuts[0].start
    else:
        first_start = start  # only headings before the first cut: they join the first section
    for i, h in enumerate(cuts):
        p_start = first_start if i == 0 else h.start
        p_end = cuts[i + 1].start if i + 1 < len(cuts) else end
        outer = () if own is not None else tuple(_enclosing(heads, h.start, level))
        # a section whose own heading repeats the title keeps it (its path is never empty)
        path = _title_free(here + outer + (h.heading,), title) or (h.heading,)
        if split_chars > 0 and p_end - p_start > split_chars:
            sub = _cut(body, heads, h.start, p_end, path[:-1], h.heading, split_chars, title)
            if sub:
                sub[0] = _Part(p_start, sub[0].end, sub[0].path)  # headings before the cut stay with it
                parts.extend(sub)
                continue
        parts.append(_Part(p_start, p_end, path))
    return parts


def split_document(doc: SourceArticle, *, split_chars: int, split_headings: bool = False) -> list[SourceArticle]:
    """The section-articles of ``doc`` (empty when it is not to be split or has no heading to cut at).

    Each section has ``parent=doc.id``, its ``heading_path``, ``parent_offset`` (characters) and the
    body ``doc.body[parent_offset : parent_offset + len(body)]``; joined in order the bodies give
    ``doc.body``. Tag, source path and URL are the document's. ``split_chars``: documents longer than this many characters are split (0: never
    by size); ``split_headings``: split every document that has headings.
    """
    if not should_split(doc.body, split_chars=split_chars, split_headings=split_headings):
        return []
    room = _MAX_ID - len(doc.id) - 1 - 4  # "#", and "-NNN" for a repeated slug
    if room < 8:
        return []  # the document id leaves no room for section slugs
    heads = parse_sections(doc.body)
    parts = _cut(doc.body, heads, 0, len(doc.body), (), None, split_chars, doc.title)
    if len(parts) < 2:
        return []
    out: list[SourceArticle] = []
    used: set[str] = set()
    for p in parts:
        base = section_slug(p.path[-1])[:room].rstrip("-") or "section"
        slug, n = base, 1
        while slug in used:  # a repeated heading: -2, -3 … in document order
            n += 1
            slug = f"{base}-{n}"
        used.add(slug)
        out.append(SourceArticle(
            id=f"{doc.id}#{slug}",
            title=f"{doc.title}: {' > '.join(p.path)}",
            body=doc.body[p.start : p.end],
            source_path=doc.source_path,
            source_tag=doc.source_tag,
            parent=doc.id,
            heading_path=p.path,
            parent_offset=p.start,
            url=doc.url,
        ))
    return out
