"""The extractive layer over the real tau2-banking articles (reads ../shared; not committed)."""

from __future__ import annotations

import time

import pytest

from skillrag.corpus import ingest
from skillrag.wiki import audit_structure, build_wiki, load_pages
from skillrag.workspace import Workspace


@pytest.mark.shared
def test_extractive_tau2_layer_builds_fast_and_covers_every_article(tau2_dir, tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [tau2_dir / "documents"])
    t0 = time.perf_counter()
    rep = build_wiki(ws, builder="extractive")
    seconds = time.perf_counter() - t0
    assert seconds < 120, f"extractive build took {seconds:.1f} s"
    audit = audit_structure(ws)
    print(f"\ntau2 extractive: {rep.pages} pages over {rep.articles} articles in {seconds:.2f} s; "
          f"coverage {audit.referenced}/{audit.articles}, {len(audit.dangling)} dangling")
    assert rep.articles == 698
    assert audit.ok and audit.referenced == audit.articles == 698
    assert not audit.dangling and not audit.no_sources and not audit.not_in_index and not audit.malformed
    pages = load_pages(ws)
    assert all(len(p.sources) <= ws.config.wiki.max_group for p in pages)
    assert sum(len(p.sources) for p in pages) == 698  # every article on exactly one page
    assert all(p.intent and p.solves and p.steps for p in pages)
    # the product is the group: every page's sources share one id stem
    from skillrag.wiki.extractive import group_key

    assert all(len({group_key(s) for s in p.source_ids()}) == 1 for p in pages)
