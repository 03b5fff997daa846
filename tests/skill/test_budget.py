"""The per-case budget account in the workspace store: sessions, charges, refusals, refunds,
attribution of calls that name no case, and parallel processes that cannot overrun a budget."""

from __future__ import annotations

import subprocess
import sys
from datetime import date

import pytest

from skillrag.errors import BudgetExceeded, UserError
from skillrag.skill import BudgetLedger, BudgetLimits, CaseFile, SkillTools
from skillrag.skill.budget import refusal
from skillrag.skill.testing import FakeRetriever

LIMITS = BudgetLimits(max_queries=2, max_fetches=3, max_saves=2)


def test_start_continues_unless_new(ws):
    led = BudgetLedger(ws)
    a, started = led.start("c1", "cs-guidance", LIMITS)
    assert started and a.to_dict() == {"counted": "after this call", "queries_left": 2, "queries_used": 0,
                                       "fetches_left": 3, "fetches_used": 0, "saves_left": 2, "saves_used": 0}
    assert a.as_of == date.today().isoformat()
    led.charge(a.session_id, "query", "retrieve", "q")
    again, started = led.start("c1", "cs-guidance", LIMITS)
    assert not started and again.session_id == a.session_id and again.queries_left == 1  # no reset
    fresh, started = led.start("c1", "cs-guidance", LIMITS, new=True)
    assert started and fresh.session_id != a.session_id and fresh.queries_left == 2
    assert led.current("c1", "cs-guidance").session_id == fresh.session_id
    other_skill, started = led.start("c1", "evidence-qa", LIMITS)
    assert started and other_skill.session_id != fresh.session_id  # sessions are per skill and case


def test_the_readout_says_it_counts_after_the_call_and_gives_used_and_left(ws):
    """Agents read "4 of 5 queries left" as four used: every surface now says used and left, after the call."""
    led = BudgetLedger(ws)
    s, _ = led.start("c1", "cs-guidance", LIMITS)
    after, _ = led.charge(s.session_id, "query", "retrieve", "q")  # the first query
    assert after.to_dict()["counted"] == "after this call"
    assert (after.to_dict()["queries_used"], after.to_dict()["queries_left"]) == (1, 1)
    assert after.line() == ("case c1, after this call: queries 1 used, 1 left (of 2); fetches 0 used, 3 left (of 3); "
                            "saves 0 used, 2 left (of 2)")


def test_charge_refuse_refund(ws):
    led = BudgetLedger(ws)
    s, _ = led.start("c1", "cs-guidance", LIMITS)
    after, seq = led.charge(s.session_id, "query", "retrieve", "lost card")
    assert after.queries_left == 1
    led.refund(s.session_id, seq)  # the call failed: not charged
    assert led.get(s.session_id).queries_left == 2
    led.charge(s.session_id, "query", "retrieve", "a")
    led.charge(s.session_id, "query", "retrieve", "b")
    with pytest.raises(BudgetExceeded) as ei:
        led.charge(s.session_id, "query", "retrieve", "c")
    state = led.get(s.session_id)
    assert str(ei.value) == refusal("query", state) == (
        "query budget spent (2 retrieve calls for case 'c1'); this call was refused: work with what you have "
        "found and call save_output")
    calls = led.calls(s.session_id)
    assert [(c["target"], c["charged"], c["ok"]) for c in calls] == [
        ("lost card", None, False), ("a", "query", True), ("b", "query", True), ("c", None, False)]
    assert state.queries_left == 0 and state.fetches_left == 3  # budgets are separate


