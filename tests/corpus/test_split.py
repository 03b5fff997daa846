"""Section-level articles: long documents split at their headings into byte-exact slices."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.corpus.model import SourceArticle
from skillrag.corpus.split import section_slug, split_document
from skillrag.errors import ArticleNotFound
from skillrag.skill.contract import validate_output
from skillrag.workspace import Workspace

MANUALS = Path(__file__).parent / "fixtures" / "manuals"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.init(tmp_path / "ws")


def doc(body: str, title: str = "Router Manual", aid: str = "router") -> SourceArticle:
    return SourceArticle(id=aid, title=title, body=body, source_path=f"{aid}.md")


BODY = ("# Router Manual\n\nThis manual covers the router.\n\n## Setup\n\nPlug it in.\n\n### Wi-Fi\n\nJoin it.\n\n"
        "## Roaming\n\nTurn roaming on.\n\n### Wi-Fi\n\nHotel Wi-Fi works.\n\n## Setup\n\nA second setup section.\n")


def test_sections_partition_the_document_byte_for_byte():
    parts = split_document(doc(BODY), split_chars=0, split_headings=True)
    assert "".join(p.body for p in parts) == BODY
    for p in parts:
        assert BODY[p.parent_offset : p.parent_offset + len(p.body)] == p.body
        assert p.parent == "router" and p.source_path == "router.md"
    assert [p.id for p in parts] == ["router#introduction", "router#setup", "router#roaming", "router#setup-2"]
    assert [p.heading_path for p in parts] == [("Introduction",), ("Setup",), ("Roaming",), ("Setup",)]
    assert parts[2].title == "Router Manual: Roaming"


def test_a_section_over_the_threshold_is_split_again_and_repeated_headings_stay_unique():
    parts = split_document(doc(BODY), split_chars=30)
    assert "".join(p.body for p in parts) == BODY
    ids = [p.id for p in parts]
    assert len(ids) == len(set(ids))
    assert "router#wi-fi" in ids and "router#wi-fi-2" in ids
    nested = next(p for p in parts if p.id == "router#wi-fi-2")
    assert nested.heading_path == ("Roaming", "Wi-Fi") and nested.title == "Router Manual: Roaming > Wi-Fi"


def test_short_documents_and_documents_without_headings_are_not_split():
    assert split_document(doc(BODY), split_chars=10_000) == []
    assert split_document(doc("plain text " * 2000), split_chars=100) == []
    assert split_document(doc("# Only a title\n\nand text"), split_chars=0, split_headings=True) == []
    # a heading inside a code fence is no cut
    fenced = "Intro text.\n\n```\n## not a heading\n```\n\nMore text.\n"
    assert split_document(doc(fenced), split_chars=0, split_headings=True) == []


def test_section_slugs():
    assert section_slug("Roaming & Travel (EU)") == "roaming-travel-eu"
    assert section_slug("???") == "section"
    assert len(section_slug("x" * 300)) == 60


def test_long_manuals_ingest_as_sections_and_stay_readable_whole(ws):
    rep = ingest(ws, [MANUALS])
    store = ArticleStore(ws)
    assert set(rep.split) == {"nimbus-go-hotspot-manual", "nimbus-homelink-router-manual", "nimbus-plans-sim-handbook"}
    whole = store.get("nimbus-go-hotspot-manual")
    assert whole.body == (MANUALS / "nimbus-go-hotspot.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    sections = store.sections_of(whole.id)
    assert len(sections) == rep.split[whole.id] >= 10
    assert "".join(s.body for s in sections) == whole.body
    roaming = store.get("nimbus-go-hotspot-manual#roaming-and-travel-abroad")
    assert roaming.parent == whole.id and roaming.heading_path == ["Roaming and travel abroad"]
    assert whole.body[roaming.parent_offset : roaming.parent_offset + len(roaming.body)] == roaming.body
    # search and the wiki use the sections: the whole document is left out of their listing and hashes
    leaves = {a.id for a in store.list(split_documents=False)}
    assert whole.id not in leaves and roaming.id in leaves
    assert whole.id not in store.hashes() and roaming.id in store.hashes()
    assert whole.id in {a.id for a in store.list()}


def test_quotes_are_checked_against_the_section_body(ws):
    ingest(ws, [MANUALS])
    sec = ArticleStore(ws).get("nimbus-go-hotspot-manual#roaming-and-travel-abroad")
    quote = "Data roaming is switched off on every new hotspot"
    other = "Press and hold the small RESET button next to the SIM tray"  # in another section
    out = {"case_id": "c1", "guidance": "1. Turn data roaming on.", "n_snippets": 1,
           "articles_consulted": [sec.id],
           "snippets": [{"source_article": sec.id, "source_title": sec.title, "text": quote, "why": "roaming"}]}
    assert validate_output(out, {sec.id: sec.body}) == []
    out["snippets"][0]["text"] = other
    assert validate_output(out, {sec.id: sec.body})  # not in this section: rejected


def test_reingest_keeps_ids_when_unrelated_sections_change(ws, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(MANUALS, src)
    ingest(ws, [src])
    store = ArticleStore(ws)
    before = {a.id: a for a in store.list()}
    path = src / "nimbus-go-hotspot.md"
    text = path.read_text(encoding="utf-8")
    # the battery section grows; a new section is added before troubleshooting
    text = text.replace("Charging from a laptop USB port is slower",
                        "A car charger also works.\n\nCharging from a laptop USB port is slower")
    text = text.replace("\n## Troubleshooting", "\n## Accessories\n\nA car mount is sold separately.\n\n## Troubleshooting")
    path.write_text(text, encoding="utf-8")
    rep = ingest(ws, [src])
    after = {a.id: a for a in store.list()}
    assert set(rep.changed) == {"nimbus-go-hotspot-manual", "nimbus-go-hotspot-manual#battery-and-charging"}
    assert rep.added == ["nimbus-go-hotspot-manual#accessories"] and not rep.removed
    assert set(before) <= set(after)
    moved = after["nimbus-go-hotspot-manual#troubleshooting"]
    assert moved.content_hash == before[moved.id].content_hash and not moved.changed  # same text, new offset
    assert moved.parent_offset > before[moved.id].parent_offset
    whole = after["nimbus-go-hotspot-manual"]
    assert whole.body[moved.parent_offset : moved.parent_offset + len(moved.body)] == moved.body
    # a section deleted from the document is marked removed
    path.write_text(text.replace("\n## Accessories\n\nA car mount is sold separately.\n", ""), encoding="utf-8")
    rep = ingest(ws, [src])
    assert rep.removed == ["nimbus-go-hotspot-manual#accessories"]
    with pytest.raises(ArticleNotFound):
        store.get("nimbus-go-hotspot-manual#accessories")


def test_split_sections_option_splits_short_documents_with_headings(ws, tmp_path):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "short.md").write_text(BODY, encoding="utf-8")
    (tmp_path / "kb" / "flat.json").write_text(json.dumps({"id": "flat", "title": "Flat", "content": "no headings"}))
    rep = ingest(ws, [tmp_path / "kb"])
    assert rep.split == {}
    rep = ingest(ws, [tmp_path / "kb"], split_sections=True)
    assert rep.split == {"short": 4} and sorted(rep.added) == ["short#introduction", "short#roaming", "short#setup",
                                                               "short#setup-2"]
    assert ArticleStore(ws).get("flat").parent is None


def test_source_ids_may_not_hold_the_section_separator(ws, tmp_path):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.json").write_text(json.dumps({"id": "a#b", "title": "A", "content": "text"}))
    rep = ingest(ws, [tmp_path / "kb"], skip_bad=True)
    assert len(rep.rejected) == 1 and "kept for section ids" in rep.rejected[0]


ROAMING_QUESTIONS = {
    "I'm travelling in Spain and my Nimbus Go hotspot shows signal bars but no internet. How do I get data "
    "working abroad?": "nimbus-go-hotspot-manual#roaming-and-travel-abroad",
    "How much does a week of roaming in the United States cost for a customer on Nimbus Lite?":
        "nimbus-plans-sim-handbook#international-roaming",
}


@pytest.mark.parametrize("mode", ["bm25", pytest.param("hybrid", marks=pytest.mark.slow)])
def test_a_roaming_question_lands_on_the_roaming_section(ws, mode):
    # regression: with one article per manual every query returned the three whole manuals
    from skillrag.search import build_index, open_retriever

    ingest(ws, [MANUALS])
    emb = "hash" if mode == "bm25" else None  # hybrid: the real embedder (int8 MiniLM), as a user gets it
    build_index(ws, backend="direct", embedder=emb)
    retriever = open_retriever(ws, backend="direct", mode=mode, embedder=emb)
    for question, section in ROAMING_QUESTIONS.items():
        hits = retriever.search(question, k=5)
        assert hits[0].article_id == section, [h.article_id for h in hits]
        assert all("#" in h.article_id for h in hits)  # sections are searched, never the whole manual


def test_section_ids_are_full_match_ids_and_keep_the_document_url():
    from skillrag.corpus import check_id
    from skillrag.errors import InvalidIdError

    assert check_id("router#wi-fi-2") == "router#wi-fi-2"
    for bad in ("router#wi-fi\n", "#x", "a/b#c"):
        with pytest.raises(InvalidIdError):
            check_id(bad)
    d = SourceArticle(id="kb", title="KB", body=BODY, source_path="kb.md", url="https://example.com/kb")
    assert {p.url for p in split_document(d, split_chars=0, split_headings=True)} == {"https://example.com/kb"}


def _opening_heading_repeats(filler: str) -> str:
    return ("# Introduction\n\n" + filler + "## Setup\n\n" + filler + "# Usage\n\n" + filler
            + "# Introduction\n\n" + filler + "## More\n\n" + filler)


def test_a_manual_whose_title_heading_repeats_at_the_top_level_splits(ws, tmp_path):
    """A manual that opens with '# Introduction' (its title) and repeats it later used to end in an
    IndexError with nothing written; every part now has a heading path and the ingest succeeds."""
    filler = "This is filler text for the manual. " * 100 + "\n\n"
    body = _opening_heading_repeats(filler)
    parts = split_document(doc(body, title="Introduction", aid="manual"), split_chars=10_000)
    assert "".join(p.body for p in parts) == body
    assert all(p.heading_path for p in parts)
    assert len({p.id for p in parts}) == len(parts)
    src = tmp_path / "src"
    src.mkdir()
    (src / "manual.md").write_text(body, encoding="utf-8")
    report = ingest(ws, [src])
    assert report.split == {"manual": len(parts)} and not report.rejected


def test_a_loader_or_splitter_failure_is_a_one_line_error_naming_the_file(ws, tmp_path, monkeypatch):
    """Any exception in a loader or splitter becomes MalformedSourceError naming the file (collected with
    the others, nothing written); with skip_bad the file is rejected and the rest ingested."""
    import sys

    from skillrag.errors import MalformedSourceError

    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("# Good\n\nFine text here.\n", encoding="utf-8")
    (src / "boom.md").write_text("# Boom\n\nThis one breaks the splitter.\n", encoding="utf-8")
    ingest_mod = sys.modules["skillrag.corpus.ingest"]  # the package re-exports a function of that name
    real = ingest_mod.split_document

    def flaky(a, **kw):
        if a.id == "boom":
            raise IndexError("tuple index out of range")
        return real(a, **kw)

    monkeypatch.setattr(ingest_mod, "split_document", flaky)
    with pytest.raises(MalformedSourceError) as err:
        ingest(ws, [src])
    assert "boom.md" in str(err.value) and "IndexError" in str(err.value) and "\n" not in str(err.value)
    assert ArticleStore(ws).list() == []
    report = ingest(ws, [src], skip_bad=True)
    assert report.added == ["good"] and len(report.rejected) == 1 and "boom.md" in report.rejected[0]
