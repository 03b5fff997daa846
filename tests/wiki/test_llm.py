from __future__ import annotations

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.errors import UserError
from skillrag.wiki import Layer, audit_structure, build_wiki, estimate_build, layer_fingerprint, load_pages
from skillrag.wiki.llm import Journal, LLMBuilder, LLMBuildLimits
from skillrag.wiki.testing import Interrupt, ScriptedPageModel


def llm_build(ws, model, **kw):
    return build_wiki(ws, builder="llm", model=model.model, **kw)


def _page_with(pages, aid):
    return next(p for p in pages if aid in p.source_ids() and p.kind != "aspect")


def test_create_then_update_merges_related_articles(ws):
    model = ScriptedPageModel(ws)
    rep = llm_build(ws, model)
    pages = {p.id: p for p in load_pages(ws)}
    # two product families -> two entity pages, the lone article a topic page, and one aspect page
    # (the overview of each product) written after the article pass
    assert sorted(p.kind for p in pages.values()) == ["aspect", "entity", "entity", "topic"] and not rep.failed
    gold = _page_with(pages.values(), "doc_cards_gold_001")
    assert gold.kind == "entity" and gold.title == "Gold Card"  # the family's title, named by code
    assert gold.source_ids() == ["doc_cards_gold_001", "doc_cards_gold_002", "doc_cards_gold_003"]
    assert gold.builder == "llm" and gold.model == "function:scripted-pages"
    assert set(gold.built_from) == set(gold.source_ids())
    assert all(s.summary for s in gold.sources)  # the model's one-line summaries
    assert sorted(rep.created) == sorted(pages) and rep.updated == []  # pages new in this build count as created
    # the update prompt showed the entity page created from the first gold article, and said to update it
    second = next(p for p in model.prompts if "id: doc_cards_gold_002" in p)
    assert f"<page id={gold.id} kind=entity>" in second and f"Its entity page is {gold.id}: UPDATE it" in second
    log = Layer(ws).log_path.read_text(encoding="utf-8")
    assert f"doc_cards_gold_001 created entity page {gold.id}" in log
    assert f"doc_cards_gold_002 updated entity page {gold.id}" in log and "model function:scripted-pages" in log
    aspect = next(p for p in pages.values() if p.kind == "aspect")
    assert set(aspect.source_ids()) == {"doc_cards_gold_001", "doc_savings_blue_001"}
    assert f"aspect:{aspect.id} created aspect page {aspect.id}" in log
    assert set(Layer(ws).index_entries()) == set(pages)
    assert audit_structure(ws).ok
    assert rep.input_tokens > 0 and rep.output_tokens > 0 and rep.requests == 7


@pytest.mark.parametrize(
    "fault, reason",
    [
        ("unknown", "unknown article id 'doc_not_in_corpus_999'"),
        ("uncited", "no step links to the article being processed (doc_cards_gold_002)"),
        ("bad-update", "page_id 'no-such-page' is not one of the candidate pages"),
    ],
)
def test_invalid_page_is_rejected_and_retried_with_the_reasons(ws, fault, reason):
    model = ScriptedPageModel(ws, invalid_first={"doc_cards_gold_002": fault})
    rep = llm_build(ws, model)
    assert not rep.failed
    prompts = [p for p in model.prompts if "id: doc_cards_gold_002" in p]
    assert len(prompts) == 2 and reason not in prompts[0] and reason in prompts[1]
    cited = {aid for p in load_pages(ws) for aid in p.article_ids()}
    assert "doc_not_in_corpus_999" not in cited and "doc_cards_gold_002" in cited
    assert audit_structure(ws).ok


