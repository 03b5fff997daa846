"""Traces of a wiki build: one skillrag.wiki.build span, one skillrag.wiki.article span per article pass of
the llm builder (its model calls inside), recorded with the SDK's in-memory exporter."""

from __future__ import annotations

from skillrag.tracing.testing import attributes_of, children, one, record_spans
from skillrag.wiki import build_wiki
from skillrag.wiki.testing import ScriptedPageModel


def test_llm_build_traces_each_article_pass(ws):
    model = ScriptedPageModel(ws, always_invalid={"doc_disputes_001"})
    with record_spans() as exporter:
        rep = build_wiki(ws, builder="llm", model=model.model)
    spans = exporter.get_finished_spans()
    build = one(spans, "skillrag.wiki.build")
    assert build.parent is None
    b = dict(build.attributes)
    assert (b["skillrag.wiki.builder"], b["skillrag.wiki.failed"], b["skillrag.wiki.articles"]) == ("llm", 1, rep.articles)
    passes = [s for s in children(spans, build) if s.name == "skillrag.wiki.article"]
    # every article once, and the failed one again in the second pass
    ids = [s.attributes["skillrag.article_id"] for s in passes]
    assert sorted(set(ids)) == sorted(ids[: rep.articles]) and ids.count("doc_disputes_001") == 2
    failed = [a for a in attributes_of(spans, "skillrag.wiki.article") if a["skillrag.article_id"] == "doc_disputes_001"]
    assert all(a["skillrag.wiki.ok"] is False and "unknown article id" in a["skillrag.wiki.reasons"][0] for a in failed)
    ok = next(s for s in passes if s.attributes["skillrag.article_id"] != "doc_disputes_001")
    assert ok.attributes["skillrag.wiki.ok"] is True
    # the model calls of a pass are pydantic-ai's own spans, inside it
    assert any(c.name.startswith("invoke_agent") for c in children(spans, ok))
    assert one(spans, "skillrag.wiki.aspects").parent.span_id == build.context.span_id


def test_extractive_build_is_one_span(ws):
    with record_spans() as exporter:
        rep = build_wiki(ws, builder="extractive")
    build = one(exporter.get_finished_spans(), "skillrag.wiki.build")
    assert build.attributes["skillrag.wiki.builder"] == "extractive"
    assert build.attributes["skillrag.wiki.created"] == len(rep.created) > 0
