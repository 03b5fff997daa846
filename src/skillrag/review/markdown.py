"""Markdown as the review pages show it: rendered safely, with every snippet marked at its stored
offsets in the rendered text.

**Safely.** The parser is markdown-it-py (CommonMark, plus tables and strikethrough) with raw HTML
off, images off (an image would be a request the page never asked for) and no typographic
replacements; the HTML is written here from the parser's tokens through a short list of tags
(``p``, ``h4``–``h6``, lists, ``blockquote``, ``pre``/``code``, ``em``/``strong``/``s``, tables, ``hr``,
``br``, and ``a`` for ``http``/``https``/``mailto`` links only, with ``rel="nofollow noopener
noreferrer"``), every text escaped. No attribute of an article reaches the page but a link's
address; table alignment becomes a class (the page's style policy allows no inline style). An
article's own headings start at ``h4`` (the page gives the article an ``h3``).

**Marks at their offsets.** Each run of visible text is placed at the character offsets of the raw
body it was read from, and a mark is drawn only over runs whose text *is* that slice of the body:

* block tokens give line ranges; the text of each line of a block is found in that line of the body
  (a paragraph's or a list item's line is the end of its source line, a heading's what follows its
  ``#``, a table cell the next cell of its row), so a block's text is placed character for
  character or not at all;
* inside a block the inline tokens are matched in order against that text: a text run must stand
  exactly where the previous one ended, after exactly the markup of the tokens between them
  (``*``, ``**``, ``~~``, a code span's backticks, the ``[`` and the ``](…)`` of a link, whose end the
  parser itself reports, a line break's spaces and newline). Nothing is searched for, so nothing can
  be found at the wrong place;
* an escape or an entity (``\\*``, ``&amp;``) and a code span that the parser changed (a line break
  inside it) show other characters than their source: they are marked only when a snippet covers
  them whole, and never cut.

Every placed run is written as an element with ``data-s`` (its start offset in the body): its text
equals ``body[s : s + len(text)]``, which tests check for every run of every article.

When a snippet cannot be marked in the rendered text (it touches a block whose text could not be
placed, e.g. a table cell with an escaped ``|``, or it covers only markup such as a table's rule line),
or the body holds a carriage return or NUL (the parser rewrites those, which would move every later
offset), the article is shown as its stored text instead (a ``pre`` with the same marks), and
``Rendered.note`` says why. A mark is never moved to make it fit.
"""

from __future__ import annotations

import bisect
import html
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from markdown_it import MarkdownIt, rules_inline
from markdown_it.token import Token

from skillrag.review.view import Span, segments

__all__ = ["Rendered", "plain_inline", "render_article", "render_inline"]

_LINK_SCHEMES = ("http://", "https://", "mailto:")
_HEADING_SHIFT = 3  # an article's h1 is the page's h4
_ALIGN = {"text-align:left": "align-left", "text-align:center": "align-center", "text-align:right": "align-right"}
_BLOCK_TAGS = {
    "paragraph": "p", "blockquote": "blockquote", "bullet_list": "ul", "ordered_list": "ol", "list_item": "li",
    "table": "table", "thead": "thead", "tbody": "tbody", "tr": "tr", "th": "th", "td": "td",
}
_INLINE_TAGS = {"em": "em", "strong": "strong", "s": "s"}


@dataclass(frozen=True)
class Rendered:
    """An article body as HTML (``html``, safe to insert as is), ``markdown``: True when it was
    rendered as Markdown, False when shown as its stored text (``note`` says why)."""

    html: str
    markdown: bool
    note: str = ""


def _with_end(rule: Callable[[Any, bool], bool], kind: str) -> Callable[[Any, bool], bool]:
    """``rule`` (an inline rule of markdown-it) that records, on the first ``kind`` token it pushes,
    where in the inline text its source begins and ends (``meta["src"]``)."""

    def wrapped(state: Any, silent: bool) -> bool:
        start, n = state.pos, len(state.tokens)
        ok = rule(state, silent)
        if ok and not silent:
            for tok in state.tokens[n:]:
                if tok.type == kind and "src" not in tok.meta:
                    tok.meta["src"] = (start, state.pos)
                    break
        return bool(ok)

    return wrapped


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable(["image", "html_inline", "html_block", "text_join"])
    md.inline.ruler.at("link", _with_end(rules_inline.link, "link_open"))
    md.inline.ruler.at("autolink", _with_end(rules_inline.autolink, "link_open"))
    md.inline.ruler.at("backticks", _with_end(rules_inline.backtick, "code_inline"))
    return md


