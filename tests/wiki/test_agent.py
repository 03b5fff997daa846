"""The agent driver of the page builder: claims, validated writes, parallel agents, kill and resume,
finish, scope and incremental builds (scripted agents, no model)."""

from __future__ import annotations

import json
import multiprocessing
import threading

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.errors import PageRejected, UserError, WorkspaceError
from skillrag.wiki import Layer, audit_structure, build_wiki, layer_fingerprint, load_pages
from skillrag.wiki.agent import AgentBuild, open_build, prepare_agent_build
from skillrag.wiki.llm import AGENT_INDEX_RULE, Journal
from skillrag.wiki.testing import ScriptedAgent, ScriptedPageModel


class Clock:
    """An injected clock (Unix seconds) that tests move by hand."""

    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _content(pages):
    """Pages without who wrote them (builder, model): what the two drivers must agree on."""
    return {p.id: p.model_dump(exclude={"builder", "model"}) for p in pages}


def _draft(aid, *, title="Disputing a charge", action="create", page_id=None, kind="topic", extra_links=(),
           sources=None):
    links = [{"type": "procedure", "article_id": aid}, *extra_links]
    return json.dumps({
        "action": action, "page_id": page_id, "kind": kind, "title": title, "intent": "Dispute a card charge.",
        "solves": ["A customer does not recognise a charge"], "does_not_solve": [],
        "steps": [{"text": "Open the dispute within sixty days.", "links": links}],
        "sources": sources if sources is not None else [{"id": aid, "summary": "How to dispute a charge."}],
    })


def _claim(build, agent, key):
    return build.next(agent, key=key)


def test_agent_driver_writes_the_layer_the_llm_driver_writes(ws, tmp_path, corpus_dir, make_ws):
    ref = make_ws(tmp_path / "ref", corpus_dir)
    build_wiki(ref, builder="llm", model=ScriptedPageModel(ref).model)
    rep = prepare_agent_build(ws)
    assert (rep.to_write, rep.aspects, rep.articles) == (6, 1, 6) and not rep.resumed
    build = AgentBuild(ws)
    agent = ScriptedAgent(build, "a1")
    assert agent.run() == 7 and all(r[1] == "accepted" for r in agent.log)
    assert agent.log[-1][0] == "aspect:overview"  # aspect pages come after every article
    assert layer_fingerprint(ws) is None  # nothing is live before finish
    res = build.finish()
    assert res.swapped and res.audit.ok and open_build(ws) is None
    pages = load_pages(ws)
    # one builder, two drivers: the same pages and index as the model-driven build, written by the agent
    assert _content(pages) == _content(load_pages(ref))
    assert Layer(ws).index_path.read_text() == Layer(ref).index_path.read_text()
    assert {(p.builder, p.model) for p in pages} == {("agent", "a1")}
    man = Layer(ws).manifest()
    assert man.builder == "agent" and man.model is None and set(man.articles) == set(ArticleStore(ws).hashes())
    assert man.params == Layer(ref).manifest().params
    assert "doc_cards_gold_002 updated entity page gold-card (builder agent, agent a1" in Layer(ws).log_path.read_text()
    assert all(r["status"] == "done" for r in Journal(ws).rows().values())  # the journal moved to the live one


