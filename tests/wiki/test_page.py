from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrag.errors import InvalidIdError, WorkspaceError
from skillrag.wiki.page import (
    Link,
    LinkType,
    Page,
    SourceRef,
    Step,
    check_page_id,
    parse_page,
    render_page,
    slugify,
)


def sample_page() -> Page:
    return Page(
        id="gold-card",
        title="Gold Card",
        intent="Helps a member understand and waive the Gold Card annual fee.",
        solves=("A member asks why they were charged an annual fee",),
        does_not_solve=("Disputes about merchant charges (see disputing a charge)",),
        steps=(
            Step(text="Check the balance against the waiver threshold.",
                 links=(Link(type=LinkType.eligibility, article_id="doc_cards_gold_001"),)),
            Step(text="Explain when the fee is billed.",
                 links=(Link(type=LinkType.fee, article_id="doc_cards_gold_001"),
                        Link(type=LinkType.policy, article_id="doc_cards_gold_003"))),
        ),
        sources=(SourceRef(id="doc_cards_gold_001", title="Gold Card: Annual Fee",
                           summary="The annual fee is $95; call waive_fee_1234 to waive it."),
                 SourceRef(id="doc_cards_gold_003", title="Gold Card — Rewards"),
                 SourceRef(id="manual#roaming-and-travel", title="Manual: Roaming", summary="Turn roaming on.")),
        kind="entity",
        variant="full",
        builder="llm",
        model="function:scripted",
        built_from={"doc_cards_gold_001": "ab" * 32, "doc_cards_gold_003": "cd" * 32},
    )


def test_render_then_parse_round_trips_and_reads_as_markdown():
    page = sample_page()
    text = render_page(page)
    assert "## Does not solve" in text and "[eligibility: doc_cards_gold_001]" in text
    assert "- doc_cards_gold_003 — Gold Card — Rewards\n" in text
    assert "- doc_cards_gold_001 — Gold Card: Annual Fee — _The annual fee is $95; call waive_fee_1234 to waive it._" \
        in text
    assert "\nkind: entity\n" in text
    assert parse_page(text) == page
    assert render_page(parse_page(text)) == text


def test_interface_search_text_and_article_ids_in_page_order():
    page = sample_page().model_copy(update={"pooled_links": (Link(type="tool", article_id="doc_x_009"),)})
    text = page.search_text()
    for part in ("Gold Card", "waive the Gold Card annual fee", "merchant charges", "waiver threshold"):
        assert part in text
    assert "doc_cards_gold_001" not in text  # links are not search text
    assert page.article_ids() == ["doc_cards_gold_001", "doc_cards_gold_003", "doc_x_009", "manual#roaming-and-travel"]


def test_a_page_without_a_kind_is_a_topic_and_an_unknown_kind_is_refused():
    text = render_page(sample_page()).replace("kind: entity\n", "")
    assert parse_page(text).kind == "topic"
    with pytest.raises(WorkspaceError, match="kind"):
        parse_page(render_page(sample_page()).replace("kind: entity", "kind: product"))


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
                min_size=1, max_size=40).filter(lambda s: s.strip() and s.strip() != "_(none)_")
_aid = st.from_regex(r"\A[a-z][a-z0-9_]{0,12}\Z")


@settings(max_examples=60, deadline=None)
@given(
    title=_text, intent=st.text(max_size=60), solves=st.lists(_text, max_size=3),
    steps=st.lists(st.tuples(_text, st.lists(st.tuples(st.sampled_from(list(LinkType)), _aid), max_size=3)),
                   max_size=4),
    sources=st.lists(st.tuples(_aid, st.text(max_size=20), st.text(max_size=30)), max_size=3),
    kind=st.sampled_from(["entity", "aspect", "topic"]),
)
def test_round_trip_property(title, intent, solves, steps, sources, kind):
    try:
        page = Page(
            id="p-1", title=title, kind=kind, intent=intent, solves=tuple(solves),
            steps=tuple(Step(text=t, links=tuple(Link(type=k, article_id=a) for k, a in ls)) for t, ls in steps),
            sources=tuple(SourceRef(id=a, title=t, summary=m) for a, t, m in sources),
        )
    except ValueError:
        return  # e.g. a title made only of link syntax; the model refuses it, which is fine
    assert parse_page(render_page(page)) == page