# -- pieces ------------------------------------------------------------------------------------


@dataclass
class _Piece:
    """Visible text placed in the body: ``body[start:end]`` is its source; ``exact`` when ``text`` is
    that slice itself (else it is atomic: an escape, an entity, a changed code span)."""

    text: str
    start: int
    end: int
    exact: bool = True


class _Unplaced(Exception):
    """The inline text of a block could not be placed in the body."""


@dataclass
class _Out:
    """The rendering in progress: HTML strings and pieces in document order, and the body ranges of
    blocks whose text could not be placed."""

    items: list[str | _Piece] = field(default_factory=list)
    unplaced: list[tuple[int, int]] = field(default_factory=list)

    def tag(self, text: str) -> None:
        self.items.append(text)

    def text(self, text: str) -> None:
        self.items.append(html.escape(text, quote=False))


class _Lines:
    """The body's lines and where each starts."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.lines = body.split("\n")
        self.starts = [0]
        for ln in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(ln) + 1)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Body range of lines ``first`` .. ``last - 1``."""
        last = min(max(last, first + 1), len(self.lines))
        return self.starts[first], self.starts[last - 1] + len(self.lines[last - 1])


def _heading_text_end(raw: str) -> str:
    """An ATX heading line without its closing ``#`` sequence and trailing space."""
    r = raw.rstrip(" \t")
    stripped = r.rstrip("#")
    if stripped != r and (not stripped or stripped[-1] in " \t"):
        return stripped.rstrip(" \t")
    return r


def _place_line(content_line: str, raw: str, kind: str, min_col: int) -> int | None:
    """The column at which ``content_line`` (a line of a block's text as the parser gives it) stands in
    its source line ``raw`` (module doc), or None."""
    if kind == "cell":
        col = raw.find(content_line, min_col)
        return col if col >= 0 else None
    for cut in (raw, raw.rstrip(" \t"), _heading_text_end(raw) if kind == "heading" else None):
        if cut is not None and cut.endswith(content_line):
            return len(cut) - len(content_line)
    return None


def _content_map(content: str, first_line: int, lines: _Lines, kind: str, min_col: int = 0) -> Callable[[int], int]:
    """A function from a position in ``content`` (an inline token's text, lines ``first_line``..) to the
    body offset it came from. Raises ``_Unplaced`` when a line cannot be placed."""
    bases: list[int] = []
    line_starts: list[int] = []
    pos = 0
    for k, cl in enumerate(content.split("\n")):
        i = first_line + k
        if i >= len(lines.lines):
            raise _Unplaced
        col = _place_line(cl, lines.lines[i], kind, min_col if k == 0 else 0)
        if col is None:
            raise _Unplaced
        line_starts.append(pos)
        bases.append(lines.starts[i] + col)
        pos += len(cl) + 1

    def to_body(p: int) -> int:
        k = bisect.bisect_right(line_starts, p) - 1
        return bases[k] + (p - line_starts[k])

    return to_body


# -- inline ------------------------------------------------------------------------------------


def _link_href(tok: Token) -> str | None:
    href = str(tok.attrs.get("href") or "")
    return href if href.lower().startswith(_LINK_SCHEMES) else None


