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


def _corpus(seed: int, n: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    return [[words[j] for j in rng.zipf(1.4, size=int(rng.integers(0, 60))) % len(words)] for _ in range(n)]


def test_an_index_from_term_counts_scores_as_the_bm25s_index_bit_for_bit():
    """``index_counts`` (vectorised, from stored counts) gives every term the float32 scores of
    ``bm25s``'s own build over the same terms, empty documents (the term "") included."""
    from skillrag.text import TermCounts

    docs = _corpus(1, 300)
    assert any(not d for d in docs)
    bm25 = BM25(k1=1.2, b=0.7)
    ref = bm25.index([d or [""] for d in docs])
    got = bm25.index_counts(TermCounts.of(docs))
    assert set(got.vocab_dict) == set(ref.vocab_dict)  # "" included: the corpus has an empty document
    for t, i in ref.vocab_dict.items():
        if t in got.vocab_dict:
            assert np.array_equal(ref.get_scores_from_ids([i]), got.get_scores_from_ids([got.vocab_dict[t]])), t
    q = ["w1", "w2", "w1", "w40"]
    assert np.array_equal(ref.get_scores(q), got.get_scores_from_ids([got.vocab_dict[t] for t in q]))


def test_term_counts_updated_document_by_document_equal_the_counts_of_the_new_corpus():
    """Removing, keeping, reordering and adding documents (``select`` with ``extra``) gives the arrays
    ``TermCounts.of`` gives for the new corpus: vocabulary sorted, unused terms dropped."""
    from skillrag.text import TermCounts

    old, new = _corpus(2, 200), _corpus(3, 9) + [["zzz-only-here"], []]
    stored = TermCounts.of(old)
    rows = [r for r in range(200) if r % 7][::-1]  # some removed, the rest in another order
    want_docs = [old[r] for r in rows]
    for j, at in enumerate([0, 5, 50, 51, 100, 101, 102, len(rows) - 1, len(rows), len(rows), 3]):
        rows.insert(at, 200 + j)
        want_docs.insert(at, new[j])
    got, want = stored.select(rows, TermCounts.of(new)), TermCounts.of(want_docs)
    assert got.vocab == want.vocab and "zzz-only-here" in got.vocab
    for name in ("ptr", "term_ids", "tf"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    dropped = stored.select([0])  # a term only other documents had is gone from the vocabulary
    assert set(dropped.vocab) == set(old[0] or [""])
    back = TermCounts.from_arrays(got.vocab, got.arrays())
    assert np.array_equal(back.term_ids, got.term_ids)
    with pytest.raises(ValueError, match="do not match"):
        TermCounts.from_arrays(got.vocab[:3], got.arrays())


def test_an_index_from_term_counts_with_a_vocabulary_beyond_16_bits():
    """Above 65536 terms the columns are sorted on 32-bit keys: the same scores as ``bm25s``."""
    from skillrag.text import TermCounts

    docs = [[f"t{i}", f"t{i + 1}", "common", f"t{i}"] for i in range(0, 70_000, 2)]
    bm25 = BM25()
    ref, got = bm25.index(docs), bm25.index_counts(TermCounts.of(docs))
    assert len(got.vocab_dict) > 1 << 16
    for t in ("t0", "t1", "t69999", "common"):
        assert np.array_equal(ref.get_scores_from_ids([ref.vocab_dict[t]]),
                              got.get_scores_from_ids([got.vocab_dict[t]])), t
