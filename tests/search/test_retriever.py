"""Searching: modes, hits, filters, bad queries, and the wiki backend over a fake navigation layer."""

import pytest

from skillrag.errors import ConfigError, EmptyInputError, IndexStateError, UserError
from skillrag.search import Hit, SearchFilters, build_index, open_retriever
from skillrag.search.testing import FakePage, FakePageSource


@pytest.fixture
def built(ws, emb):
    build_index(ws, embedder=emb)
    return ws


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_every_mode_finds_the_obvious_article(built, emb, mode):
    hits = open_retriever(built, mode=mode, embedder=emb).search("close my checking account balance", k=3)
    assert hits and isinstance(hits[0], Hit)
    assert hits[0].article_id == "close_account"
    assert hits[0].title == "Close a checking account"
    assert hits[0].preview == "To close a checking account the balance must be zero."  # the passage, no heading
    assert hits[0].section == "Close a checking account"
    assert hits[0].page_ids == () and hits[0].relevance == 1.0
    assert [h.relevance for h in hits] == sorted((h.relevance for h in hits), reverse=True)
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    if mode != "dense":
        assert hits[0].bm25_rank == 1
    if mode != "bm25":
        assert hits[0].dense_rank is not None and hits[0].dense_rank >= 1
    assert (hits[0].bm25_rank is None) == (mode == "dense") and (hits[0].dense_rank is None) == (mode == "bm25")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_bm25_returns_only_matching_articles_and_hybrid_scores_are_rrf(built, emb):
    hits = open_retriever(built, mode="bm25", embedder=emb).search("swift", k=10)
    assert [h.article_id for h in hits] == ["wire"]
    hybrid = open_retriever(built, mode="hybrid", embedder=emb).search("swift", k=10)
    assert len(hybrid) == 5
    assert hybrid[0].article_id == "wire"
    assert hybrid[0].score <= 2 / 61 + 1e-12  # at most first in both rankings, k = 60


def test_filters_by_tag_and_path_prefix(built, emb):
    r = open_retriever(built, embedder=emb)
    cards = r.search("card account", k=10, filters=SearchFilters(source_tags=["cards"]))
    assert {h.article_id for h in cards} == {"lost_card", "card_fees"}
    pref = r.search("account", k=10, filters=SearchFilters(path_prefixes=["open_"]))
    assert [h.article_id for h in pref] == ["open_savings"]
    both = r.search("account", k=10, filters=SearchFilters(source_tags=["cards"], path_prefixes=["open_"]))
    assert both == []
    assert len(r.search("account", k=10, filters=SearchFilters())) == 5


def test_empty_query_and_bad_k(built, emb):
    r = open_retriever(built, embedder=emb)
    for q in ("", "   \n"):
        with pytest.raises(EmptyInputError, match="empty query"):
            r.search(q)
    with pytest.raises(UserError, match="k must be"):
        r.search("wire", k=0)


def test_query_of_stop_words_only_still_answers_in_hybrid(built, emb):
    assert open_retriever(built, mode="bm25", embedder=emb).search("the of and") == []
    assert len(open_retriever(built, mode="hybrid", embedder=emb).search("the of and", k=2)) == 2


def test_long_queries_are_capped_by_idf(built, emb):
    built.config.search.max_query_terms = 2
    r = open_retriever(built, mode="bm25", embedder=emb)
    ids = r.query_terms("account account card swift abroad")
    vocab = {v: k for k, v in r.vocab.items()}
    assert sorted({vocab[i] for i in ids}) == ["abroad", "swift"]
    built.config.search.max_query_terms = 100
    ids = open_retriever(built, mode="bm25", embedder=emb).query_terms("account account card")
    assert len(ids) == 3  # repeats kept: query term frequency counts


def test_pooled_and_truncated_dense_queries(built, emb):
    r = open_retriever(built, mode="dense", embedder=emb)
    long_query = ("wire abroad swift " * 200).strip()
    v = r.query_vector(long_query)
    assert v.shape == (64,) and abs(float((v**2).sum()) - 1) < 1e-5
    built.config.search.dense_query = "truncate"
    assert open_retriever(built, mode="dense", embedder=emb).search(long_query, k=1)[0].article_id == "wire"