def _inline(children: Sequence[Token], out: _Out, src: str | None = None,
            to_body: Callable[[int], int] | None = None) -> None:
    """Write inline tokens to ``out``. With ``src`` (the block's inline text) and ``to_body``, every
    visible run is placed (module doc) and ``_Unplaced`` raised when one cannot be; without, the text
    is only escaped."""
    place = src is not None and to_body is not None
    p = 0
    n = len(src) if src is not None else 0
    link: tuple[int, bool] | None = None  # the open link (links do not nest): its source end, whether <a> was written

    def expect(markup: str) -> None:
        nonlocal p
        if place:
            if not src.startswith(markup, p):  # type: ignore[union-attr]
                raise _Unplaced
            p += len(markup)

    def piece(text: str, start: int, end: int, exact: bool) -> None:
        if place:
            out.items.append(_Piece(text, to_body(start), to_body(end - 1) + 1 if end > start else to_body(start),  # type: ignore[misc]
                                    exact))
        else:
            out.text(text)

    skip_to: int | None = None
    for tok in children:
        t = tok.type
        if skip_to is not None:  # inside an autolink, already written whole
            if t == "link_close":
                p, skip_to = skip_to, None
            continue
        if t == "text":
            if tok.content:
                expect(tok.content)
                piece(tok.content, p - len(tok.content), p, True)
        elif t == "text_special":
            expect(tok.markup)
            piece(tok.content, p - len(tok.markup), p, False)
        elif t in ("softbreak", "hardbreak"):
            if place:
                q = p
                if t == "hardbreak" and src.startswith("\\\n", q):  # type: ignore[union-attr]
                    q += 1
                while q < n and src[q] in " \t":  # type: ignore[index]
                    q += 1
                if q >= n or src[q] != "\n":  # type: ignore[index]
                    raise _Unplaced
                nl = q
                q += 1
                while q < n and src[q] in " \t":  # type: ignore[index]
                    q += 1
                p = q
            if t == "hardbreak":
                out.tag("<br>\n")
            elif place:
                piece("\n", nl, nl + 1, True)
            else:
                out.tag("\n")
        elif t.endswith(("_open", "_close")) and t.rsplit("_", 1)[0] in _INLINE_TAGS:
            expect(tok.markup)
            tag = _INLINE_TAGS[t.rsplit("_", 1)[0]]
            out.tag(f"<{tag}>" if t.endswith("_open") else f"</{tag}>")
        elif t == "code_inline":
            out.tag("<code>")
            if place:
                a, b = tok.meta.get("src", (-1, -1))
                m = tok.markup
                if a != p or not src.startswith(m, a) or not src.startswith(m, b - len(m)):  # type: ignore[union-attr]
                    raise _Unplaced
                inner_a, inner_b = a + len(m), b - len(m)
                inner = src[inner_a:inner_b]  # type: ignore[index]
                if inner == tok.content:
                    piece(inner, inner_a, inner_b, True)
                elif inner[1:-1] == tok.content and inner[:1] == " " == inner[-1:]:
                    piece(tok.content, inner_a + 1, inner_b - 1, True)
                else:  # a line break inside the code span: the parser shows a space
                    piece(tok.content, inner_a, inner_b, False)
                p = b
            else:
                out.text(tok.content)
            out.tag("</code>")
        elif t == "link_open":
            href = _link_href(tok)
            a, b = tok.meta.get("src", (p, p))
            if place and a != p:
                raise _Unplaced
            opened = ""
            if href is not None:
                opened = f'<a href="{html.escape(href, quote=True)}" rel="nofollow noopener noreferrer">'
            if tok.markup == "autolink":  # <https://…>: the address shown is the parser's, written whole
                out.tag(opened)
                label = next((c.content for c in children[children.index(tok) + 1:] if c.type == "text"), "")
                if place:
                    piece(label, a, b, False)
                else:
                    out.text(label)
                out.tag("</a>" if opened else "")
                skip_to = b if place else p
                continue
            expect("[")
            out.tag(opened)
            link = (b, bool(opened))
        elif t == "link_close":
            if link is None:
                raise _Unplaced if place else ValueError("a link closed that was not opened")
            end, wrote = link
            link = None
            if place:
                if not src.startswith("]", p):  # type: ignore[union-attr]
                    raise _Unplaced
                p = end  # past "](…)" or "][ref]": where the parser's link rule ended
            out.tag("</a>" if wrote else "")
        else:
            raise _Unplaced if place else ValueError(f"unexpected inline token {t}")
    if place and p != n:
        raise _Unplaced




# -- blocks ------------------------------------------------------------------------------------


