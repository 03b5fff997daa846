import pytest

from skillrag.search import reciprocal_rank_fusion


def test_rrf_arithmetic_on_a_toy_ranking():
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 62)
    assert fused["d"] == pytest.approx(1 / 63)
    order = [i for i, _ in reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]], k=60)]
    assert order == ["b", "c", "a", "d"]


def test_rrf_weights_and_small_k_change_the_order():
    rankings = [["x", "y"], ["y", "x"]]
    # equal weights: a tie, broken by the best first position (x is first in the first ranking)
    assert [i for i, _ in reciprocal_rank_fusion(rankings, k=1)] == ["x", "y"]
    fused = reciprocal_rank_fusion(rankings, k=1, weights=[1.0, 3.0])
    assert [i for i, _ in fused] == ["y", "x"]
    assert fused[0][1] == pytest.approx(1 / 3 + 3 / 2)


def test_rrf_ignores_repeats_within_one_ranking():
    fused = dict(reciprocal_rank_fusion([["a", "a", "b"]], k=10))
    assert fused == {"a": pytest.approx(1 / 11), "b": pytest.approx(1 / 13)}


def test_rrf_rejects_bad_arguments():
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=0)
    assert reciprocal_rank_fusion([]) == []


def test_rrf_none_holds_a_rank_without_scoring():
    fused = dict(reciprocal_rank_fusion([["a", None, "b"]], k=10))
    assert fused == {"a": pytest.approx(1 / 11), "b": pytest.approx(1 / 13)}


def test_rrf_takes_shared_ranks_as_a_mapping():
    """The wiki backend: the articles of one page share that page's rank."""
    fused = reciprocal_rank_fusion([{"a": 0, "b": 0, "c": 1}, ["c"]], k=10)
    assert dict(fused) == {"a": pytest.approx(1 / 11), "b": pytest.approx(1 / 11),
                           "c": pytest.approx(1 / 12 + 1 / 11)}
    assert [i for i, _ in fused] == ["c", "a", "b"]