def test_an_article_of_a_family_must_go_on_the_family_entity_page(ws):
    from skillrag.wiki.llm import FamilyContext, PageDraft, validate_draft

    art = ArticleStore(ws).get("doc_cards_gold_002")
    page = load_pages(ws)  # no layer yet: build one to have an entity page to point at
    assert page == []
    llm_build(ws, ScriptedPageModel(ws))
    gold = _page_with(load_pages(ws), "doc_cards_gold_001")
    fam = FamilyContext(key="doc_cards_gold", title="Gold Card", ids=("doc_cards_gold_001", art.id), entity=True,
                        entity_page=gold.id)
    draft = PageDraft(action="create", kind="topic", title="Lost cards", intent="Replace a lost card.",
                      steps=[{"text": "Replace it.", "links": [{"type": "procedure", "article_id": art.id}]}],
                      sources=[{"id": art.id}])
    reasons = validate_draft(draft, article=art, known_ids=lambda ids: set(ids), candidates={gold.id: gold},
                             limits=LLMBuildLimits(), family=fam)
    assert any(f"update its entity page {gold.id}" in r for r in reasons)
    first = validate_draft(draft, article=art, known_ids=lambda ids: set(ids), candidates={}, limits=LLMBuildLimits(),
                           family=FamilyContext(key="doc_cards_gold", title="Gold Card", ids=(art.id,), entity=True))
    assert any('create it with kind "entity"' in r for r in first)
    aspect = draft.model_copy(update={"kind": "aspect"})
    assert any("aspect pages are written" in r for r in validate_draft(
        aspect, article=art, known_ids=lambda ids: set(ids), candidates={}, limits=LLMBuildLimits()))


def test_article_never_valid_is_reported_then_retried_on_the_next_build(ws):
    bad = ScriptedPageModel(ws, always_invalid={"doc_disputes_001"})
    rep = llm_build(ws, bad)
    assert list(rep.failed) == ["doc_disputes_001"]
    assert "unknown article id" in rep.failed["doc_disputes_001"][0]
    # retried within the build: 1 + max_retries calls per pass, over 2 passes
    assert sum("id: doc_disputes_001" in p for p in bad.prompts) == 2 * 3
    assert Journal(ws).rows()["doc_disputes_001"]["status"] == "failed"
    assert audit_structure(ws).unreferenced == ["doc_disputes_001"]
    # the next build processes only the failed article (the aspect page is already done)
    good = ScriptedPageModel(ws)
    rep2 = llm_build(ws, good)
    assert not rep2.failed and len(good.prompts) == 1 and "id: doc_disputes_001" in good.prompts[0]
    assert audit_structure(ws).ok


def test_resume_after_interruption_equals_uninterrupted_build(ws, tmp_path, corpus_dir, make_ws):
    ref = make_ws(tmp_path / "ref", corpus_dir)
    llm_build(ref, ScriptedPageModel(ref))
    with pytest.raises(Interrupt):
        llm_build(ws, ScriptedPageModel(ws, interrupt_at=4))
    assert len(load_pages(ws)) >= 1  # the work done before the kill is kept
    again = ScriptedPageModel(ws)
    llm_build(ws, again)
    assert len(again.prompts) == 3 + 1  # only the articles not yet done, then the aspect page
    assert layer_fingerprint(ws) == layer_fingerprint(ref)
    assert Layer(ws).index_path.read_text() == Layer(ref).index_path.read_text()
    assert audit_structure(ws).ok


