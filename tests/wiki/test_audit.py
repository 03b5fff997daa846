from __future__ import annotations

from skillrag.wiki import Layer, audit_links, audit_structure, build_wiki, fix_links, load_pages
from skillrag.wiki.page import Link, LinkType, Page, SourceRef, Step
from skillrag.wiki.testing import OverlapJudge


def test_structural_audit_finds_every_planted_defect(ws):
    build_wiki(ws)
    layer = Layer(ws)
    pages = {p.id: p for p in load_pages(ws)}
    gold = next(p for p in pages.values() if "doc_cards_gold_001" in p.source_ids())
    disputes = next(p for p in pages.values() if "doc_disputes_001" in p.source_ids())
    # 1. an article no page cites: drop the disputes page's only source (the page is kept, sourceless)
    layer.write(disputes.model_copy(update={"sources": (), "steps": (Step(text="Talk to the team."),)}))
    # 2. a dangling id on the gold page
    extra = Step(text="See the retired policy.", links=(Link(type=LinkType.policy, article_id="doc_retired_404"),))
    layer.write(gold.model_copy(update={"steps": (*gold.steps, extra)}))
    # 3. a page missing from the index, 4. an index line without a page, 5. a malformed page file
    orphan = Page(id="orphan-page", title="Orphan", sources=(SourceRef(id="doc_cards_gold_001"),),
                  steps=(Step(text="x", links=(Link(type="reference", article_id="doc_cards_gold_001"),)),))
    layer.write(orphan)
    idx = layer.index_path.read_text(encoding="utf-8")
    line = layer.index_entries()["orphan-page"]
    idx = idx.replace(line + "\n", "") + "- [Ghost](pages/ghost-page.md) — 1 sources\n"
    layer.index_path.write_text(idx, encoding="utf-8")
    (layer.pages_dir / "broken.md").write_text("---\nid: broken\ntitle: B\n---\n## Nonsense\n", encoding="utf-8")

    rep = audit_structure(ws)
    assert not rep.ok
    assert rep.unreferenced == ["doc_disputes_001"]
    assert rep.dangling == [(gold.id, "doc_retired_404")]
    assert rep.no_sources == [disputes.id]
    assert rep.not_in_index == ["orphan-page"]
    assert rep.index_orphans == ["ghost-page"]
    assert len(rep.malformed) == 1 and "broken.md" in rep.malformed[0] and "unknown section" in rep.malformed[0]
    assert rep.referenced == 5 and rep.articles == 6 and abs(rep.coverage - 5 / 6) < 1e-9


def test_stale_links_are_reported_after_an_article_changes(ws, corpus_dir, write_articles, articles):
    build_wiki(ws)
    arts = dict(articles)
    arts["doc_disputes_001"] = (arts["doc_disputes_001"][0], arts["doc_disputes_001"][1] + "\nNew text.\n")
    write_articles(corpus_dir, arts)
    from skillrag.corpus import ingest

    ingest(ws, [corpus_dir])
    rep = audit_structure(ws)
    assert rep.ok and [a for _, a in rep.stale] == ["doc_disputes_001"]


def _plant_wrong_link(ws) -> str:
    """Attribute a claim about fees to the disputes article (which says nothing of the sort)."""
    layer = Layer(ws)
    gold = next(p for p in load_pages(ws) if "doc_cards_gold_001" in p.source_ids())
    wrong = Step(text="Quarterly platinum surcharge applies abroad.",
                 links=(Link(type=LinkType.fee, article_id="doc_disputes_001"),))
    layer.write(gold.model_copy(update={
        "steps": (*gold.steps, wrong), "sources": (*gold.sources, SourceRef(id="doc_disputes_001"))}))
    return gold.id


def test_semantic_audit_flags_the_planted_link_and_fix_removes_it(ws):
    build_wiki(ws)
    gold_id = _plant_wrong_link(ws)
    judge = OverlapJudge()
    rep = audit_links(ws, judge.model)
    n_links = sum(len(p.article_ids()) for p in load_pages(ws))
    assert len(rep.judgements) == n_links == judge.calls
    flagged = [(j.page_id, j.article_id) for j in rep.flagged]
    assert (gold_id, "doc_disputes_001") in flagged
    assert all(j.reason for j in rep.judgements)
    assert rep.pass_rate == (n_links - len(rep.flagged)) / n_links < 1.0
    # a rerun judges nothing again: verdicts are cached per page and article hash
    again = audit_links(ws, judge.model)
    assert judge.calls == n_links and again.cached == n_links and again.pass_rate == rep.pass_rate
    fixed = fix_links(ws, rep.flagged)
    assert fixed.links_removed == len(rep.flagged)
    gold = Layer(ws).read(gold_id)
    assert "doc_disputes_001" not in gold.article_ids()
    assert all("platinum surcharge" not in s.text for s in gold.steps)
    assert audit_structure(ws).ok  # the disputes article is still cited by its own page
    assert "link removed from page" in Layer(ws).log_path.read_text(encoding="utf-8")


def test_semantic_audit_skips_dangling_links(ws):
    build_wiki(ws)
    layer = Layer(ws)
    page = load_pages(ws)[0]
    dang = Step(text="x", links=(Link(type="policy", article_id="doc_gone_1"),))
    layer.write(page.model_copy(update={"steps": (*page.steps, dang)}))
    rep = audit_links(ws, OverlapJudge().model)
    assert all(j.article_id != "doc_gone_1" for j in rep.judgements)
