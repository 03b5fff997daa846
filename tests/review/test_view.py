"""Guidance steps linked to snippets, and article bodies cut into marked segments."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillrag.review import Span, link_snippets, segments, split_guidance
from skillrag.review.view import stated_steps

GUIDANCE = """Guidance for: a lost card

1. Verify the customer with `verify_identity`.
2) Freeze the card in the app before anything else.
3. Order a replacement; premium accounts pay no fee.

Check each step against the quoted passages."""


def test_split_guidance_numbers_steps_and_keeps_plain_lines():
    lines = split_guidance(GUIDANCE)
    assert [ln.number for ln in lines] == [None, 1, 2, 3, None]
    assert lines[2].text.startswith("2) Freeze")


def test_stated_steps_reads_the_why():
    assert stated_steps("Backs step 3 (Lost cards > Steps): rule.") == [3]
    assert stated_steps("supports steps 2 and 4") == [2, 4]
    assert stated_steps("Steps 2-4, then step 7") == [2, 3, 4, 7]
    assert stated_steps("steps 1, 5 & 6") == [1, 5, 6]
    assert stated_steps("the fee table") == []


def test_link_snippets_stated_then_quoted_then_overlap():
    lines = split_guidance(GUIDANCE)
    snippets = [
        {"text": "Freeze the card in the app", "why": "Backs step 2."},           # stated
        {"text": "premium accounts pay no fee", "why": "the fee rule"},           # quoted inside step 3
        {"text": "Verify customer identity with verify_identity", "why": "id"},   # overlap with step 1
        {"text": "Wire transfers need a second approver.", "why": "unrelated"},   # nothing
        {"text": "Freeze the card in the app", "why": "Backs step 9."},           # step 9 absent -> quoted
        "not a snippet",
    ]
    unlinked = link_snippets(lines, snippets)
    by_number = {ln.number: ln for ln in lines if ln.number}
    assert by_number[2].snippets == [0, 4] and by_number[2].how == {0: "stated", 4: "quoted"}
    assert by_number[3].snippets == [1] and by_number[3].how[1] == "quoted"
    assert by_number[1].snippets == [2] and by_number[1].how[2] == "overlap"
    assert unlinked == [3, 5]


def test_segments_cut_overlapping_spans_without_nesting():
    body = "abcdefghij"
    segs = segments(body, [Span(0, 2, 6), Span(1, 4, 8, "located"), Span(2, 20, 30)])
    assert "".join(s.text for s in segs) == body
    assert [(s.text, s.covers, s.opens, s.closes) for s in segs] == [
        ("ab", (), (), ()), ("cd", (0,), (0,), ()), ("ef", (0, 1), (1,), (0,)), ("gh", (1,), (), (1,)),
        ("ij", (), (), ())]
    assert segs[2].kinds == ("stored", "located")


@given(st.text(max_size=60), st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70)), max_size=6))
def test_segments_always_rebuild_the_body_and_cover_exactly_the_spans(body, pairs):
    spans = [Span(i, a, b) for i, (a, b) in enumerate(pairs)]
    segs = segments(body, spans)
    assert "".join(s.text for s in segs) == body
    pos = 0
    for s in segs:
        for sp in spans:
            inside = 0 <= sp.start < sp.end <= len(body) and sp.start <= pos and pos + len(s.text) <= sp.end
            assert (sp.index in s.covers) == (inside and bool(s.text))
        pos += len(s.text)


def test_the_review_page_and_the_save_warnings_share_one_linking_rule():
    from skillrag.review import view
    from skillrag.skill import links

    assert view.link_snippets is links.link_snippets and view.split_guidance is links.split_guidance


def test_lines_under_a_step_belong_to_it_and_bullets_are_steps_when_nothing_is_numbered():
    lines = split_guidance("Plan:\n1. Freeze the card.\n   - then order the replacement card at no fee\n2. Close.")
    snippets = [{"text": "Replacement cards are ordered at no fee.", "why": "fee rule"}]
    assert link_snippets(lines, snippets) == []
    assert lines[1].snippets == [0] and lines[1].how == {0: "overlap"}  # the sub-bullet's words count for step 1
    bullets = split_guidance("- Verify the customer.\n- Freeze the card in the app.")
    assert link_snippets(bullets, [{"text": "Freeze the card in the app", "why": "Backs step 2."}]) == []
    assert bullets[1].snippets == [0] and bullets[1].how == {0: "stated"}


V0 = """1. Check whether the SIM card is seated and not locked.
2. If Airplane Mode is ON, turn it off with `toggle_airplane_mode()`.
3. Restart the phone."""
V1 = """1. If Airplane Mode is ON, turn it off with `toggle_airplane_mode()`.
2. Check whether the SIM card is seated and not locked.
3. Restart the phone."""
SIM = {"text": "A SIM card that is not seated shows No SIM.", "why": "Backs step 1 (the SIM check)."}
AIR = {"text": "Airplane Mode turns every radio off.", "why": "Backs step 2."}


def test_a_why_names_a_step_of_the_guidance_it_was_written_for_never_a_number_of_another_version():
    from skillrag.skill.links import guidance_steps, link_steps

    # read against the version it was written for, "step 1" is step 1
    steps0 = guidance_steps(split_guidance(V0))
    assert link_steps(steps0, [SIM, AIR]) == []
    assert [st.snippets for st in steps0] == [[0], [1], []]
    # an edit swapped the first two steps: the SIM snippet follows its step to number 2
    steps1 = guidance_steps(split_guidance(V1))
    assert link_steps(steps1, [SIM, AIR], basis=[V0, V0]) == []
    assert [st.snippets for st in steps1] == [[1], [0], []]
    assert steps1[1].how == {0: "stated"}
    # without the basis the numbers would be read as this version's: the bug the basis fixes
    wrong = guidance_steps(split_guidance(V1))
    link_steps(wrong, [SIM, AIR])
    assert [st.snippets for st in wrong] == [[0], [1], []]


def test_a_step_reworded_by_the_edit_is_linked_by_the_other_rules():
    from skillrag.skill.links import guidance_steps, link_steps

    edited = V1.replace("Check whether the SIM card is seated and not locked.",
                        "Reseat the SIM card; a card that is not seated shows No SIM.")
    steps = guidance_steps(split_guidance(edited))
    # basis step 1 no longer exists as written: "step 1" says nothing here, the overlap links it
    assert link_steps(steps, [SIM], basis=[V0]) == []
    assert steps[1].snippets == [0] and steps[1].how == {0: "overlap"}
    assert steps[0].snippets == []


def test_steps_with_the_same_first_line_are_matched_in_order():
    from skillrag.skill.links import guidance_steps, link_steps

    v0 = "1. Call the customer.\n2. Wait a day.\n3. Call the customer."
    v1 = "1. Wait a day.\n2. Call the customer.\n3. Call the customer."
    steps = guidance_steps(split_guidance(v1))
    link_steps(steps, [{"text": "Ring back within one business day.", "why": "step 3"}], basis=[v0])
    assert [st.snippets for st in steps] == [[], [], [0]]
