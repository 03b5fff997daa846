import pytest

from skillrag.evidence.extractive import extract_subject
from skillrag.evidence.mentions import find_mentions, named_subjects, proper_form


def test_mentions_flag_a_longer_name_as_a_look_alike():
    text = "Business Gold Card: terms. The Gold Card from Acme Bank. Acme Bank Gold Card holders."
    ms = find_mentions("Gold Card", text, allowed_prefix="Acme Bank")
    assert [(m.full_name, m.extended_by) for m in ms] == [
        ("Business Gold Card", "Business"),
        ("Gold Card", ""),
        ("Gold Card", ""),  # preceded by the parent entity itself: not a different product
    ]
    assert all(text[m.start : m.end] == m.text for m in ms)


def test_mentions_keep_a_parenthetical_qualifier_and_treat_dashes_alike():
    text = "Open a Green Account (savings) at Rho\u2011Bank."
    (m,) = find_mentions("Green Account", text)
    assert m.qualifier == "savings" and m.full_name == "Green Account (savings)"
    (p,) = find_mentions("Rho-Bank", text)
    assert text[p.start : p.end] == "Rho\u2011Bank"


def test_named_subjects_drop_leading_function_words():
    assert named_subjects("Your Gold Card and the Silver Rewards Card", "Card") == [
        "Gold Card",
        "Silver Rewards Card",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "What is the annual fee of Rho-Bank's Gold Rewards Card?",
            {
                "name": "Gold Rewards Card",
                "parent_entity": "Rho-Bank",
                "attribute": "annual fee",
                "type": "credit_card",
            },
        ),
        (
            "What is the late fee on the Gold Card from Acme Bank?",
            {"name": "Gold Card", "parent_entity": "Acme Bank", "attribute": "late fee"},
        ),
        (
            "Does Rho-Bank offer a Titanium Rewards Card?",
            {"name": "Titanium Rewards Card", "parent_entity": "Rho-Bank"},
        ),
        ("Does Rho-Bank offer mortgages?", {"name": "mortgage", "parent_entity": "Rho-Bank", "type": "loan"}),
        (
            "What is the APR of the Acme Bank Gold Card?",
            {"name": "Gold Card", "parent_entity": "Acme Bank", "attribute": "APR"},
        ),
        (
            "What is the educational background of Entity A's founder?",
            {"name": "founder", "role": "founder", "type": "individual", "parent_entity": "Entity A"},
        ),
        (
            "What was the minimum balance of the Green Account (checking) in 2024?",
            {"name": "Green Account (checking)", "type": "account", "attribute": "minimum balance"},
        ),
    ],
)
def test_subject_class_by_patterns(question, expected):
    got = extract_subject(question).model_dump()
    assert {k: got[k] for k in expected} == expected


def test_subject_scope_takes_year_and_place():
    s = extract_subject("What was the late fee of Acme Bank's Gold Card in Canada in 2023?")
    assert (s.scope.time, s.scope.jurisdiction) == ("2023", "Canada")
    assert s.name == "Gold Card"


@pytest.mark.parametrize(
    "question",
    [
        "What is the APR of Rho-Bank's Silver Rewards Card?",
        "What is the APR of the Silver Rewards Card from Rho-Bank?",
    ],
)
def test_acronym_attribute_is_not_part_of_the_name(question):
    s = extract_subject(question)
    assert (s.name, s.parent_entity, s.attribute) == ("Silver Rewards Card", "Rho-Bank", "APR")


def test_subject_check_needs_the_question_s_own_words():
    from skillrag.evidence.model import SubjectClass
    from skillrag.evidence.run import check_subject

    q = "What is the annual fee of Rho-Bank's Gold Rewards Cards?"
    ok = SubjectClass(type="credit_card", name="Gold Rewards Card", parent_entity="Rho\u2011Bank")
    assert check_subject(q, ok) == []
    assert check_subject(q, ok.model_copy(update={"name": "a"})) == [
        "subject name 'a' is not taken from the question"
    ]
    assert check_subject(
        q, ok.model_copy(update={"name": "Platinum Rewards Card", "parent_entity": "Acme Bank"})
    ) == [
        "subject name 'Platinum Rewards Card' is not taken from the question",
        "parent entity 'Acme Bank' is not named in the question",
    ]




def test_an_issuer_after_the_name_says_whose_it_is():
    text = "The Gold Card from Zenith Bank costs $0. The Gold Card issued by Acme Bank costs $95."
    ms = find_mentions("Gold Card", text, allowed_prefix="Acme Bank")
    assert [(m.issuer, m.extended_by) for m in ms] == [("Zenith Bank", "Zenith Bank"), ("Acme Bank", "")]
    # a look-alike keeps its own extension whoever issues it
    (b,) = find_mentions("Gold Card", "The Business Gold Card from Acme Bank.", allowed_prefix="Harbor Bank")
    assert (b.extended_by, b.issuer) == ("Business", "Acme Bank")


def test_proper_form_is_how_the_sources_write_a_name():
    texts = ["The Gold Rewards Card has a fee.", "Gold rewards card holders", "GOLD REWARDS CARDS"]
    assert proper_form("gold rewards card", texts) == "Gold Rewards Card"
    assert proper_form("data refuel", ["How to refuel data"]) is None
