"""Evidence verification: verbatim, in a candidate article, about the query's subject and scope."""

from skillrag.evidence.gate import check_candidates
from skillrag.evidence.model import Scope, SubjectClass
from skillrag.evidence.steps import CandidateProposal, ClaimProposal, EvidenceProposal
from skillrag.evidence.testing import make_articles
from skillrag.evidence.verify import check_claim_proposals, check_evidence

ARTS = make_articles(
    [
        (
            "gold",
            "Gold Card: fees (2024)",
            (
                "## Fees\nThe Gold Card from Acme Bank costs $95 a year.\n"
                "- In 2023 the Gold Card annual fee was $80.\n"
                "- The Silver Card annual fee is $40.\n"
                "- The Business Gold Card annual fee is $150.\n"
                "- Late fee: $25.00\n"
            ),
        ),
        (
            "general",
            "Acme Bank cards",
            "Acme Bank offers the Gold Card and the Silver Card.\nThe annual fee is $60 on premium cards.\n",
        ),
        ("other", "Other article", "Nothing about cards here, but long enough.\n"),
    ]
)
SUBJECT = SubjectClass(
    type="credit_card",
    name="Gold Card",
    parent_entity="Acme Bank",
    attribute="annual fee",
    scope=Scope(time="2024"),
)


def _candidates():
    props = [
        CandidateProposal(
            name="Gold Card",
            article_id="gold",
            name_quote="The Gold Card from Acme Bank costs $95 a year.",
            parent_quote="The Gold Card from Acme Bank costs $95 a year.",
        ),
        CandidateProposal(
            name="Gold Card",
            article_id="general",
            name_quote="Acme Bank offers the Gold Card",
            parent_quote="Acme Bank offers",
        ),
    ]
    cands, rejected = check_candidates(SUBJECT, props, ARTS)
    assert rejected == [] and cands[0].article_ids == ["gold", "general"]
    return cands


def _ev(article_id, text, subject="Gold Card"):
    return EvidenceProposal(article_id=article_id, text=text, subject=subject, why="test")


def test_each_rule_drops_with_its_reason():
    units, dropped = check_evidence(
        SUBJECT,
        _candidates(),
        [
            _ev("gold", "The Gold Card from Acme Bank costs $95 a year."),  # kept
            _ev("gold", "The Gold Card from Acme Bank costs $59 a year."),  # not verbatim
            _ev("other", "Nothing about cards here, but long enough."),  # not a candidate article
            _ev("gold", "Late fee: $25.00", subject="Platinum Card"),  # subject drift
            _ev("gold", "The Silver Card annual fee is $40."),  # names another card
            _ev("gold", "The Business Gold Card annual fee is $150."),  # look-alike inside the span
            _ev("gold", "In 2023 the Gold Card annual fee was $80."),  # another year
            _ev("general", "The annual fee is $60 on premium cards."),  # subject not established
            _ev("gold", "$95 a year."),  # too short for the contract
        ],
        ARTS,
    )
    assert [u.text for u in units] == ["The Gold Card from Acme Bank costs $95 a year."]
    u = units[0]
    body = ARTS[0].body
    assert body[u.start : u.end] == u.text and u.section == "Fees" and u.subject == "Gold Card"
    reasons = [d.reason for d in dropped]
    assert reasons[0] == "not a verbatim substring of the article body"
    assert reasons[1].startswith("cites an article outside")
    assert reasons[2].startswith("subject drift: the span is about 'Platinum Card'")
    assert reasons[3] == "subject mismatch: the span names 'Silver Card', not 'Gold Card'"
    assert reasons[4] == "subject mismatch: the span names 'Business Gold Card', not 'Gold Card'"
    assert reasons[5].startswith("scope mismatch: the span is about 2023")
    assert reasons[6].startswith("subject not established")
    assert reasons[7].startswith("shorter than the evidence contract's 15 characters")


def test_typographic_differences_are_located_in_the_raw_body():
    arts = make_articles(
        [("t", "Gold Card", "The Gold Card\u2019s fee \u2014 $95 \u2014 is billed yearly.\n")]
    )
    subj = SubjectClass(type="credit_card", name="Gold Card", attribute="fee")
    cands, _ = check_candidates(
        subj, [CandidateProposal(name="Gold Card", article_id="t", name_quote="Gold Card")], arts
    )
    units, dropped = check_evidence(
        subj, cands, [_ev("t", "The Gold Card's fee - $95 - is billed yearly.")], arts
    )
    assert dropped == []
    assert units[0].text == arts[0].body[units[0].start : units[0].end] == arts[0].body.strip()


