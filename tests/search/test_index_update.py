"""An index updated in place after additions, edits and deletions answers exactly as one rebuilt from
nothing over the same corpus; only the changed items are read, analysed and embedded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.demo_data import HELP_CENTER
from skillrag.errors import IndexStateError
from skillrag.search import build_index, open_retriever
from skillrag.search._items import corpus_facets, facets_memo
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
    for name in ("items.jsonl", "bm25/vocab.index.json"):
        out[name] = (d / name).read_text(encoding="utf-8")
    return out


#: Bank articles whose facets depend on each other: the personal checking accounts are "personal" only
#: while a "business checking accounts" family is in the corpus (``wiki.families``).
BANK = {
    "doc_checking_accounts_blue_account_001": ("Blue Account at a glance", "Monthly maintenance fee: $20.00."),
    "doc_checking_accounts_blue_account_002": ("Blue Account Referral Program", "Your bonus: $35 per referral."),
    "doc_checking_accounts_purple_account_001": ("Purple Account at a glance", "Monthly maintenance fee: $15."),
    "doc_checking_accounts_purple_account_002": ("FAQ: Purple Account", "You earn $45 for each referral."),
    "doc_business_checking_accounts_navy_blue_001": ("Navy Blue Business Checking: Complete Guide",
                                                     "Monthly maintenance fee: $0.00. Referral bonus $100."),
    "doc_business_checking_accounts_navy_blue_002": ("Navy Blue Account: Wire Transfer Pricing",
                                                     "Fee per outgoing domestic wire: $15.00."),
    "doc_business_checking_accounts_beige_001": ("Beige Account Referral Program", "Your reward: $500 per referral."),
    "doc_business_checking_accounts_beige_002": ("Implementing Beige: Enterprise Treasury Onboarding",
                                                 "Maintain at least $250,000."),
}
PERSONAL = "doc_checking_accounts_purple_account_001"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "help"
    src.mkdir(parents=True)
    for p in sorted(HELP_CENTER.glob("*.md"))[:30]:  # 7 held back, added later
        shutil.copy(p, src / p.name)
    for aid, (title, body) in BANK.items():
        (src / f"{aid}.md").write_text(f"---\nid: {aid}\ntitle: '{title}'\ntag: bank\n---\n# {title}\n\n{body}\n",
                                       encoding="utf-8")
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
    assert first.items == 38 and not first.up_to_date
    assert ArticleStore(ws).get(PERSONAL)  # and its facets say personal, while a business twin is there
    assert corpus_facets(ArticleStore(ws).list())[PERSONAL] == ("checking accounts", "personal")
    # edits (one gets a word no other article has), deletions (the business family: the personal
    # articles' facets change with it, their text does not), additions
    help_files = sorted(corpus.glob("kb-*.md"))
    edited = help_files[:3]
    for n, p in enumerate(edited):
        p.write_text(p.read_text(encoding="utf-8") + f"\n\nA platinum zebra waiver note {n}.\n", encoding="utf-8")
    gone = sorted(corpus.glob("doc_business_*.md"))
    for p in gone:
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
    refaceted = [a for a in BANK if a.startswith("doc_checking_")]
    assert rep.changed == sorted([p.stem for p in edited] + refaceted)
    assert rep.removed == sorted(p.stem for p in gone) and len(rep.added) == 7 and rep.items == 38 - 4 + 7
    assert len(analysed) == len(rep.changed) + len(rep.added)  # the changed and added items only
    assert rep.embedded == len(emb.texts_embedded) > 0
    fresh = ArticleStore(ws).get_many([*rep.changed, *rep.added])
    assert {t.split("\n")[0] for t in emb.texts_embedded} <= {a.title for a in fresh.values()}
    updated, updated_files = _answers(ws, emb), _files(ws)
    assert any(h[0] == edited[0].stem for h in updated["bm25", "platinum waiver zebra"])
    monkeypatch.undo()

    facets_memo(ws).unlink()  # the rebuild computes every facet again (the update used the memo)
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
    facets_memo(ws).unlink()
    build_index(ws, embedder=emb, force=True)
    assert (_answers(ws, emb), _files(ws)) == again


def test_a_wiki_update_in_place_answers_as_a_full_rebuild(tmp_path, corpus):
    ws = _workspace(tmp_path, corpus)
    emb = HashEmbedder()
    ids = sorted(a.id for a in ArticleStore(ws).list())

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
    p = min(corpus.glob("*.md"))
    p.write_text(p.read_text(encoding="utf-8") + "\n\nOne more line.\n", encoding="utf-8")
    ingest(ws, [corpus], tag="help")
    with pytest.raises(IndexStateError, match=r"the index is damaged .*run `skillrag index --force`"):
        build_index(ws, embedder=emb)
    assert build_index(ws, embedder=emb, force=True).changed == [p.stem]
    assert open_retriever(ws, embedder=emb).search("refund")


def test_facets_from_article_heads_and_their_memo_are_those_of_the_whole_articles(tmp_path, corpus):
    """The update reads no body: the facets of body-less heads are the articles' facets, and the memo
    gives them back only while no article is added, removed or retitled."""
    ws = _workspace(tmp_path, corpus)
    store = ArticleStore(ws)
    full, heads = store.list(split_documents=False), store.heads(split_documents=False)
    assert [a.id for a in heads] == [a.id for a in full]
    assert [a.content_hash for a in heads] == [a.content_hash for a in full]
    want = corpus_facets(full)
    assert any(f != ("", "") for f in want.values())
    memo = tmp_path / "facets.json"
    assert corpus_facets(heads, memo) == want and memo.is_file()
    kept = json.loads(memo.read_text(encoding="utf-8"))
    kept["facets"] = {a: ["kept", "kept"] for a in kept["facets"]}  # tells a memo hit from a recount
    memo.write_text(json.dumps(kept), encoding="utf-8")
    assert set(corpus_facets(heads, memo).values()) == {("kept", "kept")}
    retitled = [a._replace(title=a.title + " two") if n == 0 else a for n, a in enumerate(heads)]
    assert corpus_facets(retitled, memo) == corpus_facets(retitled)
    memo.write_text("{", encoding="utf-8")  # damaged: computed again
    assert corpus_facets(heads, memo) == want


def test_an_index_in_an_older_format_is_refused_as_such_and_rebuilt(tmp_path, corpus):
    """An upgrade that changes the index format: searching the old index says so (not "damaged") and names
    `skillrag index`, which rebuilds it."""
    import json

    from skillrag.search.engines.embedded import FORMAT_VERSION

    ws = _workspace(tmp_path, corpus)
    emb = HashEmbedder()
    build_index(ws, embedder=emb)
    mpath = index_dir(ws, "direct") / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    manifest["versions"]["format"] = str(FORMAT_VERSION - 1)
    mpath.write_text(json.dumps(manifest), encoding="utf-8")
    (index_dir(ws, "direct") / "items.jsonl").unlink()  # an older format had other files
    with pytest.raises(IndexStateError, match=rf"index format {FORMAT_VERSION - 1} .* run `skillrag index`"):
        open_retriever(ws, embedder=emb).search("refund")
    build_index(ws, embedder=emb)
    assert open_retriever(ws, embedder=emb).search("refund")
