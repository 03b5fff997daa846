"""On the real τ²-bench banking corpus (read from ../shared, never copied): a product the bank does
not offer is not found; a real product returns evidence that the evidence contract accepts."""

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.evidence import State, ask, contract_output
from skillrag.skill.contract import locate, validate_output
from skillrag.workspace import Workspace

pytestmark = pytest.mark.shared


@pytest.fixture
def tau2_ws(tau2_dir, tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    report = ingest(ws, [tau2_dir / "documents"])
    assert report.counts()["added"] == 698
    return ws


def test_not_offered_product_is_not_found_and_real_product_has_contract_evidence(tau2_ws):
    ws = tau2_ws
    # 1. a product Rho-Bank does not offer: the corpus has Gold/Platinum/Diamond cards, no Titanium one
    absent = ask(ws, "Does Rho-Bank offer a Titanium Rewards Card?", use_index=False)
    assert absent.final_state == State.SUBJECT_NOT_FOUND
    assert (absent.sufficient, absent.risk_signal, absent.confidence) == (False, "subject_not_found", "low")
    assert absent.evidence == [] and absent.candidates == []
    assert State.EVIDENCE_RETRIEVAL not in absent.record.states()

    # 2. a real product: the Gold Rewards Card, bound to Rho-Bank in the source text
    real = ask(ws, "What is the annual fee of Rho-Bank's Gold Rewards Card?", use_index=False)
    assert real.final_state == State.CONCLUDED
    assert [c.name for c in real.candidates] == ["Gold Rewards Card"]
    store = ArticleStore(ws)
    kinds = {b.kind for b in real.candidates[0].bindings}
    assert kinds & {"sentence", "section", "article"}  # at least one article binds it itself
    for b in real.candidates[0].bindings:
        assert b.parent_quote is not None and "Bank" in b.parent_quote.text
        parent_art = store.get(b.parent_quote.article_id)
        assert parent_art.body[b.parent_quote.start : b.parent_quote.end] == b.parent_quote.text
        name_art = store.get(b.name_quote.article_id)
        src = name_art.title if b.name_quote.field == "title" else name_art.body
        assert src[b.name_quote.start : b.name_quote.end] == b.name_quote.text
        assert "Gold Rewards Card" in b.name_quote.text
    # look-alikes (the business card) were refused at the gate, never used
    assert any(
        r.reason.startswith("look-alike: 'Business Gold Rewards Card'") for r in real.rejected_candidates
    )
    assert real.evidence and all(u.article_id in real.candidates[0].article_ids for u in real.evidence)
    bodies = {u.article_id: store.get(u.article_id).body for u in real.evidence}
    for u in real.evidence:
        assert bodies[u.article_id][u.start : u.end] == u.text
        assert locate(u.text, bodies[u.article_id]) is not None
    assert validate_output(contract_output(real.question, real.conclusion, real.evidence), bodies) == []
    assert real.contract is not None and real.contract.accepted
    assert any(c.attribute == "annual fee" for c in real.claims)
    assert real.sufficient and real.risk_signal == "none"


def test_look_alike_product_of_the_bank_is_not_substituted(tau2_ws):
    # only the business variant mentions "Zoom": asking for a personal "Silver Zoom Rewards Card" finds nothing
    ans = ask(tau2_ws, "What is the annual fee of Rho-Bank's Silver Zoom Rewards Card?", use_index=False)
    assert ans.final_state == State.SUBJECT_NOT_FOUND
    # and the gold card question never cites a business card article
    gold = ask(tau2_ws, "What is the late payment fee on Rho-Bank's Gold Rewards Card?", use_index=False)
    assert gold.final_state == State.CONCLUDED
    assert not any("business" in u.article_id for u in gold.evidence)
    assert all("$32.50" in c.value for c in gold.claims if c.attribute == "late payment fee")