def test_select_policy_keeps_the_rarest_sentences_within_the_budget(built, emb):
    r = open_retriever(built, mode="dense", embedder=emb)
    assert r.settings.dense_query == "select"
    short = "Hello. My SWIFT wire abroad is late."
    assert r.select_sentences(short, 160) == short  # fits: embedded whole
    filler = "I would like some help with my account please today."  # common words: low idf
    long_query = " ".join([filler] * 3 + ["My SWIFT wire abroad has not arrived yet."] + [filler] * 3
                          + ["Ok.", "The platinum card annual fee looks wrong."])
    # the HashEmbedder has no tokenizer: the budget counts words
    kept = r.select_sentences(long_query, 20)
    assert kept == "My SWIFT wire abroad has not arrived yet. The platinum card annual fee looks wrong."
    assert len(kept.split()) <= 20
    assert r.select_sentences(long_query, 10) == "My SWIFT wire abroad has not arrived yet."
    # a budget smaller than any sentence still keeps the best one
    assert r.select_sentences(long_query, 2) == "My SWIFT wire abroad has not arrived yet."
    built.config.search.max_query_tokens = 10
    assert open_retriever(built, mode="dense", embedder=emb).search(long_query, k=1)[0].article_id == "wire"
    assert emb.texts_embedded[-1] == "My SWIFT wire abroad has not arrived yet."


def test_onnx_token_counts_cover_the_whole_text(built):
    from skillrag.errors import EmbedderError
    from skillrag.search.embedders import get_embedder

    try:
        e = get_embedder("minilm-int8")
    except EmbedderError as exc:  # pragma: no cover - the default model ships with the dev install
        pytest.skip(str(exc))
    long_text = "word " * 400
    assert e.token_counts(["hello world", long_text]) == [4, 402]  # [CLS] + 2 + [SEP]; no truncation


def test_unknown_backend_or_mode(built, emb):
    with pytest.raises(ConfigError, match="unknown search backend"):
        open_retriever(built, backend="web", embedder=emb)
    with pytest.raises(ConfigError, match="unknown search mode"):
        open_retriever(built, mode="fuzzy", embedder=emb)


# -- wiki backend ---------------------------------------------------------------------------------
PAGES = [
    FakePage("p-close", "Closing accounts", "close an account, balance zero, closing checking",
             ["close_account", "wire"]),
    FakePage("p-cards", "Card problems", "lost card, freeze card, replacement, card fees",
             ["lost_card", "card_fees", "close_account"]),
    FakePage("p-save", "Savings", "open savings interest", ["open_savings"]),
]


def test_wiki_without_a_layer_says_so(built, emb):
    none = FakePageSource(None)
    with pytest.raises(IndexStateError, match=r"no navigation layer.*skillrag wiki build"):
        build_index(built, backend="wiki", embedder=emb, pages=none)
    with pytest.raises(IndexStateError, match=r"no navigation layer.*skillrag wiki build"):
        open_retriever(built, backend="wiki", embedder=emb, pages=none)


@pytest.mark.parametrize("order", ["page", "fused"])
def test_wiki_ranks_pages_then_dereferences_their_articles(built, emb, order):
    built.config.search.wiki_order = order
    src = FakePageSource(PAGES)
    report = build_index(built, backend="wiki", embedder=emb, pages=src)
    assert report.items == 3
    r = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src)
    hits = r.search("close checking account balance", k=10)
    assert [(h.article_id, h.page_ids) for h in hits] == [("close_account", ("p-close",)), ("wire", ("p-close",))]
    assert hits[1].title == "Send an international wire"
    if order == "page":  # both carry the score of their page
        assert hits[0].score == hits[1].score
    else:  # close_account: first page and first article; wire: first page, no BM25 match of its own
        w = built.config.search.wiki_article_weight
        assert hits[0].score == pytest.approx((1 + w) / 61) and hits[1].score == pytest.approx(1 / 61)
    both = r.search("closing checking freeze replacement", k=10)  # both pages cite close_account
    ids = [h.article_id for h in both]
    assert len(ids) == len(set(ids)) == 4  # de-duplicated
    first = both[0].page_ids[0]
    second = "p-cards" if first == "p-close" else "p-close"
    assert {h.article_id: h for h in both}["close_account"].page_ids == (first, second)
    assert r.search("closing checking freeze replacement", k=1) == both[:1]
    cards = r.search("closing checking freeze replacement", k=10, filters=SearchFilters(source_tags=["cards"]))
    assert {h.article_id for h in cards} == {"lost_card", "card_fees"}