def test_an_article_costs_one_fetch_per_case_however_often_and_in_whatever_parts_it_is_read(ws, skill, cases_path):
    """Issue 22: a --section, --summary or --json re-read of an article cost a fetch each, so agents copied
    articles to files (63 copies in the before runs) rather than read them again. Now the first read of an
    article in a case spends the fetch and any later read of it is free, also once the budget is spent."""
    t = SkillTools(ws, skill, CaseFile(cases_path), retriever=FakeRetriever(ws), surface="cli",
                   limits=BudgetLimits(max_queries=2, max_fetches=2, max_saves=2))
    t.load_case("case_1")
    first = t.get_article("art_card_lost", section="Replacement")  # a section of an unread article: one fetch
    assert first.charged is True and first.budget.fetches == 1
    for again in (t.get_article("art_card_lost"), t.get_article("art_card_lost", summary=True),
                  t.get_article("art_card_lost", section="1")):
        assert again.charged is False and again.budget.fetches == 1
    assert t.get_article("art_fees").budget.fetches_left == 0  # a second article: the budget is spent
    with pytest.raises(BudgetExceeded, match="re-reading them is free"):
        t.get_article("art_other")
    assert t.get_article("art_fees", summary=True).charged is False  # re-reads still work when it is spent
    with pytest.raises(Exception, match="has no section"):  # a failed re-read: recorded as failed, nothing spent
        t.get_article("art_card_lost", section="No such heading")
    led = BudgetLedger(ws)
    state = led.current("case_1", skill.name)
    assert state.fetches == 2
    reads = [(c["target"], c["charged"], c["ok"]) for c in led.calls(state.session_id) if c["tool"] == "get_article"]
    assert reads == [("art_card_lost", "fetch", True), ("art_card_lost", None, True), ("art_card_lost", None, True),
                     ("art_card_lost", None, True), ("art_fees", "fetch", True), ("art_other", None, False),
                     ("art_fees", None, True), ("art_card_lost", None, False)]
    assert led.fetched(state.session_id) == {"art_card_lost", "art_fees"}
    other = SkillTools(ws, skill, CaseFile(cases_path), retriever=FakeRetriever(ws), surface="cli")
    other.load_case("case_2")
    assert other.get_article("art_card_lost").charged is True  # per case: another case pays its own read


def test_a_refunded_first_read_does_not_make_the_next_one_free(ws):
    led = BudgetLedger(ws)
    s, _ = led.start("c1", "cs-guidance", LIMITS)
    _, seq = led.charge(s.session_id, "fetch", "get_article", "art_a")
    led.refund(s.session_id, seq)  # the read failed
    after, seq = led.charge(s.session_id, "fetch", "get_article", "art_a")
    assert led.charged(s.session_id, seq) and after.fetches == 1
    long_id = "a" * 400  # article ids are kept whole: two ids sharing their first 300 characters differ
    led.charge(s.session_id, "fetch", "get_article", long_id)
    after, seq = led.charge(s.session_id, "fetch", "get_article", long_id[:300] + "b" * 100)
    assert led.charged(s.session_id, seq) and after.fetches == 3


def test_private_sessions_are_never_continued_or_attributed(ws, skill):
    led = BudgetLedger(ws)
    p1, _ = led.start("c1", "cs-guidance", LIMITS, private=True)
    p2, _ = led.start("c1", "cs-guidance", LIMITS, private=True)
    assert p1.session_id != p2.session_id and led.current("c1", "cs-guidance") is None
    assert led.open_sessions("cs-guidance") == []
    with pytest.raises(UserError, match="which case is this call for"):
        SkillTools(ws, skill).use_case(None)


def test_implicit_attribution_needs_exactly_one_open_case(ws, skill, cases_path):
    cf = CaseFile(cases_path)

    def agent(**kw):  # an agent-facing surface, as each `skillrag tool` process is
        return SkillTools(ws, skill, retriever=FakeRetriever(ws), surface="cli", **kw)

    with pytest.raises(UserError, match="which case is this call for"):
        agent().retrieve("card")
    agent(cases=cf).load_case("case_1")
    lone = agent()  # another process: knows no case
    assert lone.use_case(None).case_id == "case_1" and lone.retrieve("card").budget.case_id == "case_1"
    agent(cases=cf).load_case("case_2")
    with pytest.raises(UserError, match=r"several cases are open \(.*case_1.*\): name the case"):
        agent().retrieve("card")
    assert agent().retrieve("card", case_id="case_2").budget.case_id == "case_2"
    # an accepted save closes a case for implicit attribution
    BudgetLedger(ws).accepted(agent().budget("case_1").session_id)
    assert agent().use_case(None).case_id == "case_2"


