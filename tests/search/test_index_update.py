"""An index updated in place after additions, edits and deletions answers exactly as one rebuilt from
nothing over the same corpus; only the changed items are read, analysed and embedded."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.demo_data import HELP_CENTER
from skillrag.errors import IndexStateError
from skillrag.search import build_index, open_retriever
from skillrag.search.engines.embedded import EmbeddedEngine, index_dir
from skillrag.search.testing import FakePage, FakePageSource, HashEmbedder
from skillrag.text import Analyzer
from skillrag.workspace import Workspace, WorkspaceConfig

QUERIES = ["refund for a returned item", "how long does a refund take to reach my card",
           "unlock my account after too many attempts", "damaged delivery claim evidence photos",
           "change the delivery address", "escalate to a supervisor", "assembly booking",
           "gold member exception", "cancel an order that has shipped", "platinum waiver zebra"]


def _answers(ws: Workspace, emb: HashEmbedder, backend: str = "direct", pages: object = None) -> dict:
    out = {}
    for mode in ("bm25", "dense", "hybrid"):
        r = open_retriever(ws, backend=backend, mode=mode, embedder=emb, pages=pages)  # type: ignore[arg-type]
        for q in QUERIES:
            out[mode, q] = [(h.article_id, h.score, h.bm25_rank, h.dense_rank, h.preview, h.section,
                             tuple(h.page_ids)) for h in r.search(q, k=10)]
        r.close()
    return out


def _files(ws: Workspace, backend: str = "direct") -> dict[str, object]:
    d = index_dir(ws, backend)
    with np.load(d / "counts.npz") as c:
        out: dict[str, object] = {f"counts/{k}": c[k].tolist() for k in c.files}
    for name in ("rows.npy", "passages.npy", "bm25/data.csc.index.npy", "bm25/indices.csc.index.npy",
                 "bm25/indptr.csc.index.npy"):
        out[name] = np.load(d / name).tolist()
    for name in ("items.json", "bm25/vocab.index.json"):
        out[name] = (d / name).read_text(encoding="utf-8")
    return out


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "help"
    src.mkdir(parents=True)
    for p in sorted(HELP_CENTER.glob("*.md"))[:30]:  # 7 held back, added later
        shutil.copy(p, src / p.name)
    return src


def _workspace(tmp_path: Path, corpus: Path) -> Workspace:
    cfg = WorkspaceConfig(name="t")
    cfg.search.embedder = "hash"
    cfg.search.backend = "direct"  # type: ignore[assignment]
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    ingest(ws, [corpus], tag="help")
    return ws


def _spy_terms(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the index analyses for BM25 (every call of ``Analyzer.terms`` made by ``build_index``)."""
    seen: list[str] = []
    real = Analyzer.terms

    def terms(self: Analyzer, text: str) -> list[str]:
        seen.append(text)
        return real(self, text)

    monkeypatch.setattr(Analyzer, "terms", terms)
    return seen


def test_an_update_in_place_answers_as_a_full_rebuild(tmp_path, corpus, monkeypatch):
    ws = _workspace(tmp_path, corpus)
    emb = HashEmbedder()
    first = build_index(ws, embedder=emb)
    assert first.items == 30 and not first.up_to_date
    # edits (one gets a word no other article has), deletions, additions
    files = sorted(corpus.glob("*.md"))
    edited = files[:3]
    for n, p in enumerate(edited):
        p.write_text(p.read_text(encoding="utf-8") + f"\n\nA platinum zebra waiver note {n}.\n", encoding="utf-8")
    for p in files[3:5]:
        p.unlink()
    for p in sorted(HELP_CENTER.glob("*.md"))[30:]:
        shutil.copy(p, corpus / p.name)
    ingest(ws, [corpus], tag="help")
    emb.texts_embedded.clear()
    analysed = _spy_terms(monkeypatch)
    wrote = []
    monkeypatch.setattr(EmbeddedEngine, "write", lambda self, data: wrote.append(data))
    rep = build_index(ws, embedder=emb)
    assert not wrote  # updated in place, not rewritten from a full input
    assert len(rep.changed) == 3 and len(rep.removed) == 2 and len(rep.added) == 7 and rep.items == 35
    assert len(analysed) == 10  # the 3 edited and 7 added articles only
    assert rep.embedded == len(emb.texts_embedded) > 0
    fresh = ArticleStore(ws).get_many([*rep.changed, *rep.added])
    assert {t.split("\n")[0] for t in emb.texts_embedded} <= {a.title for a in fresh.values()}
    updated, updated_files = _answers(ws, emb), _files(ws)
    assert any(h[0] == files[0].stem for h in updated["bm25", "platinum waiver zebra"])
    monkeypatch.undo()

    full = build_index(ws, embedder=emb, force=True)
    assert full.items == rep.items and full.passages == rep.passages and full.embedded == 0
    assert _files(ws) == updated_files  # the same files, bit for bit
    assert _answers(ws, emb) == updated  # and so the same top 10, scores, ranks and previews

    # a deletion that takes the only article with a term away drops it from the vocabulary
    for p in edited:
        p.unlink()
    ingest(ws, [corpus], tag="help")
    assert len(build_index(ws, embedder=emb).removed) == 3
    assert not open_retriever(ws, mode="bm25", embedder=emb).search("zebra", k=5)
    again = _answers(ws, emb), _files(ws)
    build_index(ws, embedder=emb, force=True)
    assert (_answers(ws, emb), _files(ws)) == again


def test_a_wiki_update_in_place_answers_as_a_full_rebuild(tmp_path, corpus):
    ws = _workspace(tmp_path, corpus)
    emb = HashEmbedder()
    ids = [p.stem for p in sorted(corpus.glob("*.md"))]

    def page(n: int, extra: str = "") -> FakePage:
        cites = ids[n : n + 3]
        return FakePage(id=f"page-{n:02d}", title=f"Topic {n}", text=f"About {' '.join(cites)}{extra}", cites=cites)

    pages = FakePageSource([page(n) for n in range(0, 27, 3)])
    build_index(ws, backend="wiki", embedder=emb, pages=pages)
    pages = FakePageSource([page(n, " refund delay" if n == 6 else "") for n in range(3, 30, 3)])
    rep = build_index(ws, backend="wiki", embedder=emb, pages=pages)
    assert rep.changed == ["page-06"] and rep.removed == ["page-00"] and rep.added == ["page-27"]
    updated = _answers(ws, emb, "wiki", pages), _files(ws, "wiki")
    build_index(ws, backend="wiki", embedder=emb, pages=pages, force=True)
    assert (_answers(ws, emb, "wiki", pages), _files(ws, "wiki")) == updated


def test_an_update_of_a_damaged_index_is_refused_with_one_line(tmp_path, corpus):
    ws = _workspace(tmp_path, corpus)
    emb = HashEmbedder()
    build_index(ws, embedder=emb)
    (index_dir(ws, "direct") / "counts.npz").write_bytes(b"not numpy")
    p = sorted(corpus.glob("*.md"))[0]
    p.write_text(p.read_text(encoding="utf-8") + "\n\nOne more line.\n", encoding="utf-8")
    ingest(ws, [corpus], tag="help")
    with pytest.raises(IndexStateError, match=r"the index is damaged .*run `skillrag index --force`"):
        build_index(ws, embedder=emb)
    assert build_index(ws, embedder=emb, force=True).changed == [p.stem]
    assert open_retriever(ws, embedder=emb).search("refund")