def test_a_title_that_is_only_markup_is_refused_not_written_empty():
    # found by the round-trip property: "#" used to become an empty title that could not be read back
    for title in ("#", "## ", "[fee: doc_x_001]"):
        with pytest.raises(ValueError, match="no text"):
            Page(id="p-1", title=title)
    assert Page(id="p-1", title="# Gold card").title == "Gold card"


@pytest.mark.parametrize(
    "text, msg",
    [
        ("no front matter at all\n## Intent\n\nx\n", "id"),
        ("---\nid: [unclosed\n---\n", "bad front matter"),
        ("---\nid: ok\ntitle: T\n---\n## Weird\n\n- x\n", "unknown section"),
        ("---\nid: ok\ntitle: T\n---\n## Procedure\n\nnot a list\n", "expected a list item"),
        ("---\nid: Bad_Id\ntitle: T\n---\n", "not a valid page id"),
        ("---\nid: ok\ntitle: T\n---\n## Sources\n\n- ../etc/passwd\n", "source"),
    ],
)
def test_malformed_pages_give_one_clear_error(text, msg):
    with pytest.raises(WorkspaceError, match=msg):
        parse_page(text, where="wiki/pages/x.md")


def test_page_ids_and_slugs():
    assert slugify("Gold Card: Annual Fee (2)") == "gold-card-annual-fee-2"
    assert slugify("???") == "page"
    assert check_page_id("a-b-1") == "a-b-1"
    for bad in ("A", "a--b", "-a", "a/b", "../x", ""):
        with pytest.raises(InvalidIdError):
            check_page_id(bad)


def test_the_package_exports_what_it_lists():
    from skillrag import corpus, wiki

    for pkg in (wiki, corpus):
        assert sorted(pkg.__all__) == sorted(set(pkg.__all__))
        assert all(hasattr(pkg, name) for name in pkg.__all__)
    assert {"Family", "find_families", "Aspect", "find_aspects", "PAGE_KINDS"} <= set(wiki.__all__)
    assert "split_document" in corpus.__all__


def _link(aid: str) -> Link:
    return Link(type=LinkType.reference, article_id=aid)


def test_within_keeps_only_what_the_inside_articles_give():
    """The page reduction every scoped surface uses (issue 21, class 1)."""
    page = Page(
        id="gold-card", title="Gold Card", intent="Mixed from a, b and x.", solves=("a", "x"),
        does_not_solve=("from x",),
        steps=(Step(text="from a", links=(_link("a"),)), Step(text="from x", links=(_link("x"),)),
               Step(text="from a and x", links=(_link("a"), _link("x"))), Step(text="from no one")),
        pooled_links=(_link("b"), _link("x")),
        sources=(SourceRef(id="a", title="A", summary="a's key line"), SourceRef(id="x", title="X")),
        built_from={"a": "h1", "x": "h2", "b": "h3"},
    )
    assert page.within({"a", "b", "x"}) is page and page.within({"a", "b", "x", "z"}) is page
    assert page.within({"z"}) is None and page.within(set()) is None
    part = page.within({"a", "b"})
    assert (part.id, part.title, part.kind) == ("gold-card", "Gold Card", "topic")
    assert (part.intent, part.solves, part.does_not_solve) == ("", (), ())  # not attributable: dropped
    assert [s.text for s in part.steps] == ["from a"]  # a step counts only if every link is inside
    assert [ln.article_id for ln in part.pooled_links] == ["b"] and [s.id for s in part.sources] == ["a"]
    assert part.sources[0].summary == "a's key line" and part.built_from == {"a": "h1", "b": "h3"}
    assert part.article_ids() == ["a", "b"]
    only_shared = Page(id="p", title="P", steps=(Step(text="a and x", links=(_link("a"), _link("x"))),))
    assert only_shared.within({"a"}) is None  # nothing left that is a's alone
    assert parse_page(render_page(part)) == part  # a reduced page is still a valid page