# a page that matches the query best but cites the wrong articles, and a weaker page citing the right one
TRAP = [
    FakePage("p-trap", "Wire swift abroad", "wire wire swift abroad abroad international",
             ["lost_card", "card_fees", "open_savings"]),
    FakePage("p-wire", "Transfers", "international transfers", ["wire"]),
    FakePage("p-close", "Closing accounts", "close an account, balance zero", ["close_account"]),
]


def test_fused_order_lifts_a_relevant_article_above_a_wrong_page(built, emb):
    src = FakePageSource(TRAP)
    query = "swift wire abroad international"
    built.config.search.wiki_order = "page"
    build_index(built, backend="wiki", embedder=emb, pages=src)
    plain = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src).search(query, k=10)
    # page order: the trap page ranks first, so its three articles fill the top 3
    assert [h.article_id for h in plain] == ["lost_card", "card_fees", "open_savings", "wire"]
    built.config.search.wiki_order = "fused"
    fused = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src).search(query, k=10)
    # wire: page rank 2 + article rank 1 beats page rank 1 alone; the trap's articles keep their cited
    # order (no BM25 match of their own, equal scores, tie broken by page rank then article rank)
    assert [h.article_id for h in fused] == ["wire", "lost_card", "card_fees", "open_savings"]
    w = built.config.search.wiki_article_weight
    assert fused[0].score == pytest.approx(1 / 62 + w / 61) and fused[0].page_ids == ("p-wire",)
    assert [h.score for h in fused[1:]] == pytest.approx([1 / 61] * 3)
    assert all(h.page_ids == ("p-trap",) for h in fused[1:])
    assert "close_account" not in {h.article_id for h in fused}  # its page does not match: not reached
    cards = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src).search(
        query, k=10, filters=SearchFilters(source_tags=["cards"]))
    assert [h.article_id for h in cards] == ["lost_card", "card_fees"]


@pytest.mark.parametrize(("weight", "first"), [(0.0, "lost_card"), (0.5, "wire"), (3.0, "wire")])
def test_wiki_article_weight_sets_what_an_articles_own_rank_counts(built, emb, weight, first):
    """wire: page rank 2 and article rank 1; the trap page's articles: page rank 1, no article rank of their
    own. Weight 0 is page order; with k = 60 any weight above 1/62 lifts wire (1/62 + w/61 > 1/61)."""
    src = FakePageSource(TRAP)
    build_index(built, backend="wiki", embedder=emb, pages=src)
    built.config.search.wiki_article_weight = weight
    r = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src)
    built.config.search.wiki_article_weight = 1.0  # the retriever keeps the weight it was opened with
    hits = r.search("swift wire abroad international", k=4)
    assert hits[0].article_id == first
    assert hits[[h.article_id for h in hits].index("wire")].score == pytest.approx(1 / 62 + weight / 61)


def test_fused_order_within_a_page_follows_article_relevance(built, emb):
    src = FakePageSource([FakePage("p-all", "Everything", "card account wire savings",
                                   ["open_savings", "card_fees", "lost_card"])])
    build_index(built, backend="wiki", embedder=emb, pages=src)
    r = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src)
    hits = r.search("annual fee platinum card", k=3)
    assert [h.article_id for h in hits][:2] == ["card_fees", "lost_card"]  # one page: article rank decides
    assert hits[2].article_id == "open_savings" and hits[2].score == pytest.approx(1 / 61)


