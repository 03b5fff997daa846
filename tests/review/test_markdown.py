"""Articles rendered as Markdown with every snippet marked at its stored offsets: a mark never moves
onto other text, whatever the Markdown (``skillrag.review.markdown``)."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from skillrag.review import Span
from skillrag.review.markdown import plain_inline, render_article, render_inline


class _Runs(HTMLParser):
    """Every element that carries ``data-s`` / ``data-src``: (tag, attrs, text), and all tags seen."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.runs: list[tuple[str, dict, str]] = []
        self.tags: list[tuple[str, dict]] = []
        self._open: list[tuple[str, dict, list[str]] | None] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag in ("br", "hr"):
            return
        self._open.append((tag, a, []) if ("data-s" in a or "data-src" in a) else None)

    def handle_endtag(self, tag):
        if tag in ("br", "hr"):
            return
        top = self._open.pop()
        if top is not None:
            self.runs.append((top[0], top[1], "".join(top[2])))

    def handle_data(self, data):
        for o in self._open:
            if o is not None:
                o[2].append(data)


def runs_of(markup: str) -> _Runs:
    p = _Runs()
    p.feed(markup)
    return p


def check_marks(body: str, spans: list[Span], markup: str) -> _Runs:
    """The invariants every rendering keeps (module doc of skillrag.review.markdown)."""
    p = runs_of(markup)
    by_index = {sp.index: sp for sp in spans}
    for tag, a, text in p.runs:
        if "data-s" in a:  # an exact run: its text is the body at its offset
            s = int(a["data-s"])
            assert body[s:s + len(text)] == text, (tag, a, text)
            start, end = s, s + len(text)
        else:
            start, end = map(int, a["data-src"].split("-"))
        if tag == "mark":  # a mark lies inside every snippet it names, never beside it
            for n in a["data-snippets"].split():
                sp = by_index[int(n) - 1]
                assert sp.start <= start and end <= sp.end, (a, text, sp)
        else:  # an unmarked run lies outside every snippet (or only partly inside one, when atomic)
            for sp in spans:
                if "data-s" in a:
                    assert end <= sp.start or sp.end <= start, (a, text, sp)
    for sp in spans:
        if 0 <= sp.start < sp.end <= len(body):
            assert sum(1 for t, a in p.tags if a.get("id") == f"mark-{sp.index + 1}") == 1
    return p


BODY = """# Replacing a card

A lost card is **frozen at once**; call `freeze_card_4410` and tell the customer.
A premium account pays no fee &amp; gets express delivery.

| Account | Fee |
|---|--:|
| Standard | $25 |
| Premium | $0 |

1. Verify the customer.
2. Order the card with `order_card()`.
   It arrives in 5 days.

> Never read the card number back.
"""


def _span(i: int, text: str, kind: str = "stored") -> Span:
    start = BODY.index(text)
    return Span(i, start, start + len(text), kind)


def test_markdown_is_rendered_and_each_snippet_marked_at_its_offsets():
    spans = [_span(0, "A lost card is **frozen at once**; call `freeze_card_4410`"),
             _span(1, "| Standard | $25 |"),
             _span(2, "Order the card with `order_card()`.\n   It arrives in 5 days.", "located"),
             _span(3, "no fee &amp; gets")]
    r = render_article(BODY, spans)
    assert r.markdown and r.note == ""
    p = check_marks(BODY, spans, r.html)
    assert '<h4 class="md-h1">' in r.html and "<strong>" in r.html and "<table>" in r.html and "<ol>" in r.html
    assert "**" not in "".join(t for _, _, t in p.runs) and "`" not in "".join(t for _, _, t in p.runs)
    marks = {n: [t for tag, a, t in p.runs if tag == "mark" and n in a["data-snippets"].split()] for n in "1234"}
    assert "".join(marks["1"]) == "A lost card is frozen at once; call freeze_card_4410"
    assert "".join(marks["2"]) == "Standard$25"  # the cells, not the pipes
    assert "".join(marks["3"]).split() == ["Order", "the", "card", "with", "order_card().", "It", "arrives", "in", "5", "days."]
    assert "".join(marks["4"]) == "no fee & gets"  # the entity is marked whole
    assert 'class="located"' in r.html  # a mark found again in a changed article stays dashed


