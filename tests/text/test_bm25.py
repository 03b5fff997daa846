"""The one BM25 set-up: parameters from the workspace's settings, one formula, ``bm25s``'s lucene method."""

from __future__ import annotations

import numpy as np
import pytest

from skillrag.text import BM25, Analyzer
from skillrag.workspace.config import SearchSettings


def test_the_defaults_are_the_settings_defaults():
    assert BM25() == BM25.of(SearchSettings())
    assert BM25.of(SearchSettings(bm25_k1=0.9, bm25_b=0.4)) == BM25(0.9, 0.4)


def test_the_formula_is_the_bm25s_index_scores():
    """``idf`` and ``weight`` give the scores of the ``bm25s`` index that ``BM25.index`` builds."""
    docs = [["fee", "waiver", "fee"], ["card", "fee"], ["card", "freeze", "lost", "card", "stolen"]]
    bm25 = BM25(k1=1.1, b=0.6)
    got = np.asarray(bm25.index(docs).get_scores(["fee", "card"]), dtype=float)
    avg = sum(map(len, docs)) / len(docs)
    df = {"fee": 2, "card": 2}
    want = [sum(float(bm25.idf(df[t], len(docs))) * bm25.weight(d.count(t), len(d), avg) for t in df if t in d)
            for d in docs]
    assert got == pytest.approx(want, rel=1e-5)


def test_a_hits_preview_passage_is_scored_with_the_given_parameters():
    """The preview passage was scored with k1 1.2 and b 0.75 of its own, whatever the index used."""
    from skillrag.search._passages import best_passage

    body = ("# A\n\nThe fee applies.\n\n# B\n\nfee fee waiver rules apply to every single account holder here today"
            " and also tomorrow and next week and beyond.\n")
    terms = Analyzer("en", None).terms
    assert best_passage(body, [], {"fee": 1.0}, terms)[0].startswith("The fee applies.")
    no_length = best_passage(body, [], {"fee": 1.0}, terms, bm25=BM25(1.5, 0.0))[0]
    assert no_length.startswith("fee fee waiver")  # b = 0: the longer passage's two mentions win


def test_the_wiki_builders_candidate_pages_take_the_parameters():
    from skillrag.wiki.candidates import PageSearch

    assert PageSearch().bm25 == BM25()
    assert PageSearch(bm25=BM25(0.9, 0.4)).bm25 == BM25(0.9, 0.4)