def test_fused_order_needs_a_fresh_direct_index(built, emb):
    import shutil

    from skillrag.corpus import ingest
    from skillrag.search.index import index_dir

    src = FakePageSource(PAGES)
    shutil.rmtree(index_dir(built, "direct"))
    build_index(built, backend="wiki", embedder=emb, pages=src)  # brings the direct index back
    assert (index_dir(built, "direct") / "manifest.json").is_file()
    r = open_retriever(built, backend="wiki", embedder=emb, pages=src)
    assert r.search("close checking account", k=1)[0].article_id == "close_account"
    shutil.rmtree(index_dir(built, "direct"))
    with pytest.raises(IndexStateError, match="ranks the articles a page cites with the direct index"):
        open_retriever(built, backend="wiki", embedder=emb, pages=src)
    build_index(built, backend="wiki", embedder=emb, pages=src)
    r = open_retriever(built, backend="wiki", embedder=emb, pages=src)
    extra = built.root.parent / "more"
    extra.mkdir()
    (extra / "new.md").write_text("# New article\n\nSomething new.\n", encoding="utf-8")
    ingest(built, [extra], tag="more")
    with pytest.raises(IndexStateError, match="stale"):
        r.search("close checking account")


def test_wiki_index_goes_stale_when_the_layer_changes(built, emb):
    pages = [FakePage(p.id, p.title, p.text, list(p.cites)) for p in PAGES]
    src = FakePageSource(pages)
    build_index(built, backend="wiki", embedder=emb, pages=src)
    r = open_retriever(built, backend="wiki", embedder=emb, pages=src)
    assert r.search("savings", k=1)[0].page_ids == ("p-save",)
    pages[2].text = "open savings interest, now with bonus"
    with pytest.raises(IndexStateError, match="navigation layer changed"):
        r.search("savings")
    report = build_index(built, backend="wiki", embedder=emb, pages=src)
    assert report.changed == ["p-save"] and report.embedded == 1
    # bm25: only the edited page says "bonus" (no article does), so the hit comes from it alone (in hybrid
    # the hash embedder's article ranking, noise here, would weigh 1.5 against it)
    hit = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src).search("bonus", k=1)[0]
    assert hit.article_id == "open_savings" and hit.page_ids == ("p-save",)


def test_real_wiki_layer_edited_in_place_makes_the_index_stale(built, emb):
    from skillrag.wiki import build_wiki

    build_wiki(built, builder="extractive")
    build_index(built, backend="wiki", embedder=emb)
    r = open_retriever(built, backend="wiki", embedder=emb)
    assert r.search("wire abroad", k=1)[0].page_ids
    assert r.search("wire abroad", k=1)  # memoised fingerprint: still fresh
    page = min((built.wiki_dir / "pages").glob("*.md"))
    with page.open("a", encoding="utf-8") as fh:  # an in-place edit, no rename
        fh.write("\n")
    with pytest.raises(IndexStateError, match="navigation layer changed"):
        r.search("wire abroad")


def test_a_hit_names_at_most_three_pages_the_best_ranked_first(built, emb):
    """An article on its entity page and many aspect pages names only the best few; each page still lists it."""
    from skillrag.search.retriever import MAX_HIT_PAGES

    many = [FakePage(f"p-{n}", f"Closing {n}", "close account " + "balance " * (6 - n), ["close_account"])
            for n in range(1, 6)]
    src = FakePageSource(many)
    build_index(built, backend="wiki", embedder=emb, pages=src)
    r = open_retriever(built, backend="wiki", mode="bm25", embedder=emb, pages=src)
    ranked = [p.page_id for p in r.search_pages("close account balance", k=5)]
    assert len(ranked) == 5
    hit = r.search("close account balance", k=1)[0]
    assert MAX_HIT_PAGES == 3 and hit.page_ids == tuple(ranked[:3])
    assert all("close_account" in [a.id for a in r.read_page(p).articles] for p in ranked)


def test_a_retriever_keeps_the_settings_it_was_opened_with(ws, emb):
    """Issue 24: an open retriever held a live reference to ``ws.config.search``; a setting changed after
    opening changed how it searched (and could pair an index with settings it was not built with)."""
    build_index(ws, embedder=emb)
    r = open_retriever(ws, embedder=emb)
    query = "close the card account abroad wire"
    before = r.search(query, k=5)
    s = ws.config.search
    s.dense_weight, s.rrf_k, s.max_query_terms, s.dense_query = 0.0, 1, 1, "truncate"
    assert r.search(query, k=5) == before
    assert r.settings.dense_weight == 1.0 and r.settings is not s
    assert open_retriever(ws, embedder=emb).search(query, k=5) != before  # a new one reads the new settings
