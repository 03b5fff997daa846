"""The hard gate: absent subjects end in SUBJECT_NOT_FOUND; look-alikes are never accepted."""

from skillrag.evidence import State, answer_question
from skillrag.evidence.extractive import ExtractiveReasoner
from skillrag.evidence.testing import KeywordSearch, SpyReasoner


def _states(ans):
    return [t.state for t in ans.record.path]


def test_absent_subject_ends_in_subject_not_found_with_no_evidence_step(corpus):
    spy = SpyReasoner(ExtractiveReasoner())
    search = KeywordSearch(corpus)
    ans = answer_question(
        "What is the annual fee of Acme Bank's Titanium Card?",
        articles=corpus,
        reasoner=spy,
        retriever=search,
    )
    assert ans.final_state == State.SUBJECT_NOT_FOUND
    assert _states(ans) == [
        State.INIT,
        State.SUBJECT_CLASS_IDENTIFIED,
        State.CANDIDATE_SUBJECT_DISCOVERED,
        State.SUBJECT_NOT_FOUND,
    ]
    assert ans.sufficient is False
    assert ans.risk_signal == "subject_not_found"
    assert ans.confidence == "low"
    assert ans.evidence == [] and ans.claims == [] and ans.conflicts == [] and ans.contract is None
    # no evidence step ran, and the search tool was asked exactly once (no retry, no reformulation)
    assert spy.calls == ["identify_subject", "propose_candidates"]
    assert search.queries == ["Titanium Card Acme Bank"]
    assert {s.state for s in ans.record.steps} == {
        State.SUBJECT_CLASS_IDENTIFIED,
        State.CANDIDATE_SUBJECT_DISCOVERED,
    }
    assert "Titanium Card" in ans.conclusion and ans.suggested_next_actions


def test_look_alike_without_parent_binding_is_rejected_not_substituted(corpus):
    # Zenith's Gold Card exists, and Acme has a Business Gold Card; Harbor Bank has none.
    ans = answer_question("What is the annual fee of Harbor Bank's Gold Card?", articles=corpus)
    assert ans.final_state == State.SUBJECT_NOT_FOUND
    assert ans.candidates == []
    reasons = {r.article_id: r.reason for r in ans.rejected_candidates}
    assert "zenith-gold" in reasons and "Harbor Bank" in reasons["zenith-gold"]
    assert reasons["acme-platinum"].startswith("look-alike: 'Business Gold Card'")
    assert ans.sufficient is False and ans.risk_signal == "subject_not_found"


def test_bound_candidate_keeps_only_articles_with_their_own_binding(corpus):
    ans = answer_question("What is the annual fee of Acme Bank's Gold Card?", articles=corpus)
    assert ans.final_state == State.CONCLUDED
    (cand,) = ans.candidates
    assert cand.name == "Gold Card"
    assert sorted(cand.article_ids) == ["acme-gold-annual", "acme-gold-payments", "acme-gold-terms"]
    for b in cand.bindings:
        assert b.parent_quote is not None
        art = next(a for a in corpus if a.id == b.name_quote.article_id)
        for q in (b.name_quote, b.parent_quote):
            src = art.title if q.field == "title" else art.body
            assert src[q.start : q.end] == q.text
        assert "Acme Bank" in b.parent_quote.text and "Gold Card" in b.name_quote.text
    rejected = {r.article_id for r in ans.rejected_candidates}
    assert {"zenith-gold", "acme-platinum"} <= rejected
    assert all(u.article_id in cand.article_ids for u in ans.evidence)  # retrieval restricted to candidates


def test_other_bank_is_found_when_asked_for(corpus):
    ans = answer_question("What is the annual fee of the Zenith Bank Gold Card?", articles=corpus)
    assert [c.article_ids for c in ans.candidates] == [["zenith-gold"]]
    assert ans.final_state == State.CONCLUDED
    assert [c.value for c in ans.claims if c.attribute == "annual fee"] == ["$0"]


def test_founder_by_role_needs_binding_to_the_entity(corpus):
    found = answer_question("Who is the founder of Acme Bank?", articles=corpus)
    assert found.final_state == State.CONCLUDED
    assert found.candidates[0].bindings[0].kind == "sentence"
    missing = answer_question("Who is the founder of Zenith Bank?", articles=corpus)
    assert missing.final_state == State.SUBJECT_NOT_FOUND


def test_existence_question_is_answered_from_a_quote_naming_the_subject(corpus):
    ans = answer_question("Does Acme Bank offer a Gold Card?", articles=corpus)
    assert ans.final_state == State.CONCLUDED and ans.subject.attribute is None
    assert ans.evidence and all("Gold Card" in u.text for u in ans.evidence)
    assert ans.sufficient and ans.confidence in {"medium", "high"}


def test_binding_is_inherited_only_when_the_name_is_unique_to_the_parent(corpus):
    from skillrag.evidence import EvidenceSettings

    q = "What cash back does Acme Bank's Gold Card earn?"
    # Zenith Bank also has a "Gold Card": an article naming no bank cannot be attributed to Acme
    with_zenith = answer_question(q, articles=corpus)
    assert "gold-card-rewards" not in with_zenith.candidates[0].article_ids
    assert any(r.article_id == "gold-card-rewards" for r in with_zenith.rejected_candidates)

    only_acme = [a for a in corpus if a.id != "zenith-gold"]
    ans = answer_question(q, articles=only_acme)
    (cand,) = ans.candidates
    assert "gold-card-rewards" in cand.article_ids
    b = cand.bindings[cand.article_ids.index("gold-card-rewards")]
    assert b.kind == "inherited" and b.parent_quote.article_id.startswith("acme-gold")
    assert "Acme Bank" in b.parent_quote.text
    assert not any(r.article_id == "gold-card-rewards" for r in ans.rejected_candidates)
    assert any(u.article_id == "gold-card-rewards" and "3%" in u.text for u in ans.evidence)

    strict = answer_question(q, articles=only_acme, settings=EvidenceSettings(inherit_binding=False))
    assert "gold-card-rewards" not in strict.candidates[0].article_ids


def test_each_step_gets_one_input_with_the_bound_subject_and_the_judged_default_is_kept(corpus):
    from skillrag.evidence import CandidateInput, ConclusionInput, EvidenceInput

    seen: list[object] = []

    class Recording(ExtractiveReasoner):
        def propose_candidates(self, step):
            seen.append(step)
            return super().propose_candidates(step)

        def propose_evidence(self, step):
            seen.append(step)
            return super().propose_evidence(step)

        def conclude(self, step):
            seen.append(step)
            return super().conclude(step)

    question = "What is the late fee of Acme Bank's Gold Card?"
    ans = answer_question(question, articles=corpus, reasoner=Recording())
    assert ans.final_state == State.CONCLUDED
    assert [type(s) for s in seen] == [CandidateInput, EvidenceInput, ConclusionInput]
    assert all(s.question == question and s.subject == ans.subject for s in seen)
    cands, ev, concl = seen
    assert {c.name for c in ans.candidates} <= set(ev.candidate_names)
    assert {u.article_id for u in concl.evidence} <= {a.id for a in ev.articles} | {a.id for a in cands.pool}
    # the step log names the articles each step read, timed in milliseconds
    logged = {s.state: s for s in ans.record.steps}
    assert logged[State.EVIDENCE_RETRIEVAL].articles == [a.id for a in ev.articles]
    assert all(s.ms >= 0 for s in ans.record.steps)
