"""Sentences (pysbd) with exact offsets, and the sentences that point back to the one before."""

import pytest

from skillrag.text import refers_back, sentence_texts, sentences, with_antecedents


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A monthly fee of $5.00 applies, e.g. basic checking. It is waived for students.",
         ["A monthly fee of $5.00 applies, e.g. basic checking.", "It is waived for students."]),
        ("Cards issued in the U.S. work abroad. Fees apply.", ["Cards issued in the U.S. work abroad.", "Fees apply."]),
        ("Say: 'For your security, I need to verify some information.'",
         ["Say: 'For your security, I need to verify some information.'"]),  # the closing quote stays
        ("Eligibility requirements: 1) Customer must be verified, 2) Customer is 18, 3) No overdue balance.",
         ["Eligibility requirements: 1) Customer must be verified, 2) Customer is 18, 3) No overdue balance."]),
        ("Let me see what else I can do for you...., followed by some comments.",
         ["Let me see what else I can do for you...., followed by some comments."]),
        ("One line\nAnother line", ["One line", "Another line"]),  # a line break ends a sentence
        ("A line wrapped\nin the middle.", ["A line wrapped\nin the middle."]),  # … unless it goes on in lower case
        ("   ", []),
    ],
)
def test_sentences_are_exact_and_whole(text, expected):
    spans = sentences(text)
    assert [text[a:b] for a, b in spans] == expected == sentence_texts(text)


def test_a_sentence_that_refers_back_stays_with_the_one_before():
    text = "Medical cancellations waive the fee. Escalate these to Member Care. Standard ones pay $50."
    spans = with_antecedents(text, sentences(text), limit=320)
    assert [text[a:b] for a, b in spans] == [
        "Medical cancellations waive the fee. Escalate these to Member Care.", "Standard ones pay $50."]
    assert refers_back("They must bring ID.") and not refers_back("This: the list below.")
    assert with_antecedents(text, sentences(text), limit=40) == sentences(text)  # too long together


def test_an_inline_numbered_list_after_a_colon_is_one_sentence():
    """The τ²-bench importer cut sentences with a rule of its own that kept "want to: 1. Open …
    2. Open …" whole; pysbd cuts before each number, and the text layer joins the pieces back."""
    text = "You want to: 1. Open a credit card 2. Open a savings account 3. Deposit the $5,000. Then wait."
    assert sentence_texts(text) == [
        "You want to: 1. Open a credit card 2. Open a savings account 3. Deposit the $5,000.", "Then wait."]
