"""What a hit tells a reader: relevance 0–1, BM25 and dense ranks, the best-matching passage as the
preview (never cut inside a word) with its section; filters by title and id prefix; ranked pages and
one page read over the wiki backend."""

from __future__ import annotations

import re

import pytest

from skillrag.errors import UserError
from skillrag.search import PageHit, SearchFilters, build_index, open_retriever
from skillrag.search._passages import PREVIEW_CHARS, best_passage
from skillrag.search._ranked import relative_scores
from skillrag.search.testing import FakePage, FakePageSource
from skillrag.text import Analyzer

from .conftest import make_workspace

LONG = (
    "# Premium card\n\nThe premium card is our best card for people who travel. It has a metal body, a "
    "concierge line and lounge access in most airports of the world, and it is issued within ten days.\n\n"
    "## Eligibility\n\nCustomers need a verified account older than six months.\n\n"
    "## Fees\n\n- Annual fee: 450 dollars, charged on the card anniversary.\n"
    "- Foreign transaction fee: none.\n\n"
    "## Fees\n\nLate payment fee: 40 dollars.\n"
)
FILES = {
    "cards/premium.md": LONG,
    "cards/basic.md": "# Basic card\n\nThe basic card has no annual fee and no lounge access.\n",
    "accounts/close_account.md": "# Close a checking account\n\nTo close a checking account the balance must be zero.\n",
    "accounts/wire.md": "# Send an international wire\n\nWires abroad need the SWIFT code and take two days.\n",
}


@pytest.fixture
def hws(tmp_path, emb):
    ws = make_workspace(tmp_path, files=FILES)
    build_index(ws, embedder=emb)
    return ws


def test_preview_is_the_matching_passage_with_its_section(hws, emb):
    hit = open_retriever(hws, embedder=emb).search("annual fee premium card dollars", k=1)[0]
    assert hit.article_id == "premium"
    # not the article's first ~200 characters: the passage that states the fee, and its section
    assert hit.preview.startswith("- Annual fee: 450 dollars") and hit.section == "Fees"
    assert "Foreign transaction fee: none." in hit.preview  # the next passage of the section, as it fits
    assert "Late payment" not in hit.preview  # another section (a repeated heading) is not joined


def test_relevance_is_the_ordering_score_relative_to_the_first_and_ties_only_with_it():
    """Issue 22: a clamp ("never above the hit before it") over a rescaled score gave several hits 1.0 in one
    result (12 of 51 τ² results). Relevance is now the ordering score itself, relative to the first hit's."""
    assert relative_scores([], 0.0) == []
    assert relative_scores([0.03, 0.015, 0.01], 0.0) == [1.0, 0.5, 0.333]
    assert relative_scores([0.5, 0.2, -0.2], -1.0) == [1.0, 0.8, 0.533]  # a cosine's zero is -1
    fused = [1 / 61 + 1 / 70, 1 / 70 + 1 / 61, 1 / 66 + 1 / 68, 1 / 67 + 1 / 67]  # the first two tie
    rel = relative_scores(fused, 0.0)
    assert rel[0] == rel[1] == 1.0
    assert rel[2] > rel[3] and round(rel[2], 3) == round(rel[3], 3)  # 3 decimals would show them as one
    # found on τ²: the first of two close scores rounded down to 3 decimals showed the same as the second
    assert relative_scores([1.0, 0.92422, 0.92401], 0.0) == [1.0, 0.9242, 0.924]
    close = [10.0, 9.9996, 9.9995, 9.9995, 5.0]
    got = relative_scores(close, 0.0)
    assert got[0] == 1.0 and got[1] > got[2] == got[3] > got[4] == 0.5


def test_relevance_spreads_and_ranks_are_per_retriever(hws, emb):
    hits = open_retriever(hws, embedder=emb).search("annual fee card lounge", k=4)
    assert hits[0].relevance == 1.0
    rel = [h.relevance for h in hits]
    assert rel == sorted(rel, reverse=True) and rel[-1] < 0.9  # the hit only dense ranked: about half the fused score
    unmatched = [h for h in hits if h.bm25_rank is None]
    assert unmatched and all(h.dense_rank for h in unmatched)  # ranked by dense only, no shared term
    assert sorted(h.bm25_rank for h in hits if h.bm25_rank) == [1, 2]


