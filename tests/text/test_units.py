"""Markdown blocks and sentence-sized units: exact offsets, a real parser's reading."""

from skillrag.text import blocks, plain, reading_units, table_rows, units


def test_units_are_exact_spans_without_list_markers_or_headings():
    body = "## Fees\n- Annual fee: $0.00\n1. Call us. Then wait e.g. a day.\n\nPlain text here!"
    got = units(body)
    assert [u.text for u in got] == [
        "Annual fee: $0.00",
        "Call us.",
        "Then wait e.g. a day.",
        "Plain text here!",
    ]
    assert all(body[u.start : u.end] == u.text for u in got)


def test_reading_units_follow_structure():
    body = ("# T\n\nIntro line one\ncontinues here.\n\n1. First step.\n2. Second step\n   wraps.\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n```\nlookup(id)\n```\n")
    got = reading_units(body)
    assert [u.text for u in got] == ["Intro line one\ncontinues here.", "1. First step.", "2. Second step\n   wraps.",
                                     "| a | b |", "| 1 | 2 |", "```\nlookup(id)\n```"]
    assert [u.kind for u in got] == ["paragraph", "item", "item", "header", "row", "code"]
    assert all(body[u.start : u.end] == u.text for u in got)
    assert reading_units("   \n") == []


def test_a_long_paragraph_or_item_is_read_sentence_by_sentence():
    body = "- First sentence here. Second one, e.g. this.\n\nA paragraph. It goes on.\n"
    assert [(u.text, u.kind) for u in reading_units(body, max_chars=20)] == [
        ("First sentence here.", "sentence"), ("Second one, e.g. this.", "sentence"),
        ("A paragraph.", "sentence"), ("It goes on.", "sentence")]
    assert [u.text for u in reading_units(body)] == ["- First sentence here. Second one, e.g. this.",
                                                     "A paragraph. It goes on."]


def test_table_rows_are_exact_with_their_header():
    body = (
        "Intro.\n\n| Card | Annual fee |\n|---|---|\n| Gold \\| Rewards Card | $120 |\n|  Silver  | none |\n"
    )
    rows = table_rows(body)
    assert [r.text for r in rows] == ["| Gold \\| Rewards Card | $120 |", "|  Silver  | none |"]
    for r in rows:
        assert body[r.start : r.end] == r.text and r.header == ("Card", "Annual fee")
        assert all(body[c.start : c.end] == c.text for c in r.cells)
    assert [c.text for c in rows[1].cells] == ["Silver", "none"]
    assert table_rows("No table | here.") == ()
    # a table row is one unit, whatever its cells hold; the header row is one too, the delimiter none
    got = units(body)
    assert [(u.kind, u.text) for u in got if u.kind != "sentence"] == [
        ("header", "| Card | Annual fee |"), ("row", "| Gold \\| Rewards Card | $120 |"), ("row", "|  Silver  | none |")]


def test_blocks_carry_line_maps_offsets_and_list_structure():
    body = ("# Title\n\nIntro line one\ncontinues here.\n\n1. Verify customer.\n2. Check this:\n   - sub a\n"
            "3. Use `x_y`.\n\n```\ncode()\n```\n\n> quoted\n\n---\n")
    got = blocks(body)
    assert [(b.kind, b.text) for b in got] == [
        ("heading", "# Title"), ("paragraph", "Intro line one\ncontinues here."), ("item", "Verify customer."),
        ("item", "Check this:"), ("item", "sub a"), ("item", "Use `x_y`."), ("code", "```\ncode()\n```"),
        ("paragraph", "quoted"), ("rule", "---")]
    assert all(body[b.start : b.end] == b.text for b in got)
    heading, para, one, two, sub = got[:5]
    assert (heading.level, heading.title, para.line, para.end_line) == (1, "Title", 2, 4)
    assert (one.number, one.depth, sub.number, sub.depth) == (1, 1, None, 2)
    assert two.item_lines == (6, 8) and sub.line < two.item_lines[1]


def test_windows_line_breaks_keep_offsets_exact():
    body = "# Fees\r\n\r\nA fee of $5.00 applies. It is waived.\r\n- Item one\r\n"
    got = units(body)
    assert [u.text for u in got] == ["A fee of $5.00 applies.", "It is waived.", "Item one"]
    assert all(body[u.start : u.end] == u.text for u in got)


def test_plain_removes_markup_for_reading():
    assert plain("- **Annual fee**: see [the table](https://x.example) and `fee_code`") == \
        "Annual fee: see the table and fee_code"
