from __future__ import annotations

from skillrag.corpus import ingest
from skillrag.wiki import Layer, audit_structure, build_wiki, load_pages


def _files(ws) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in Layer(ws).page_files()}


def test_extractive_rebuilds_only_pages_touching_changed_removed_or_new_articles(ws, corpus_dir, write_articles,
                                                                                 articles):
    build_wiki(ws)
    before = _files(ws)
    arts = dict(articles)
    title, body = arts["doc_cards_gold_001"]
    arts["doc_cards_gold_001"] = (title, body.replace("$95", "$120"))
    del arts["doc_disputes_001"]
    arts["doc_loans_auto_001"] = ("Auto Loan: Applying", "## How to Apply\n\nSubmit the application online.\n")
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    rep = build_wiki(ws)
    assert rep.diff.changed == ["doc_cards_gold_001"]
    assert rep.diff.removed == ["doc_disputes_001"] and rep.diff.new == ["doc_loans_auto_001"]
    after = _files(ws)
    gold = next(p for p in load_pages(ws) if "doc_cards_gold_001" in p.source_ids())
    loans = next(p for p in load_pages(ws) if "doc_loans_auto_001" in p.source_ids())
    assert rep.updated == [gold.id] and rep.created == [loans.id]
    assert len(rep.deleted) == 1 and rep.deleted[0] + ".md" not in after
    # the untouched page is byte-identical
    untouched = set(before) & set(after) - {gold.id + ".md"}
    assert untouched and all(before[n] == after[n] for n in untouched)
    assert any("$120" in s.text for s in gold.steps)
    audit = audit_structure(ws)
    assert audit.ok and not audit.stale
    log = Layer(ws).log_path.read_text(encoding="utf-8")
    assert "doc_cards_gold_001 (changed) placed on page" in log and "doc_disputes_001 (removed) dropped" in log
    # nothing changed since: nothing is written
    again = build_wiki(ws)
    assert again.up_to_date and _files(ws) == after


def test_rebuild_replaces_the_layer(ws):
    build_wiki(ws)
    rep = build_wiki(ws, rebuild=True)
    assert len(rep.created) == rep.pages == 3 and audit_structure(ws).ok