def test_the_python_api_outside_a_case_is_not_charged_to_anyones_case(ws, skill, cases_path):
    SkillTools(ws, skill, CaseFile(cases_path), surface="cli").load_case("case_1")  # an agent's open case
    lib = SkillTools(ws, skill, retriever=FakeRetriever(ws))  # the library, no case
    res = lib.retrieve("lost card")
    assert res and res.budget is None and lib.get_article("art_fees").budget is None
    assert SkillTools(ws, skill).budget("case_1").queries_left == 5  # the agent's case was not charged
    assert lib.retrieve("fee", case_id="case_1").budget.queries_left == 4  # naming a case charges it


def test_a_case_never_loaded_gets_no_budget_of_its_own(ws, skill, cases_path):
    """Found by a new user: naming a made-up case id (`--case anything`) opened a session with a full
    budget, so an agent whose budget was spent could go on under another id. Only load_case opens one."""
    cf = CaseFile(cases_path)
    agent = SkillTools(ws, skill, cf, retriever=FakeRetriever(ws), surface="cli")
    for call in (lambda: agent.retrieve("card", case_id="made_up"), lambda: agent.get_article("art_fees",
                 case_id="made_up"), lambda: agent.budget("made_up")):
        with pytest.raises(UserError, match=r"case 'made_up' has no session: call load_case made_up first"):
            call()
    assert BudgetLedger(ws).current("made_up", skill.name) is None  # nothing was opened either
    agent.load_case("case_1")
    spent = SkillTools(ws, skill, cf, retriever=FakeRetriever(ws), surface="cli",
                       limits=BudgetLimits(max_queries=1, max_fetches=1, max_saves=1))
    spent.load_case("case_2", new_session=True)
    spent.retrieve("card", case_id="case_2")
    with pytest.raises(BudgetExceeded):
        spent.retrieve("card", case_id="case_2")
    with pytest.raises(UserError, match="no session"):  # and no way round the spent budget
        spent.retrieve("card", case_id="case_2-bis")
    assert agent.retrieve("card", case_id="case_1").budget.queries_left == 4  # a loaded case: charged
    # the operator's Python API may still read for a case that was never loaded: uncharged, nothing opened
    lib = SkillTools(ws, skill, retriever=FakeRetriever(ws))
    assert lib.retrieve("card", case_id="made_up").budget is None
    assert BudgetLedger(ws).current("made_up", skill.name) is None


_SPEND = """
import os
import sys
from skillrag.errors import BudgetExceeded
from skillrag.skill import BudgetLedger
from skillrag.workspace import Workspace
led = BudgetLedger(Workspace.open(sys.argv[1]))
ok = 0
for i in range(int(sys.argv[3])):
    try:  # a different article each time: a re-read of one would be free
        led.charge(sys.argv[2], "fetch", "get_article", f"art_{os.getpid()}_{i}")
        ok += 1
    except BudgetExceeded:
        pass
print(ok)
"""


def test_parallel_processes_cannot_overrun_a_budget(ws):
    led = BudgetLedger(ws)
    s, _ = led.start("c1", "cs-guidance", BudgetLimits(5, 7, 2))
    other, _ = led.start("c2", "cs-guidance", BudgetLimits(5, 7, 2))
    runs = [(s.session_id, 5)] * 3 + [(other.session_id, 4)]
    procs = [subprocess.Popen([sys.executable, "-c", _SPEND, str(ws.root), sid, str(n)], stdout=subprocess.PIPE,
                              text=True) for sid, n in runs]
    got = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert sum(got[:3]) == 7 and got[3] == 4  # 15 attempts on c1 for 7 fetches; c2 untouched by c1's race
    assert led.get(s.session_id).fetches == 7 and led.get(other.session_id).fetches == 4
    assert sum(1 for c in led.calls(s.session_id) if not c["ok"]) == 15 - 7
