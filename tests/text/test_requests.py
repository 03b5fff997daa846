"""What a long request is about (``skillrag.text._requests``): conversation directions told apart from the
problem, and the capitalised names a request mentions."""

from __future__ import annotations

import pytest

from skillrag.text import about_conversation, capitalised_names, flat_sentences, request_sentences

SCENARIO = (
    "You are playing the role of a customer contacting a customer service representative agent. "
    "Your annual income is $250,000. You do NOT have a Rho-Bank+ subscription.\n\n"
    "You're looking for a credit card for your **everyday** purchases. If you are offered many options, "
    "ask for only one. Don't dump all your information at once. If the agent asks for your email, give it."
)


@pytest.mark.parametrize("sentence", [
    "You are playing the role of the customer.",
    "If the agent asks for your email, give it.",
    "Don't dump all your information at once.",
    "If you are offered many options, ask for only one.",
    'When the card arrives: "thanks, that was quick"',
    "End the conversation politely.",
])
def test_conversation_directions_are_told(sentence):
    assert about_conversation(sentence)


@pytest.mark.parametrize("sentence", [
    "My debit card was declined abroad.",
    "You want the card with the highest cash back.",
    "Your annual income is $250,000.",
])
def test_the_problem_is_not_a_direction(sentence):
    assert not about_conversation(sentence)


def test_request_sentences_keep_the_problem_in_order_on_one_line_each():
    got = request_sentences(SCENARIO)
    assert got == ["Your annual income is $250,000.", "You do NOT have a Rho-Bank+ subscription.",
                   "You're looking for a credit card for your everyday purchases."]  # ** dropped, no line breaks


def test_request_sentences_of_directions_only_or_blank_text_are_empty():
    assert request_sentences("You are playing the role of a customer. If asked, say no.") == []
    assert request_sentences("   \n ") == []


def test_flat_sentences_flatten_markdown_and_white_space():
    assert flat_sentences("**Your situation:**  You lost\n your card.\n\nCall us.") == [
        "Your situation: You lost your card.", "Call us."]


def test_capitalised_names_are_the_products_not_the_sentence_starts():
    text = ("I have Sofia's Light Green Account and an EcoCard. The Platinum Rewards Card is too expensive, "
            "says Rho-Bank+. I LOVE the Platinum Rewards card.")
    # the owner, the leading "The" and the SHOUTED "LOVE" dropped; a shorter run is a name of its own
    assert capitalised_names(text) == ["Light Green Account", "EcoCard", "Platinum Rewards Card", "Rho-Bank+",
                                       "Platinum Rewards"]


def test_capitalised_names_skip_single_plain_words_once_stop_words_are_trimmed():
    assert capitalised_names("Call Me now. An Ox ran. The Bank said no, then Bank Of.") == []