def test_filters_by_title_prefix_and_id_prefix(hws, emb):
    r = open_retriever(hws, embedder=emb)
    by_title = r.search("card fee", k=10, filters=SearchFilters(title_prefixes=["premium  CARD"]))
    assert [h.article_id for h in by_title] == ["premium"]  # case-insensitive, whitespace collapsed
    by_id = r.search("card account wire", k=10, filters=SearchFilters(id_prefixes=["c", "w"]))
    assert {h.article_id for h in by_id} == {"close_account", "wire"}
    assert r.search("card", k=10, filters=SearchFilters(id_prefixes=["C"])) == []  # ids are case-sensitive
    both = SearchFilters(source_tags=["cards"], title_prefixes=["basic"])
    assert [h.article_id for h in r.search("card", k=10, filters=both)] == ["basic"]
    assert SearchFilters(title_prefixes=["x"], id_prefixes=["y"]).describe() == {
        "title_prefixes": ["x"], "id_prefixes": ["y"]}


def test_title_contains_finds_a_word_anywhere_in_the_title(hws, emb):
    """Internal articles are titled "Internal: …" or "… (Internal)": a prefix finds only the first kind."""
    suffix = SearchFilters(title_contains=["internal"])
    assert suffix.accepts("", "", "Wire limits  (INTERNAL)") and suffix.accepts("", "", "Internal: wire limits")
    assert not SearchFilters(title_prefixes=["Internal:"]).accepts("", "", "Wire limits (Internal)")
    assert not suffix.accepts("", "", "Wire limits") and not suffix.is_empty()
    r = open_retriever(hws, embedder=emb)
    cards = r.search("fee account", k=10, filters=SearchFilters(title_contains=["CARD", "zzz"]))
    assert {h.article_id for h in cards} == {"premium", "basic"}  # any of the values, any case
    both = SearchFilters(title_contains=["card"], title_prefixes=["basic"])  # every filter given must pass
    assert [h.article_id for h in r.search("card", k=10, filters=both)] == ["basic"]
    assert SearchFilters(title_contains=["a  b"]).describe() == {"title_contains": ["a  b"]}


def test_long_passage_is_cut_at_word_boundaries_around_the_match():
    words = " ".join(f"word{i}" for i in range(120))
    body = f"{words} the refund window is 90 days {words}"
    an = Analyzer()
    preview, section = best_passage(body, [], {t: 1.0 for t in an.terms("refund window")}, an.terms)
    assert "refund window is 90 days" in preview and section == ""
    assert preview.startswith("…") and preview.endswith("…") and len(preview) <= PREVIEW_CHARS
    inner = preview.strip("…")
    assert inner == inner.strip() and all(re.fullmatch(r"word\d+|the|refund|window|is|90|days", w)
                                          for w in inner.split())  # whole words only


# -- pages over the wiki backend ----------------------------------------------------------------------
PAGES = [
    FakePage("cards-entity", "Cards (all products)", "card premium basic annual fee lounge",
             ["premium", "basic"], kind="entity", intent="Every card product and what it costs."),
    FakePage("accounts", "Accounts", "close account wire", ["close_account", "wire"], intent="Accounts."),
]


def test_search_pages_ranks_pages_with_their_articles(hws, emb):
    src = FakePageSource(PAGES)
    build_index(hws, backend="wiki", embedder=emb, pages=src)
    r = open_retriever(hws, backend="wiki", embedder=emb, pages=src)
    pages = r.search_pages("annual fee of the premium card", k=2)
    assert isinstance(pages[0], PageHit) and pages[0].page_id == "cards-entity"
    assert pages[0].kind == "entity" and pages[0].intent == "Every card product and what it costs."
    assert [(a.id, a.title) for a in pages[0].articles] == [("premium", "Premium card"), ("basic", "Basic card")]
    assert pages[0].relevance == 1.0 and all(0 <= p.relevance <= 1 for p in pages)
    only_basic = r.search_pages("annual fee card", k=2, filters=SearchFilters(id_prefixes=["basic"]))
    assert [(p.page_id, [a.id for a in p.articles]) for p in only_basic] == [("cards-entity", ["basic"])]
    hits = r.search("annual fee of the premium card", k=2)
    assert hits[0].page_ids == ("cards-entity",) and hits[0].section == "Fees"
    view = r.read_page("cards-entity")
    assert view.title == "Cards (all products)" and [a.id for a in view.articles] == ["premium", "basic"]
    with pytest.raises(UserError, match="no navigation page 'nope'"):
        r.read_page("nope")
    assert open_retriever(hws, embedder=emb).search_pages("card", k=3) == []  # direct backend: no pages


def test_read_page_from_a_real_layer(hws, emb):
    from skillrag.search import read_page
    from skillrag.wiki import build_wiki, load_pages

    build_wiki(hws, builder="extractive")
    page = load_pages(hws)[0]
    view = read_page(hws, page.id)
    assert view.page_id == page.id and [a.id for a in view.articles] == page.article_ids()
    assert view.to_dict()["procedure"] == [
        {"text": s.text, "links": [{"type": ln.type.value, "article_id": ln.article_id} for ln in s.links]}
        for s in page.steps]