def test_next_shows_the_task_the_model_gets_bounded_the_same_way(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    ScriptedAgent(build, "a0").step()  # the gold entity page exists now
    task = build.next("a1")
    b = build.builder()
    art = ArticleStore(ws).get(task.article_id)
    cands = b.candidates_for(art)
    assert task.candidates == [p.id for p in cands] and task.entity_page == "gold-card" and task.family == "Gold Card"
    assert task.prompt == b.prompt_for(art, cands, index_rule=AGENT_INDEX_RULE)
    assert "Its entity page is gold-card: UPDATE it" in task.prompt and "<page id=gold-card kind=entity>" in task.prompt
    assert len(task.prompt) <= build.limits.prompt_cap()
    assert build.next("a1").claim == task.claim  # asking again hands back the claim held


def test_a_rejected_write_lists_every_reason_and_keeps_the_claim(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    task = _claim(build, "a1", "doc_disputes_001")
    with pytest.raises(PageRejected) as bad_schema:
        build.write_page(task.claim, json.dumps({"action": "create", "steps": [{"text": "x", "links": [
            {"type": "rumour", "article_id": "doc_disputes_001"}]}]}))
    assert set(bad_schema.value.reasons) >= {"title: Field required", "intent: Field required"}
    assert any(r.startswith("steps.0.links.0.type:") for r in bad_schema.value.reasons)
    with pytest.raises(PageRejected) as bad:
        build.write_page(task.claim, _draft("doc_cards_gold_001", extra_links=[
            {"type": "policy", "article_id": "doc_not_in_corpus_999"}]))
    assert "unknown article id 'doc_not_in_corpus_999': cite only ids shown in the prompt" in bad.value.reasons
    assert "no step links to the article being processed (doc_disputes_001)" in bad.value.reasons
    assert Journal(ws, table="wiki_journal_rebuild").rows()["doc_disputes_001"]["status"] == "failed"
    out = build.write_page(task.claim, _draft("doc_disputes_001"))  # the same claim, fixed
    assert out["action"] == "create" and out["page_id"] == "disputing-a-charge"
    st = build.status()
    assert (st.accepted, st.rejected) == (1, 2) and st.agents["a1"]["rejected"] == 2
    assert st.rejections[1]["reasons"] == bad.value.reasons
    assert st.reason_counts["unknown article id …: cite only ids shown in the prompt"] == 1
    with pytest.raises(UserError, match="its page was accepted"):
        build.write_page(task.claim, _draft("doc_disputes_001"))


def test_an_update_needs_a_page_the_agent_was_shown_and_keeps_every_source(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    task = _claim(build, "a1", "doc_disputes_001")
    assert task.candidates == []  # nothing was written yet
    ScriptedAgent(build, "a2").step()  # meanwhile another agent creates gold-card
    upd = _draft("doc_disputes_001", action="update", page_id="gold-card", title="Gold Card", kind="entity",
                 sources=[])  # lists none of the page's sources
    with pytest.raises(PageRejected, match=r"page_id 'gold-card' is not one of the candidate pages \(none\)"):
        build.write_page(task.claim, upd)
    assert "<page id=gold-card kind=entity>" in build.read_page("gold-card", task.claim)
    assert build.write_page(task.claim, upd)["action"] == "update"  # read under the claim: a candidate now
    page = build.layer.read("gold-card")
    assert page.source_ids() == ["doc_cards_gold_001", "doc_disputes_001"]  # code kept the page's source
    assert page.model == "a1" and page.builder == "agent"


def test_two_claimers_in_threads_never_get_the_same_article(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    n = 4
    start = threading.Barrier(n)
    results: list = []

    def claim_once(name: str) -> None:
        start.wait()  # all ask at the same moment
        results.append(build.next(name))

    threads = [threading.Thread(target=claim_once, args=(f"t{i}",)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = [task.key for task in results if task is not None]
    assert len(keys) == n and len(set(keys)) == n  # four agents, four different articles
    assert len({task.claim for task in results}) == n


def _claim_in_process(ws_root: str, name: str, barrier, queue) -> None:
    from skillrag.wiki.agent import AgentBuild
    from skillrag.workspace import Workspace

    build = AgentBuild(Workspace.open(ws_root))
    barrier.wait()
    task = build.next(name)
    queue.put((name, task.key if task else None))


@pytest.mark.slow
def test_two_claimers_in_processes_never_get_the_same_article(ws):
    prepare_agent_build(ws)
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_claim_in_process, args=(str(ws.root), f"p{i}", barrier, queue)) for i in range(2)]
    for p in procs:
        p.start()
    got = dict(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=120)
    assert None not in got.values() and len(set(got.values())) == 2
    claims = AgentBuild(ws).status().claims
    assert sorted(c["key"] for c in claims) == sorted(got.values())


def test_parallel_agents_build_the_whole_layer_without_duplicates(ws, tmp_path, corpus_dir, make_ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    start = threading.Barrier(3)
    agents = [ScriptedAgent(build, f"a{i}") for i in range(3)]

    def work(agent: ScriptedAgent) -> None:
        start.wait()
        agent.run()

    threads = [threading.Thread(target=work, args=(a,)) for a in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    st = build.status()
    assert st.complete and not st.claims
    assert build.finish().swapped
    pages = load_pages(ws)
    assert len(pages) == 4 and len({p.title for p in pages}) == 4 and audit_structure(ws).ok
    non_aspect = [p for p in pages if p.kind != "aspect"]
    assert sorted(a for p in non_aspect for a in p.source_ids()) == sorted(ArticleStore(ws).hashes())


def test_a_write_on_a_page_changed_since_it_was_read_is_refused(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    a1 = ScriptedAgent(build, "a1")
    a1.step()  # gold-card created from doc_cards_gold_001
    t2 = _claim(build, "a2", "doc_cards_gold_002")
    stale = json.dumps(ScriptedPageModel(ws).answer(t2.prompt))
    t3 = _claim(build, "a3", "doc_cards_gold_003")
    build.write_page(t3.claim, json.dumps(ScriptedPageModel(ws).answer(t3.prompt)))  # a3 updates gold-card first
    with pytest.raises(PageRejected, match="page gold-card changed since you read it"):
        build.write_page(t2.claim, stale)
    t2 = build.next("a2")  # the same claim, with the page as it is now
    build.write_page(t2.claim, json.dumps(ScriptedPageModel(ws).answer(t2.prompt)))
    gold = build.layer.read("gold-card")
    assert gold.source_ids() == ["doc_cards_gold_001", "doc_cards_gold_003", "doc_cards_gold_002"]


def test_a_claim_whose_agent_died_expires_and_is_claimed_again(ws):
    clock = Clock()
    prepare_agent_build(ws, lease_s=600, clock=clock)
    build = AgentBuild(ws, clock=clock)
    dead = build.next("dead-agent")  # claims, then is killed: never writes
    clock.t += 599
    assert build.next("a2").key != dead.key  # still held
    clock.t += 2
    st = build.status()
    assert [c["expired"] for c in st.claims if c["agent"] == "dead-agent"] == [True]
    build.release(agent="a2")
    again = _claim(build, "a3", dead.key)  # expired: handed out again
    assert again.claim != dead.claim
    with pytest.raises(UserError, match="expired"):
        build.write_page(dead.claim, _draft(dead.key))
    # a person can also give a stopped agent's claims back at once
    build.release(claim=again.claim)
    held = build.next("a4")
    assert build.release(agent="a4") == [held.key]
    st = build.status()
    assert st.agents["dead-agent"]["expired"] == 1 and st.agents["a4"]["released"] == 1 and not st.claims


def test_a_build_killed_mid_write_resumes_and_loses_nothing(ws, tmp_path, corpus_dir, make_ws, monkeypatch):
    ref = make_ws(tmp_path / "ref", corpus_dir)
    prepare_agent_build(ref)
    ScriptedAgent(AgentBuild(ref), "a1").run()
    AgentBuild(ref).finish()
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    agent = ScriptedAgent(build, "a1")
    agent.step()
    agent.step()
    real_write = Layer.write

    def dying_write(self, page):
        raise KeyboardInterrupt  # killed after the journal stored the page, before the file

    monkeypatch.setattr(Layer, "write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        agent.step()
    monkeypatch.setattr(Layer, "write", real_write)
    assert any(r["status"] == "applying" for r in Journal(ws, table="wiki_journal_rebuild").rows().values())
    # the whole process is gone; a new one resumes the build: prepare again, other agents carry on
    rep = prepare_agent_build(ws)
    assert rep.resumed and rep.to_write == 3  # the journalled page is replayed, not asked again
    fresh = AgentBuild(ws)
    ScriptedAgent(fresh, "a2").run()
    assert fresh.finish().swapped
    assert _content(load_pages(ws)) == _content(load_pages(ref))
    assert Layer(ws).index_path.read_text() == Layer(ref).index_path.read_text()


def test_finish_swaps_only_a_complete_layer_and_the_old_one_stays_until_then(ws):
    build_wiki(ws)  # an extractive layer is live
    before = layer_fingerprint(ws)
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    ScriptedAgent(build, "a1").run(max_tasks=3)
    res = build.finish()
    assert not res.swapped and res.missing == ["3 articles not yet written (0 claimed)",
                                              "1 aspect pages not yet written (0 claimed)"]
    assert layer_fingerprint(ws) == before and Layer(ws).manifest().builder == "extractive"
    with pytest.raises(UserError, match="agent build is in progress"):
        build_wiki(ws, rebuild=True)  # the agents' staging layer is never overwritten
    ScriptedAgent(build, "a1").run()
    assert build.finish().swapped and Layer(ws).manifest().builder == "agent"
    with pytest.raises(WorkspaceError, match="no agent build in progress"):
        AgentBuild(ws)


def test_an_open_build_is_resumed_and_another_one_refused_unless_discarded(ws):
    rep = prepare_agent_build(ws)
    build = AgentBuild(ws)
    ScriptedAgent(build, "a1").step()
    again = prepare_agent_build(ws)
    assert again.resumed and again.build_id == rep.build_id and again.to_write == 5
    with pytest.raises(UserError, match="in progress: 1 of 6 articles written"):
        prepare_agent_build(ws, scope=["doc_cards_"])
    fresh = prepare_agent_build(ws, scope=["doc_cards_"], discard=True)
    assert fresh.build_id != rep.build_id and fresh.to_write == 3 and not fresh.resumed


def test_a_scoped_build_is_a_valid_layer_for_its_articles(ws):
    rep = prepare_agent_build(ws, scope=["doc_cards_", "doc_disputes_"])
    assert (rep.articles, rep.to_write, rep.aspects) == (4, 4, 0)  # one product family: no sibling to compare
    build = AgentBuild(ws)
    ScriptedAgent(build, "a1").run()
    assert build.finish().swapped
    cited = {a for p in load_pages(ws) for a in p.article_ids()}
    assert cited == {"doc_cards_gold_001", "doc_cards_gold_002", "doc_cards_gold_003", "doc_disputes_001"}
    audit = audit_structure(ws)
    assert audit.ok and audit.scope == ["doc_cards_", "doc_disputes_"] and audit.out_of_scope == 2
    assert audit.articles == 4 and audit.coverage == 1.0
    assert Layer(ws).manifest().scope == ["doc_cards_", "doc_disputes_"]
    with pytest.raises(UserError, match="no article id starts with"):
        prepare_agent_build(ws, scope=["nothing_"], rebuild=True)


def test_an_incremental_build_writes_only_what_changed(ws, corpus_dir, write_articles, articles):
    prepare_agent_build(ws)
    ScriptedAgent(AgentBuild(ws), "a1").run()
    AgentBuild(ws).finish()
    before = {p.id: p for p in load_pages(ws)}
    assert prepare_agent_build(ws).up_to_date
    arts = dict(articles)
    title, body = arts["doc_cards_gold_002"]
    arts["doc_cards_gold_002"] = (title, body + "\nReplacements are free for premium members.\n")
    del arts["doc_savings_blue_002"]
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    rep = prepare_agent_build(ws)
    assert rep.incremental and rep.diff.changed == ["doc_cards_gold_002"] and rep.diff.removed == ["doc_savings_blue_002"]
    assert rep.to_write == 1 and rep.aspects == 0 and "overview" in rep.deleted  # blue has no sibling left
    build = AgentBuild(ws)
    agent = ScriptedAgent(build, "a2")
    assert agent.run() == 1 and agent.log[0][0] == "doc_cards_gold_002"
    assert build.finish().swapped
    after = {p.id: p for p in load_pages(ws)}
    assert after["disputes"] == before["disputes"]
    assert "doc_savings_blue_002" not in after["blue-savings"].article_ids()
    assert after["gold-card"].built_from["doc_cards_gold_002"] == ArticleStore(ws).get("doc_cards_gold_002").content_hash
    assert audit_structure(ws).ok and not audit_structure(ws).stale
    with pytest.raises(UserError, match="pass --rebuild"):  # an llm build does not silently replace it
        build_wiki(ws, builder="llm", model=ScriptedPageModel(ws).model)


def test_agent_names_are_checked(ws):
    prepare_agent_build(ws)
    with pytest.raises(UserError, match="--agent NAME"):
        AgentBuild(ws).next("")
    with pytest.raises(UserError, match="--agent NAME"):
        AgentBuild(ws).next("two words")


def test_families_and_aspects_are_found_once_per_build_and_corpus_state(ws, monkeypatch, corpus_dir, write_articles,
                                                                          articles):
    import skillrag.wiki.llm as llm_mod

    prepare_agent_build(ws)
    first = AgentBuild(ws).builder()

    def found_again(*args, **kwargs):
        raise AssertionError("families or aspects found again")

    monkeypatch.setattr(llm_mod, "find_families", found_again)
    monkeypatch.setattr(llm_mod, "find_aspects", found_again)
    again = AgentBuild(ws).builder()  # what each script process does: read them back
    fams = [(f.key, f.title, f.found_by, f.ids()) for f in first.structure()[0]]
    assert [(f.key, f.title, f.found_by, f.ids()) for f in again.structure()[0]] == fams
    asp = {pid: (a.name, a.ids(), [m.key_line for m in a.members]) for pid, a in first.aspect_targets().items()}
    assert {pid: (a.name, a.ids(), [m.key_line for m in a.members]) for pid, a in again.aspect_targets().items()} == asp
    arts = dict(articles)
    arts["doc_disputes_001"] = (arts["doc_disputes_001"][0], arts["doc_disputes_001"][1] + "\nMore.\n")
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    with pytest.raises(AssertionError, match="found again"):  # the corpus changed: found again, not reused
        AgentBuild(ws).builder()


def test_aspect_pages_are_handed_out_while_articles_are_still_claimed_and_keep_their_ids(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    slow = build.next("slow", key="doc_disputes_001")  # holds its article to the end
    early = _claim(build, "early", "doc_savings_blue_002")
    out = build.write_page(early.claim, _draft("doc_savings_blue_002", title="Overview", kind="entity"))
    assert out["page_id"] == "overview-2"  # "overview" is the aspect page's id: never taken by an article page
    agent = ScriptedAgent(build, "fast")
    agent.run()
    assert [k for k, *_ in agent.log][-1] == "aspect:overview"  # written while "slow" still holds its claim
    assert [c["key"] for c in build.status().claims] == ["doc_disputes_001"]
    build.write_page(slow.claim, _draft("doc_disputes_001"))
    res = build.finish()
    assert res.swapped and {p.id for p in load_pages(ws)} >= {"overview", "overview-2"}


def test_a_long_page_is_refused_with_its_size_and_read_page_full_shows_all_of_it(ws):
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    task = build.next("a1", key="doc_disputes_001")
    steps = [{"text": f"Step {i}: " + "check the dispute window carefully " * 12,
              "links": [{"type": "procedure", "article_id": "doc_disputes_001"}]} for i in range(30)]
    big = {**json.loads(_draft("doc_disputes_001")), "steps": steps}
    with pytest.raises(PageRejected, match=r"page longer than 12000 characters without its source list \(1\d{4}\): condense"):
        build.write_page(task.claim, json.dumps(big))
    build.write_page(task.claim, json.dumps({**big, "steps": steps[:20]}))
    cut, full = build.read_page("disputing-a-charge"), build.read_page("disputing-a-charge", full=True)
    assert "… (truncated)" in cut and "Step 19:" not in cut  # as a candidate is shown to the model
    assert "Step 19:" in full and full == Layer(ws, root=build.layer.root).page_path("disputing-a-charge").read_text()


def test_check_writes_nothing_and_a_page_read_as_a_draft_goes_back_unchanged(ws):
    """Found by the agents who built the τ² layer: every check cost a real write, and merging meant
    parsing the rendered page back into a draft. ``write_page(check=True)`` validates only;
    ``read_page(as_draft=True)`` is the page as an update draft that writes back as it is."""
    prepare_agent_build(ws)
    build = AgentBuild(ws)
    task = build.next("a1", key="doc_disputes_001")
    checked = build.write_page(task.claim, _draft("doc_disputes_001"), check=True)
    assert checked["checked"] is True and checked["action"] == "create" and 0 < checked["size"] <= checked["room"]
    assert build.status().accepted == 0 and not build.layer.page_path("disputing-a-charge").exists()
    with pytest.raises(PageRejected, match="no step links to the article"):
        build.write_page(task.claim, _draft("doc_cards_gold_001"), check=True)
    assert build.status().rejected == 0  # a check is not a journalled rejection
    out = build.write_page(task.claim, _draft("doc_disputes_001"))  # the claim survived both checks
    assert out["page_id"] == "disputing-a-charge" and out["size"] == checked["size"]
    ScriptedAgent(build, "a0").step()  # the gold entity page exists now
    before = build.layer.read("gold-card")
    task2 = build.next("a2", key=next(i for i in ArticleStore(ws).hashes()
                                      if i.startswith("doc_cards_gold_") and i not in before.source_ids()))
    draft = json.loads(build.read_page("gold-card", task2.claim, as_draft=True))
    assert draft["action"] == "update" and draft["page_id"] == "gold-card"
    assert [s["text"] for s in draft["steps"]] == [s.text for s in before.steps]
    draft["steps"][0]["links"].append({"type": "reference", "article_id": task2.article_id})
    assert build.write_page(task2.claim, json.dumps(draft))["action"] == "update"
    after = build.layer.read("gold-card")
    assert [s.text for s in after.steps] == [s.text for s in before.steps]
    assert task2.article_id in after.source_ids() and set(before.source_ids()) <= set(after.source_ids())


def test_an_entity_page_of_a_large_family_gets_room_for_every_article():
    """A 47-article family's entity page must list every article, under a cap made for 25-source pages:
    the agents building the τ² layer ran into it by article 18. The room grows with the sources."""
    from skillrag.wiki.llm import LLMBuildLimits

    lim = LLMBuildLimits()
    assert lim.page_room(10) == lim.page_room(24) == 12000 and lim.step_room(25) == 30
    assert lim.page_room(25) == 12500 and lim.page_room(47) == 47 * 500 and lim.step_room(47) == 30 + 11
