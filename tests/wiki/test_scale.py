"""Bounded prompt size on a synthetic 5,000-article corpus."""

from __future__ import annotations

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.wiki import build_wiki, load_pages
from skillrag.wiki.llm import LLMBuilder, LLMBuildLimits
from skillrag.wiki.testing import ScriptedPageModel, synthetic_corpus
from skillrag.workspace import Workspace


@pytest.mark.slow
def test_build_prompt_stays_under_a_fixed_cap_at_5000_articles(tmp_path):
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [synthetic_corpus(tmp_path / "docs", 5000)])
    build_wiki(ws)  # an existing layer of 1,000 pages for the candidates to come from
    assert len(load_pages(ws)) == 1000
    limits = LLMBuildLimits()
    model = ScriptedPageModel(ws)
    builder = LLMBuilder(ws, model.model, limits=limits)
    arts = ArticleStore(ws).list()
    sample = arts[::50]
    sizes = []
    for art in sample:
        cands = builder.candidates_for(art)
        assert len(cands) <= limits.candidate_pages
        sizes.append(len(builder.prompt_for(art, cands)))
    # the prompt is bounded by the cap, whatever the number of pages and articles
    # candidates with their source ids, the index lines of the next closest pages, the family, the article
    assert max(sizes) <= limits.prompt_cap() < 55_000
    # the right page is among the code-selected candidates
    first = builder.candidates_for(arts[0])
    assert any(arts[0].id in p.source_ids() for p in first)
    # and the real loop's prompts stay under the cap while it merges into the big layer
    res = builder.run(arts[:40])
    assert not res.failed and res.max_prompt_chars <= limits.prompt_cap()
    assert max(len(p) for p in model.prompts) <= limits.prompt_cap()