def test_an_unplaceable_mark_falls_back_to_the_stored_text_never_to_other_text():
    body = "| a | b |\n|---|---|\n| x \\| y | z |\n\nAfter the table."
    inside = body.index("x \\| y")
    r = render_article(body, [Span(0, inside, inside + 6)])
    assert not r.markdown and "snippet 1 touches Markdown" in r.note
    p = check_marks(body, [Span(0, inside, inside + 6)], r.html)
    assert "".join(t for _, _, t in p.runs) == body  # the stored text, whole
    # the same table with the mark elsewhere is rendered
    after = body.index("After")
    assert render_article(body, [Span(0, after, after + 9)]).markdown
    # a snippet of markup only (the rule line of a table) cannot be shown rendered
    rule = body.index("|---")
    r = render_article(body, [Span(0, rule, rule + 9)])
    assert not r.markdown and "only Markdown markup" in r.note
    # carriage returns would move every later offset: shown as stored
    assert not render_article("a\r\nb *c*", [Span(0, 0, 3)]).markdown


def test_no_raw_html_images_or_unsafe_links_from_an_article():
    body = ('<script>alert(1)</script>\n\nText <b onclick="x()">bold</b> ![pic](http://evil.example/p.png) '
            '[bad](javascript:alert(1)) [good](https://example.org/a?b=1&c=2 "t") <img src=x onerror=y>')
    r = render_article(body, [Span(0, body.index("Text"), body.index("Text") + 10)])
    tags = {t for t, _ in runs_of(r.html).tags}
    assert tags <= {"div", "p", "span", "mark", "a"}
    assert "<script" not in r.html and "<b " not in r.html and "<img" not in r.html
    assert "&lt;script&gt;" in r.html and "[bad](javascript:alert(1))" in r.html  # shown as the text it is
    anchors = [a for t, a in runs_of(r.html).tags if t == "a" and "href" in a and not a["href"].startswith("#")]
    assert [a["href"] for a in anchors] == ["http://evil.example/p.png", "https://example.org/a?b=1&c=2"]
    assert all(a["rel"] == "nofollow noopener noreferrer" and set(a) == {"href", "rel"} for a in anchors)
    check_marks(body, [Span(0, body.index("Text"), body.index("Text") + 10)], r.html)


def test_guidance_lines_render_code_and_escape_the_rest():
    assert render_inline("2. Turn it off with `toggle_airplane_mode()` <b>now</b>") == (
        "2. Turn it off with <code>toggle_airplane_mode()</code> &lt;b&gt;now&lt;/b&gt;")
    assert plain_inline("Call `verify_identity` **first**, then [the form](https://x.org).") == (
        "Call verify_identity first, then the form.")


_PIECES = st.sampled_from([
    "word", "two words", " ", "\n", "\n\n", "*", "**", "_", "`", "``", "\\", "\\*", "&amp;", "&#35;", "#", "# ",
    "- ", "1. ", "> ", "    ", "|", "| a |", "\n|---|\n", "[", "](http://x.org)", "]", "<", ">", "<http://a.b>",
    "~~", "```", "\t", "x", "$25", "é", "-", "=", "](u 'x y')", " y", "&lt;", "[r]", "\n[r]: http://r.org\n",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join),
       st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40)), max_size=4))
def test_marks_never_shift_whatever_the_markdown(body, raw_spans):
    spans = [Span(i, a, a + n) for i, (a, n) in enumerate(raw_spans)]
    r = render_article(body, spans)
    good = [s for s in spans if 0 <= s.start < s.end <= len(body)]
    p = check_marks(body, good, r.html)
    if not r.markdown:
        assert "".join(t for _, _, t in p.runs) == body
