import itertools
from datetime import UTC, datetime, timedelta

import pytest

from skillrag.errors import IllegalTransition
from skillrag.evidence import State, StateMachine, answer_question

HAPPY = [
    State.SUBJECT_CLASS_IDENTIFIED,
    State.CANDIDATE_SUBJECT_DISCOVERED,
    State.EVIDENCE_RETRIEVAL,
    State.EVIDENCE_VERIFIED,
    State.CONCLUDED,
]


def _ticking_clock():
    t = [datetime(2026, 1, 1, tzinfo=UTC)]

    def now():
        t[0] += timedelta(seconds=1)
        return t[0]

    return now


def test_full_path_is_recorded_with_increasing_timestamps():
    sm = StateMachine(clock=_ticking_clock())
    for s in HAPPY:
        sm.advance(s, note=f"enter {s}")
    path = sm.path
    assert [t.state for t in path] == [State.INIT, *HAPPY]
    assert [t.from_state for t in path] == [None, State.INIT, *HAPPY[:-1]]
    assert all(a.at < b.at for a, b in itertools.pairwise(path))
    assert sm.done


def test_not_found_branch_is_terminal():
    sm = StateMachine()
    sm.advance(State.SUBJECT_CLASS_IDENTIFIED)
    sm.advance(State.CANDIDATE_SUBJECT_DISCOVERED)
    sm.advance(State.SUBJECT_NOT_FOUND)
    assert sm.done
    for target in State:
        with pytest.raises(IllegalTransition, match="SUBJECT_NOT_FOUND is terminal"):
            sm.advance(target)
    assert sm.state == State.SUBJECT_NOT_FOUND


@pytest.mark.parametrize(
    ("before", "target", "kind"),
    [
        ([], State.CANDIDATE_SUBJECT_DISCOVERED, "skipped"),
        ([], State.EVIDENCE_RETRIEVAL, "skipped"),
        ([State.SUBJECT_CLASS_IDENTIFIED], State.EVIDENCE_RETRIEVAL, "skipped"),
        ([State.SUBJECT_CLASS_IDENTIFIED], State.SUBJECT_CLASS_IDENTIFIED, "repeated"),
        (HAPPY[:3], State.EVIDENCE_RETRIEVAL, "repeated"),
        (HAPPY[:3], State.SUBJECT_CLASS_IDENTIFIED, "backward"),
        (HAPPY[:3], State.SUBJECT_NOT_FOUND, "backward"),
        (HAPPY[:4], State.INIT, "backward"),
        (HAPPY[:2], State.CONCLUDED, "skipped"),
        (HAPPY, State.INIT, "CONCLUDED is terminal"),
    ],
)
def test_illegal_transitions_raise_and_leave_the_state_unchanged(before, target, kind):
    sm = StateMachine()
    for s in before:
        sm.advance(s)
    state = sm.state
    with pytest.raises(IllegalTransition, match=kind):
        sm.advance(target)
    assert sm.state == state
    assert len(sm.path) == len(before) + 1


def test_require_guards_a_step():
    sm = StateMachine()
    sm.require(State.INIT, "identify")
    with pytest.raises(IllegalTransition, match="may only run in EVIDENCE_VERIFIED"):
        sm.require(State.EVIDENCE_VERIFIED, "conclusion")


def test_unknown_state_name_is_rejected():
    with pytest.raises(ValueError):
        StateMachine().advance("DONE")


def test_a_run_cannot_start_from_a_used_machine(corpus):
    sm = StateMachine()
    sm.advance(State.SUBJECT_CLASS_IDENTIFIED)
    with pytest.raises(IllegalTransition, match="must start in INIT"):
        answer_question("What is the annual fee of Acme Bank's Gold Card?", articles=corpus, machine=sm)


def test_after_subject_not_found_the_machine_refuses_more_work(corpus):
    sm = StateMachine()
    ans = answer_question("What is the annual fee of Acme Bank's Titanium Card?", articles=corpus, machine=sm)
    assert ans.final_state == State.SUBJECT_NOT_FOUND
    with pytest.raises(IllegalTransition):
        sm.advance(State.EVIDENCE_RETRIEVAL)
    with pytest.raises(IllegalTransition):
        sm.advance(State.SUBJECT_CLASS_IDENTIFIED)  # no re-planning, no reformulated query


def test_public_names_are_exported():
    import skillrag.evidence as ev

    assert sorted(ev.__all__) == sorted(set(ev.__all__))
    assert all(hasattr(ev, name) for name in ev.__all__)
    assert {"answer_question", "ask", "State", "StateMachine", "EvidenceAnswer", "LLMReasoner"} <= set(
        ev.__all__
    )