def test_kill_between_journal_and_page_write_loses_nothing(ws, tmp_path, corpus_dir, make_ws, monkeypatch):
    ref = make_ws(tmp_path / "ref", corpus_dir)
    llm_build(ref, ScriptedPageModel(ref))
    real_write = Layer.write
    calls = {"n": 0}

    def dying_write(self, page):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # killed after the journal recorded the page, before the file
        real_write(self, page)

    monkeypatch.setattr(Layer, "write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        llm_build(ws, ScriptedPageModel(ws))
    monkeypatch.setattr(Layer, "write", real_write)
    assert any(r["status"] == "applying" for r in Journal(ws).rows().values())
    again = ScriptedPageModel(ws)
    llm_build(ws, again)
    assert len(again.prompts) == 3 + 1  # the journalled article is replayed, not asked again; then the aspect
    assert layer_fingerprint(ws) == layer_fingerprint(ref)
    assert Layer(ws).index_path.read_text() == Layer(ref).index_path.read_text()


def test_concurrent_build_covers_every_article_without_duplicate_pages(ws):
    model = ScriptedPageModel(ws, delay=0.05)
    rep = llm_build(ws, model, concurrency=4)
    pages = load_pages(ws)
    assert model.max_in_flight == 4  # the calls really overlapped
    # same-group articles raced to create the same page; the losers were recomputed, not duplicated
    assert len(model.prompts) > 6
    assert not rep.failed and audit_structure(ws).ok
    assert len(pages) == 4 and len({p.title for p in pages}) == 4
    non_aspect = [p for p in pages if p.kind != "aspect"]
    assert sorted(a for p in non_aspect for a in p.source_ids()) == sorted(ArticleStore(ws).hashes())


def test_no_merge_variant_gives_one_page_per_article_and_no_candidates(ws, corpus_dir, write_articles, articles):
    model = ScriptedPageModel(ws, merge=False)
    build_wiki(ws, builder="llm", model=model.model, variant="no-merge")
    pages = load_pages(ws)
    assert len(pages) == 6 and all(len(p.sources) == 1 for p in pages)
    assert all("Candidate pages (selected by search; the rest of the wiki is not shown):\n(none)" in p
               for p in model.prompts)
    # after a change the article's own page is its only candidate, and it is updated in place
    arts = dict(articles)
    arts["doc_disputes_001"] = (arts["doc_disputes_001"][0], arts["doc_disputes_001"][1] + "\nMore.\n")
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    again = ScriptedPageModel(ws, merge=False)
    rep = build_wiki(ws, builder="llm", model=again.model, variant="no-merge")
    assert len(again.prompts) == 1 and again.prompts[0].count("<page id=") == 1
    assert len(rep.updated) == 1 and not rep.created and len(load_pages(ws)) == 6


def test_llm_variants_pooled_links_and_no_intent(ws, tmp_path, corpus_dir, make_ws):
    build_wiki(ws, builder="llm", model=ScriptedPageModel(ws).model, variant="pooled-links")
    pages = load_pages(ws)
    assert pages and all(not s.links for p in pages for s in p.steps) and all(p.pooled_links for p in pages)
    other = make_ws(tmp_path / "o", corpus_dir)
    build_wiki(other, builder="llm", model=ScriptedPageModel(other).model, variant="no-intent")
    gold = next(p for p in load_pages(other) if "doc_cards_gold_001" in p.source_ids())
    assert gold.solves == () and "The annual fee is $95" in gold.intent


def test_dry_run_estimates_tokens_without_calling_the_model(ws):
    model = ScriptedPageModel(ws)
    est = estimate_build(ws, model=model.model)
    assert est["articles"] == 6 and est["aspects"] == 1 and est["requests"] == 7
    assert est["input_tokens"] > 6 * 500 and est["output_tokens"] > 0
    assert model.prompts == []
    llm_build(ws, ScriptedPageModel(ws))
    assert estimate_build(ws, model=model.model)["articles"] == 0


def test_llm_build_without_a_model_is_a_clear_error(ws):
    with pytest.raises(UserError, match="--model"):
        build_wiki(ws, builder="llm")


def test_maintenance_rebuilds_only_what_changed_or_removed_articles_touch(ws, corpus_dir, write_articles, articles):
    llm_build(ws, ScriptedPageModel(ws))
    before = {p.id: p for p in load_pages(ws)}
    arts = dict(articles)
    title, body = arts["doc_cards_gold_002"]
    arts["doc_cards_gold_002"] = (title, body + "\nReplacements are free for premium members.\n")
    del arts["doc_savings_blue_002"]
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    model = ScriptedPageModel(ws)
    rep = llm_build(ws, model)
    assert rep.diff.changed == ["doc_cards_gold_002"] and rep.diff.removed == ["doc_savings_blue_002"]
    # only the changed article is sent to the model; with blue down to one article, gold has no
    # sibling family left to compare with, so the overview aspect page goes
    assert len(model.prompts) == 1 and "id: doc_cards_gold_002" in model.prompts[0]
    after = {p.id: p for p in load_pages(ws)}
    gold = _page_with(after.values(), "doc_cards_gold_001").id
    blue = _page_with(after.values(), "doc_savings_blue_001").id
    disputes = _page_with(after.values(), "doc_disputes_001").id
    assert set(rep.updated) == {gold, blue} and not rep.created and rep.deleted == ["overview"]
    assert after[disputes] == before[disputes]
    assert "doc_savings_blue_002" not in after[blue].article_ids()
    new_hash = ArticleStore(ws).get("doc_cards_gold_002").content_hash
    assert after[gold].built_from["doc_cards_gold_002"] == new_hash
    audit = audit_structure(ws)
    assert audit.ok and not audit.stale
    assert llm_build(ws, ScriptedPageModel(ws)).up_to_date


def test_prompt_is_bounded_by_code_selected_candidates(ws):
    limits = LLMBuildLimits(candidate_pages=2, max_candidate_chars=500, max_article_chars=300)
    model = ScriptedPageModel(ws)
    builder = LLMBuilder(ws, model.model, limits=limits)
    res = builder.run(ArticleStore(ws).list())
    assert not res.failed
    assert max(len(p) for p in model.prompts) <= limits.prompt_cap()
    assert all(p.count("<page id=") <= 2 for p in model.prompts)


def test_a_full_topic_page_is_refused_but_an_entity_page_is_never_split(ws):
    from skillrag.wiki.llm import PageDraft, validate_draft

    model = ScriptedPageModel(ws)
    res = LLMBuilder(ws, model.model, limits=LLMBuildLimits(max_sources=2)).run(ArticleStore(ws).list())
    assert not res.failed
    gold = [p for p in load_pages(ws) if p.kind == "entity" and "doc_cards_gold_001" in p.source_ids()]
    assert len(gold) == 1 and len(gold[0].sources) == 3  # the family's one page lists all three
    art = ArticleStore(ws).get("doc_disputes_001")
    topic = gold[0].model_copy(update={"id": "big-topic", "kind": "topic"})
    draft = PageDraft(action="update", page_id="big-topic", title="T", intent="I",
                      steps=[{"text": "s", "links": [{"type": "procedure", "article_id": art.id}]}])
    reasons = validate_draft(draft, article=art, known_ids=lambda ids: set(ids), candidates={"big-topic": topic},
                             limits=LLMBuildLimits(max_sources=2))
    assert "4 sources > 2: create a new page instead" in reasons
    assert audit_structure(ws).ok


def test_prompt_lists_index_lines_of_the_next_closest_pages_bounded(ws):
    from skillrag.wiki.layer import index_line

    llm_build(ws, ScriptedPageModel(ws))
    pages = {p.id: p for p in load_pages(ws)}
    builder = LLMBuilder(ws, ScriptedPageModel(ws).model, limits=LLMBuildLimits(candidate_pages=1, index_lines=2))
    art = ArticleStore(ws).get("doc_disputes_001")
    cands = builder.candidates_for(art)
    lines = builder.index_lines_for(art, cands)
    prompt = builder.prompt_for(art, cands)
    assert len(cands) == 1 and 1 <= len(lines) <= 2
    assert all(ln in Layer(ws).index_path.read_text() for ln in lines)  # the lines index.md holds
    assert index_line(pages[cands[0].id]) not in lines  # a candidate is shown in full, not twice
    block = prompt.split("More pages from index.md", 1)[1].split("Article to place:", 1)[0]
    assert "only the candidate pages above can be updated here" in block and all(ln in block for ln in lines)
    assert len(prompt) <= builder.limits.prompt_cap()


def test_the_page_size_cap_leaves_out_the_source_list_code_keeps(tmp_path):
    """A large family's entity page lists every article: its source list (and their hashes) may exceed
    max_page_chars; only what the writer wrote is capped, so the page is not refused for ever."""
    from skillrag.wiki.page import render_page
    from skillrag.wiki.testing import synthetic_corpus
    from skillrag.workspace import Workspace

    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [synthetic_corpus(tmp_path / "docs", 40, per_group=40)])
    model = ScriptedPageModel(ws)
    res = LLMBuilder(ws, model.model, limits=LLMBuildLimits(max_page_chars=3000, max_steps=3)).run(
        ArticleStore(ws).list())
    assert not res.failed
    page = next(p for p in load_pages(ws) if p.kind == "entity")
    assert len(page.sources) == 40 and len(page.steps) <= 3 and len(render_page(page)) > 3000
