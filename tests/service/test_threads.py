"""Thread store: keys, isolation, ordering, concurrency, condensation."""

from __future__ import annotations

import threading

import pytest

from skillrag.errors import InvalidIdError
from skillrag.service.chat import condense_terms
from skillrag.service.threads import ThreadStore, Turn, check_thread_id, thread_key


def test_thread_keys():
    assert thread_key("t-1", None) == "t-1"
    assert thread_key("t-1", "cards") == "t-1::cards"


@pytest.mark.parametrize("bad", ["", "t-1::cards", "a/b", "../x", " t", "x" * 129, "t 1"])
def test_client_ids_cannot_address_skill_threads(bad):
    with pytest.raises(InvalidIdError):
        check_thread_id(bad)


def _add(store, key, q, skill=None):
    return store.append(key, question=q, condensed=q, answer="a:" + q, skill=skill, citations=[{"n": 1}])


def test_history_is_per_key_and_ordered(tmp_path):
    store = ThreadStore(tmp_path / "s.sqlite")
    _add(store, "t-1", "plain one")
    _add(store, "t-1::cards", "cards one", "cards")
    t = _add(store, "t-1", "plain two")
    assert t.seq == 2
    assert [x.question for x in store.history("t-1")] == ["plain one", "plain two"]
    assert [x.question for x in store.history("t-1::cards")] == ["cards one"]
    assert [x.question for x in store.history("t-1", limit=1)] == ["plain two"]
    assert store.history("t-2") == []
    assert store.keys() == ["t-1", "t-1::cards"]
    # persists: a new store object on the same file sees the same turns
    again = ThreadStore(tmp_path / "s.sqlite").history("t-1::cards")[0]
    assert again.citations == [{"n": 1}] and again.skill == "cards"


def test_concurrent_appends_keep_sequences(tmp_path):
    store = ThreadStore(tmp_path / "s.sqlite")

    def work(i):
        for j in range(5):
            _add(store, f"t{i % 3}", f"q{i}-{j}")

    ts = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in ("t0", "t1", "t2"):
        seqs = [x.seq for x in store.history(k)]
        assert seqs == list(range(1, 21))


def test_condense_prepends_previous_key_terms():
    prev = [Turn(thread_key="t", seq=1, question="How do I freeze a lost debit card?", condensed="", answer="")]
    assert condense_terms("and how long does it take?", prev) == "freeze lost debit card and how long does it take?"
    assert condense_terms("freeze it again", prev) == "lost debit card freeze it again"
    assert condense_terms("anything", []) == "anything"


def test_best_passages_are_exact_slices_and_skip_headings():
    from skillrag.service.knowledge import best_passages

    body = "# Lost cards\n\n## Freeze\n\nFreeze a lost card in the app. Then call us.\nUnrelated line about loans."
    ps = best_passages(body, "lost card freeze", min_chars=20, n=2)
    assert ps and not ps[0].text.startswith("#")
    for p in ps:
        assert body[p.start:p.end] == p.text
    assert ps[0].text.startswith("Freeze a lost card in the app.")
    assert best_passages(body, "the a of") == []  # stop words only: nothing to match


def test_an_extractive_quote_is_whole_sentences_never_cut_at_an_amount_or_abbreviation():
    """The chat's offline answer quoted "00, e.g. basic checking. It is waived for students.": verbatim,
    so accepted, but cut at "$5." and "e.g." by a splitter of its own. Sentences are the text layer's."""
    from skillrag.service.knowledge import best_passages

    body = "# Checking fees\n\nA monthly fee of $5.00 applies to some accounts, e.g. basic checking. It is waived for students.\n"
    ps = best_passages(body, "Is the fee waived for students?", min_chars=40, n=2)
    assert [p.text for p in ps] == [
        "A monthly fee of $5.00 applies to some accounts, e.g. basic checking. It is waived for students.",
    ]
    # "It is waived …" points back: it is never quoted without the sentence it depends on
    assert [p.text for p in best_passages(body, "monthly fee")] == [p.text for p in ps]
    assert all(body[p.start : p.end] == p.text for p in ps)