def _blocks(tokens: Sequence[Token], lines: _Lines, out: _Out) -> None:
    row_col = 0
    row_line = -1
    for n, tok in enumerate(tokens):
        t = tok.type
        if t == "inline":
            before = tokens[n - 1].type if n else ""
            kind = {"th_open": "cell", "td_open": "cell", "heading_open": "heading"}.get(before, "paragraph")
            first = tok.map[0] if tok.map else -1
            if kind == "cell" and first != row_line:
                row_line, row_col = first, 0
            mark = len(out.items)
            try:
                if first < 0:
                    raise _Unplaced
                to_body = _content_map(tok.content, first, lines, kind, row_col)
                _inline(tok.children or [], out, tok.content, to_body)
                if kind == "cell" and tok.content:
                    row_col = to_body(len(tok.content) - 1) + 1 - lines.starts[first]
            except _Unplaced:
                del out.items[mark:]
                _inline(tok.children or [], out)
                if tok.map:
                    out.unplaced.append(lines.span(tok.map[0], tok.map[1]))
        elif t in ("code_block", "fence"):
            first = (tok.map[0] + (1 if t == "fence" else 0)) if tok.map else -1
            out.tag("<pre><code>")
            mark = len(out.items)
            try:
                if first < 0:
                    raise _Unplaced
                for k, cl in enumerate(tok.content.split("\n")[:-1]):
                    i = first + k
                    col = _place_line(cl, lines.lines[i], "code", 0) if i < len(lines.lines) else None
                    if col is None:
                        raise _Unplaced
                    start = lines.starts[i] + col
                    if cl:
                        out.items.append(_Piece(cl, start, start + len(cl)))
                    nl = start + len(cl)
                    if lines.body[nl:nl + 1] == "\n":
                        out.items.append(_Piece("\n", nl, nl + 1))
                    else:
                        out.tag("\n")
            except _Unplaced:
                del out.items[mark:]
                out.text(tok.content)
                if tok.map:
                    out.unplaced.append(lines.span(tok.map[0], tok.map[1]))
            out.tag("</code></pre>\n")
        elif t == "hr":
            out.tag("<hr>\n")
        elif t in ("heading_open", "heading_close"):
            level = min(int(tok.tag[1:]) + _HEADING_SHIFT, 6)
            out.tag(f"<h{level} class=\"md-{tok.tag}\">" if t == "heading_open" else f"</h{level}>\n")
        elif t.endswith(("_open", "_close")) and t.rsplit("_", 1)[0] in _BLOCK_TAGS:
            if tok.hidden:  # the paragraphs of a tight list
                continue
            tag = _BLOCK_TAGS[t.rsplit("_", 1)[0]]
            if t.endswith("_close"):
                out.tag(f"</{tag}>\n")
                continue
            attrs = ""
            style = str(tok.attrs.get("style") or "")
            if style in _ALIGN:
                attrs = f' class="{_ALIGN[style]}"'
            start = tok.attrs.get("start")
            if tag == "ol" and isinstance(start, int | str) and str(start).isdigit() and int(start) != 1:
                attrs = f' start="{int(start)}"'
            out.tag(f"<{tag}{attrs}>")
        else:  # anything else (none with raw HTML off) is shown as its text
            if tok.content:
                out.text(tok.content)
                if tok.map:
                    out.unplaced.append(lines.span(tok.map[0], tok.map[1]))


# -- marks -------------------------------------------------------------------------------------


def _one_based(indices: Iterable[int]) -> str:
    return " ".join(str(i + 1) for i in indices)


def _mark_html(text: str, start: int, covers: Sequence[Span], *, exact: bool, end: int) -> str:
    esc = html.escape(text, quote=False)
    where = f'data-s="{start}"' if exact else f'data-src="{start}-{end}"'
    if not covers:
        return f"<span {where}>{esc}</span>" if exact else f'<span class="atomic" {where}>{esc}</span>'
    kinds = list(dict.fromkeys(s.kind for s in covers))
    cls = " ".join([*kinds, *(["overlap"] if len(covers) > 1 else []), *([] if exact else ["atomic"])])
    return f'<mark class="{cls}" {where} data-snippets="{_one_based(sorted(s.index for s in covers))}">{esc}</mark>'


def _anchor(i: int) -> str:
    return f'<span id="mark-{i + 1}" class="anchor"></span>'


def _backref(i: int) -> str:
    return (f'<a class="ref" href="#snippet-{i + 1}" aria-label="end of snippet {i + 1}, back to it">'
            f"[{i + 1}]</a>")