def test_model_claims_must_quote_their_unit():
    units, _ = check_evidence(
        SUBJECT, _candidates(), [_ev("gold", "The Gold Card from Acme Bank costs $95 a year.")], ARTS
    )
    claims, refused = check_claim_proposals(
        [
            ClaimProposal(evidence_index=0, attribute="Annual fee", value="$95"),
            ClaimProposal(evidence_index=0, attribute="annual fee", value="$90"),
            ClaimProposal(evidence_index=3, attribute="annual fee", value="$95"),
        ],
        units,
    )
    assert [(c.attribute, c.normalized) for c in claims] == [("annual fee", "usd:95.00")]
    assert refused == [
        "claim value '$90' is not in evidence[0]",
        "claim cites evidence[3], which does not exist",
    ]


def test_gate_rejects_unverifiable_or_unbound_proposals():
    props = [
        CandidateProposal(
            name="Gold Card", article_id="gold", name_quote="The Gold Card from Acme Bank costs $1."
        ),
        CandidateProposal(name="Gold Card", article_id="nowhere", name_quote="x"),
        CandidateProposal(
            name="Gold Card",
            article_id="gold",
            name_quote="The Gold Card from Acme Bank costs $95 a year.",
            parent_quote=None,
        ),
        CandidateProposal(
            name="Business Gold Card",
            article_id="gold",
            name_quote="The Business Gold Card annual fee is $150.",
            parent_quote="The Gold Card from Acme Bank costs $95 a year.",
        ),
    ]
    cands, rejected = check_candidates(SUBJECT, props, ARTS)
    assert cands == []
    assert [r.reason for r in rejected] == [
        "name quote is not verbatim in the article",
        "article was not among the searched articles",
        "no binding: nothing in the article ties 'Gold Card' to 'Acme Bank'",
        "look-alike: 'Business Gold Card' is not 'Gold Card'",
    ]


def _units(*texts, section=None):
    from skillrag.evidence.model import EvidenceUnit

    return [
        EvidenceUnit(article_id=f"a{i}", start=0, end=len(t), text=t, subject="Gold Card", section=section)
        for i, t in enumerate(texts)
    ]


def test_claims_from_labels_table_cells_and_sentences():
    from skillrag.evidence.verify import claims_from_units, find_conflicts

    subj = SubjectClass(type="account", name="Gold Card", attribute="monthly fee")
    claims = claims_from_units(
        subj,
        _units(
            "| Monthly maintenance fee | $22.50 |",
            "| Paper statement fee (monthly) | $2.50 |",
            "If you opt for paper statements, a $2.50 monthly fee applies.",
            "To avoid the monthly maintenance fee, maintain a daily balance of $1,350.",  # other clause: no claim
            "**Credit limit:** $500 to $2,000",
        ),
    )
    got = [(c.attribute, c.value, c.normalized) for c in claims]
    assert got == [
        ("monthly maintenance fee", "$22.50", "usd:22.50"),
        ("paper statement fee (monthly)", "$2.50", "usd:2.50"),
        ("monthly fee", "$2.50", "usd:2.50"),
        ("credit limit", "$500 – $2,000", "usd:500.00|usd:2000.00"),
    ]
    assert find_conflicts(claims) == []  # different items, not one fact


def test_sentence_claim_takes_the_value_after_the_phrase():
    from skillrag.evidence.verify import claims_from_units

    subj = SubjectClass(type="credit_card", name="Gold Card", attribute="late fee")
    (claim,) = claims_from_units(
        subj, _units("The Gold Card annual fee is $95 and the late fee is $35.00 per month.")
    )
    assert claim.value == "$35.00"
    range_claim = claims_from_units(
        SubjectClass(type="credit_card", name="Gold Card", attribute="credit limit"),
        _units("Approved credit limits typically range from $17,500 to $112,500."),
    )
    assert [c.normalized for c in range_claim] == ["usd:17500.00|usd:112500.00"]