def _with_marks(items: Sequence[str | _Piece], spans: Sequence[Span]) -> tuple[list[str], set[int]]:
    """The HTML of ``items`` with each piece cut at the spans' edges and the covered parts marked,
    an anchor before each span's first marked part and a back-link after its last; also the indices
    of the spans that got a mark."""
    cuts = sorted({x for s in spans for x in (s.start, s.end)})
    parts: list[tuple[str, int, int, list[Span], bool] | str] = []
    for it in items:
        if isinstance(it, str):
            parts.append(it)
            continue
        if not it.exact:
            covers = [s for s in spans if s.start <= it.start and it.end <= s.end]
            parts.append((it.text, it.start, it.end, covers, False))
            continue
        edges = [it.start, *(c for c in cuts if it.start < c < it.end), it.end]
        for a, b in itertools.pairwise(edges):
            covers = [s for s in spans if s.start <= a and b <= s.end]
            parts.append((it.text[a - it.start:b - it.start], a, b, covers, True))
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for k, part in enumerate(parts):
        if isinstance(part, tuple):
            for s in part[3]:
                first.setdefault(s.index, k)
                last[s.index] = k
    html_parts: list[str] = []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            html_parts.append(part)
            continue
        text, a, b, covers, exact = part
        html_parts += [_anchor(s.index) for s in sorted(covers, key=lambda s: s.index) if first[s.index] == k]
        html_parts.append(_mark_html(text, a, covers, exact=exact, end=b))
        html_parts += [_backref(s.index) for s in sorted(covers, key=lambda s: s.index) if last[s.index] == k]
    return html_parts, set(first)


def _stored_text(body: str, spans: Sequence[Span], note: str) -> Rendered:
    items: list[str | _Piece] = [_Piece(seg.text, pos, pos + len(seg.text))
                                 for seg, pos in _positions(segments(body, spans)) if seg.text]
    parts, _ = _with_marks(items, spans)
    return Rendered('<pre class="article-body stored">' + "".join(parts) + "</pre>", False, note)


def _positions(segs: Sequence[Any]) -> Iterable[tuple[Any, int]]:
    pos = 0
    for seg in segs:
        yield seg, pos
        pos += len(seg.text)


def render_article(body: str, spans: Iterable[Span]) -> Rendered:
    """``body`` rendered as Markdown with every span marked at its offsets (module doc), else as its
    stored text with the same marks. Spans outside ``0..len(body)`` or empty are ignored."""
    good = [s for s in spans if 0 <= s.start < s.end <= len(body)]
    if "\r" in body or "\0" in body:
        return _stored_text(body, good, "shown as stored: the text holds carriage returns or NUL characters, "
                                        "which Markdown rewrites")
    lines = _Lines(body)
    out = _Out()
    _blocks(_parser().parse(body), lines, out)
    for it in out.items:  # the guarantee the module doc states, checked rather than assumed
        if isinstance(it, _Piece) and it.exact and body[it.start:it.end] != it.text:
            return _stored_text(body, good, "shown as stored: the rendered text could not be placed")
    for s in good:
        if any(a < s.end and s.start < b for a, b in out.unplaced):
            return _stored_text(body, good, f"shown as stored: snippet {s.index + 1} touches Markdown whose "
                                            "rendered text cannot be placed at its offsets")
    parts, marked = _with_marks(out.items, good)
    missing = sorted(s.index for s in good if s.index not in marked)
    if missing:
        return _stored_text(body, good, f"shown as stored: snippet {missing[0] + 1} covers no whole run of "
                                        "rendered text (only Markdown markup, or part of an escape or entity)")
    return Rendered('<div class="article-body markdown">' + "".join(parts) + "</div>", True)


def render_inline(text: str) -> str:
    """One line of guidance as safe inline HTML: code spans, emphasis, ``http(s)``/``mailto`` links;
    everything else escaped (module doc)."""
    out = _Out()
    for tok in _parser().parseInline(text):
        _inline(tok.children or [], out)
    return "".join(x for x in out.items if isinstance(x, str))


def plain_inline(text: str) -> str:
    """One line of Markdown as the text a reader sees (code spans, emphasis and link markup removed)."""
    out: list[str] = []
    for tok in _parser().parseInline(text):
        for c in tok.children or []:
            if c.type in ("text", "text_special", "code_inline"):
                out.append(c.content)
            elif c.type in ("softbreak", "hardbreak"):
                out.append(" ")
    return "".join(out)
