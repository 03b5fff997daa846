"""skillrag beside its peers on the τ²-bench banking dev tasks: one run, the same passages, the same embedder.

    pip install -e '.[peers]'
    pip install --no-deps 'llama-index-retrievers-bm25==0.8.0'   # its pystemmer<3 pin would change skillrag's stems
    .venv/bin/python benchmarks/peers.py [--shared ../shared] [--work build/bench-peers]
                                         [--out benchmarks/results/peers.md] [--set KEY=VALUE ...]
                                         [--variant 'BACKEND MODE KEY=VALUE,KEY=VALUE' ...]

Tasks: the 46 dev tasks of ``tasks_dev.json`` (the held-out tasks are not on this machine); query = the
task's ``user_scenario.instructions`` (the scenario text, persona and chatter included), relevant = its
``required_documents``. recall@k = |top-k ∩ relevant| / |relevant| and MRR (first relevant article within
the top 50), macro-averaged (``skillrag.evaluation.ranking_metrics``); p-values: paired two-sided Wilcoxon
signed-rank over the tasks against the skillrag default (scipy), on recall@20 and on reciprocal rank.

Systems, all in this process, taking turns query by query so a change in the machine's load hits them alike:

* skillrag arms (``open_retriever``): hybrid / wiki (the default: ``search.backend`` wiki over the extractive
  layer, the reference of every ratio), hybrid / direct, bm25 / direct, dense / direct, and any
  ``--variant`` (query-time settings changed for one arm). Timed at k = 10 hits (previews included); the
  top 50 for the metrics is read after it, untimed.
* LangChain (``langchain-classic`` ``EnsembleRetriever``, RRF c = 60, weights 0.5 / 0.5) over
  ``langchain-community``'s ``BM25Retriever`` (rank_bm25, its default whitespace split) and
  ``langchain-core``'s ``InMemoryVectorStore``; and the dense retriever alone.
* LlamaIndex (``llama-index-core``'s ``QueryFusionRetriever``, ``reciprocal_rerank``, one query: no LLM
  rewrites) over a ``VectorStoreIndex`` and ``llama-index-retrievers-bm25``'s ``BM25Retriever`` (bm25s,
  English stop words, Snowball stems).
* plain bm25s over whole articles (title + content, English stop words, one query; as in retrieval.py).

The peers index skillrag's own passages of the direct backend (``search.passage_words`` /
``passage_overlap``, title prefix) and embed with skillrag's embedder, wrapped as their embedding class:
passage vectors come from the workspace's vector store (the same vectors skillrag searches), every query
is embedded by the model in the timed call (``timing.timed_call`` checks it). They retrieve 200
passages per query, de-duplicated to article ids in rank order; the peers are at their defaults otherwise.
Latency: warm, in process, milliseconds, the query embedding included for every system that embeds.
``--set`` changes a search setting for the whole run (skillrag and the peers' passages alike).
The Markdown table is printed and written to ``--out``; it holds aggregates only, never article text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from timing import EmbedCounter, percentiles, timed_call, timed_search

from skillrag.corpus import ingest
from skillrag.evaluation.metrics import ranking_metrics
from skillrag.search import build_index, open_retriever
from skillrag.search._items import collect_items, passages, text_hash
from skillrag.search.index import embedder_for
from skillrag.search.vectors import VectorStore
from skillrag.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
KS = (10, 20, 50)
#: Passages each peer retrieves per query (de-duplicated to articles; ≥ 50 articles on τ²).
PEER_DEPTH = 200
DEFAULT = "skillrag hybrid / wiki (default)"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]]) -> dict[str, float]:
    return ranking_metrics(ranked, relevant, KS)


def per_task(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]], key: str) -> list[float]:
    return [ranking_metrics([r], [rel], KS)[key] for r, rel in zip(ranked, relevant, strict=True)]


def articles_of(passage_hits: Sequence[Any], article_of: Callable[[Any], str], k: int = 50) -> list[str]:
    """Article ids in the order their first passage is ranked, at most ``k``."""
    out: list[str] = []
    for h in passage_hits:
        a = article_of(h)
        if a not in out:
            out.append(a)
            if len(out) == k:
                break
    return out


# -- the one embedder, as each peer's embedding class -------------------------------------------------
class StoredVectors:
    """skillrag's embedder for the peers: passage vectors from the workspace's vector store (embedded
    by the model when missing), queries always embedded by the model (``counter`` counts them)."""

    def __init__(self, ws: Workspace, embedder: Any) -> None:
        self.store = VectorStore(ws)
        self.embedder = embedder
        self.counter = EmbedCounter(embedder)

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        found = self.store.get(self.embedder.id, hashes)
        missing = [i for i, h in enumerate(hashes) if h not in found]
        if missing:
            vecs = self.embedder.embed([texts[i] for i in missing])
            for i, v in zip(missing, vecs, strict=True):
                found[hashes[i]] = v
        return np.stack([found[h] for h in hashes])

    def query(self, text: str) -> np.ndarray:
        return self.counter.embed([text])[0]


def langchain_embeddings(vectors: StoredVectors) -> Any:
    from langchain_core.embeddings import Embeddings

    class SkillragEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return vectors.documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return vectors.query(text).tolist()

    return SkillragEmbeddings()


def llama_embedding(vectors: StoredVectors) -> Any:
    from llama_index.core.embeddings import BaseEmbedding

    class SkillragEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return vectors.query(query).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return vectors.documents([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return vectors.documents(texts).tolist()

    return SkillragEmbedding(model_name=vectors.embedder.id, embed_batch_size=256)


# -- the systems --------------------------------------------------------------------------------------
@dataclass
class System:
    """One row: ``run(query) -> (top-50 article ids, ms)``."""

    name: str
    run: Callable[[str], tuple[list[str], float]]
    note: str = ""
    ranked: list[list[str]] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)


def skillrag_system(name: str, r: Any) -> System:
    def run(q: str) -> tuple[list[str], float]:
        _, ms = timed_search(r, q, 10)
        return [h.article_id for h in r.search(q, k=50)], ms

    r.search("warm-up query", k=10)
    return System(name, run)


#: How to install each peer's packages (printed when one is missing; the peer is then skipped).
INSTALL = {
    "LangChain": "pip install -e '.[peers]'",
    "LlamaIndex": ("pip install -e '.[peers]' && pip install --no-deps 'llama-index-retrievers-bm25==0.8.0' "
                   "(its pystemmer<3 pin would change skillrag's stems)"),
}


@dataclass
class Corpus:
    """The direct backend's passages (``texts``) and the article each belongs to (``owners``)."""

    texts: list[str]
    owners: list[str]


def direct_passages(ws: Workspace) -> Corpus:
    s = ws.config.search
    items, _ = collect_items(ws, "direct")
    texts, owners = [], []
    for it in items:
        for p in passages(it.title, it.text, s.passage_words, s.passage_overlap):
            texts.append(p)
            owners.append(it.id)
    return Corpus(texts, owners)


def langchain_systems(corpus: Corpus, vectors: StoredVectors) -> list[System]:
    """LangChain's EnsembleRetriever (BM25 + dense, RRF) and its dense retriever alone."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    docs = [Document(page_content=t, metadata={"article_id": a})
            for t, a in zip(corpus.texts, corpus.owners, strict=True)]
    store = InMemoryVectorStore(embedding=langchain_embeddings(vectors))
    store.add_documents(docs)
    dense = store.as_retriever(search_kwargs={"k": PEER_DEPTH})
    ensemble = EnsembleRetriever(retrievers=[BM25Retriever.from_documents(docs, k=PEER_DEPTH), dense],
                                 weights=[0.5, 0.5])

    def lc(retriever: Any) -> Callable[[str], tuple[list[str], float]]:
        def run(q: str) -> tuple[list[str], float]:
            got, ms = timed_call(lambda: retriever.invoke(q), vectors.counter, what="peer search")
            return articles_of(got, lambda d: d.metadata["article_id"]), ms
        return run

    return [System("LangChain dense (InMemoryVectorStore)", lc(dense)),
            System("LangChain EnsembleRetriever hybrid", lc(ensemble))]


def llama_index_systems(corpus: Corpus, vectors: StoredVectors) -> list[System]:
    """LlamaIndex's QueryFusionRetriever (dense + bm25s, reciprocal rerank, one query: no LLM rewrites)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    nodes = [TextNode(text=t, id_=f"p{i}", metadata={"article_id": a}, excluded_embed_metadata_keys=["article_id"],
                      excluded_llm_metadata_keys=["article_id"])
             for i, (t, a) in enumerate(zip(corpus.texts, corpus.owners, strict=True))]
    index = VectorStoreIndex(nodes, embed_model=llama_embedding(vectors), show_progress=False)
    fusion = QueryFusionRetriever(
        [index.as_retriever(similarity_top_k=PEER_DEPTH), BM25Retriever(nodes=nodes, similarity_top_k=PEER_DEPTH)],
        similarity_top_k=PEER_DEPTH, num_queries=1, mode="reciprocal_rerank", use_async=False, llm=MockLLM())

    def run(q: str) -> tuple[list[str], float]:
        got, ms = timed_call(lambda: fusion.retrieve(q), vectors.counter, what="peer search")
        return articles_of(got, lambda n: n.node.metadata["article_id"]), ms

    return [System("LlamaIndex QueryFusionRetriever hybrid", run)]


#: The framework peers: name (a key of ``INSTALL``) → builder of its rows.
PEERS: dict[str, Callable[[Corpus, StoredVectors], list[System]]] = {
    "LlamaIndex": llama_index_systems,
    "LangChain": langchain_systems,
}


def peer_systems(ws: Workspace, vectors: StoredVectors) -> tuple[list[System], list[str]]:
    """The peers' rows over the direct backend's passages, and one line per peer skipped because its
    packages are not installed (printed too)."""
    corpus = direct_passages(ws)
    log(f"peers: indexing {len(corpus.texts)} passages (vectors from the store)…")
    out: list[System] = []
    skipped: list[str] = []
    for name, build in PEERS.items():
        try:
            systems = build(corpus, vectors)
        except ImportError as exc:
            skipped.append(f"{name} skipped: {exc.name or exc} is not installed ({INSTALL[name]})")
            log(skipped[-1])
            continue
        for sysm in systems:
            sysm.run("warm-up query")
        out += systems
    return out, skipped


def bm25s_system(docs: list[dict[str, str]]) -> System:
    """Plain bm25s over whole articles (title + content, English stop words, no stemming), one query."""
    import bm25s

    ids = [d["id"] for d in docs]
    r = bm25s.BM25()
    r.index(bm25s.tokenize([d["title"] + "\n" + d["content"] for d in docs], stopwords="en",
                           show_progress=False), show_progress=False)

    def run(q: str) -> tuple[list[str], float]:
        (res, _), ms = timed_call(lambda: r.retrieve(bm25s.tokenize(q, stopwords="en", show_progress=False), k=50,
                                                    show_progress=False), None)
        return [ids[i] for i in res[0]], ms

    return System("plain bm25s over whole articles", run, note="no embedding")


# -- the run ------------------------------------------------------------------------------------------
def parse_changes(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, raw = part.partition("=")
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw.strip()
    return out


def open_workspace(work: Path, data: Path, changes: dict[str, Any]) -> Workspace:
    """The run's workspace (kept between runs, so passage vectors are embedded once), the corpus ingested
    (a no-op when unchanged) and ``changes`` applied to its search settings in memory."""
    root = work / "ws"
    ws = Workspace.open(root) if (root / "skillrag.yaml").is_file() else Workspace.init(root)
    ingest(ws, [data / "documents"])
    for key, value in changes.items():
        setattr(ws.config.search, key, value)
    return ws


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-peers")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "peers.md")
    ap.add_argument("--set", dest="changes", default="", help="KEY=VALUE,... search settings for the whole run.")
    ap.add_argument("--variant", action="append", default=[],
                    help="'BACKEND MODE KEY=VALUE,...': one more skillrag arm with query-time settings changed.")
    ap.add_argument("--no-peers", dest="peers", action="store_false", help="skillrag arms only (tuning runs).")
    ap.add_argument("--limit", type=int, default=None, help="The first N tasks only (a smoke run; says so).")
    ap.add_argument("--fresh", action="store_true", help="Start from an empty workspace (embeds every passage).")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not (data / "tasks_dev.json").is_file():
        print(f"error: {data}/tasks_dev.json not found (pass --shared)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    if args.fresh:
        shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))[: args.limit]
    queries = [t["user_scenario"]["instructions"] for t in tasks]
    relevant = [set(t["required_documents"]) for t in tasks]
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((data / "documents").glob("*.json"))]
    changes = parse_changes(args.changes)
    ws = open_workspace(args.work, data, changes)
    from skillrag.wiki import build_wiki, layer_fingerprint

    if layer_fingerprint(ws) is None:
        build_wiki(ws, builder="extractive")
    log("skillrag: indexes (direct, then wiki)…")
    t_index, reports = time.perf_counter(), [build_index(ws, backend="wiki")]
    t_index = time.perf_counter() - t_index
    emb = embedder_for(ws)
    s = ws.config.search
    arms: list[tuple[str, str, str, dict[str, Any]]] = [
        (DEFAULT, "wiki", "hybrid", {}), ("skillrag hybrid / direct", "direct", "hybrid", {}),
        ("skillrag bm25 / direct", "direct", "bm25", {}), ("skillrag dense / direct", "direct", "dense", {})]
    for spec in args.variant:
        backend, mode, rest = (spec.split(maxsplit=2) + [""])[:3]
        arms.append((f"skillrag {mode} / {backend}, {rest}", backend, mode, parse_changes(rest)))
    systems: list[System] = []
    for label, backend, mode, arm_changes in arms:
        saved = {k: getattr(s, k) for k in arm_changes}
        for k, v in arm_changes.items():
            setattr(s, k, v)
        systems.append(skillrag_system(label, open_retriever(ws, backend=backend, mode=mode, embedder=emb)))
        for k, v in saved.items():  # the retriever keeps the settings it was opened with
            setattr(s, k, v)
    skipped: list[str] = []
    if args.peers:
        peers, skipped = peer_systems(ws, StoredVectors(ws, emb))
        systems += peers
        systems.append(bm25s_system(docs))
    log(f"running {len(queries)} queries × {len(systems)} systems, taking turns…")
    load_mid = os.getloadavg()
    for n, q in enumerate(queries):
        for j in range(len(systems)):
            sysm = systems[(j + n) % len(systems)]  # who goes first rotates
            ids, ms = sysm.run(q)
            sysm.ranked.append(ids)
            sysm.ms.append(ms)
    load_end = os.getloadavg()

    rows = []
    ref = next(x for x in systems if x.name == DEFAULT)
    ref_m = metrics(ref.ranked, relevant)
    ref_p50 = percentiles(ref.ms)[0]
    ref_r20, ref_rr = per_task(ref.ranked, relevant, "r@20"), per_task(ref.ranked, relevant, "mrr")

    def wilcoxon(a: list[float], b: list[float]) -> str:
        if all(x == y for x, y in zip(a, b, strict=True)):
            return "—"
        return f"{stats.wilcoxon(a, b).pvalue:.2f}"

    for sysm in systems:
        m = metrics(sysm.ranked, relevant)
        p50, p95 = percentiles(sysm.ms)
        rows.append((sysm, m, p50, p95, wilcoxon(ref_r20, per_task(sysm.ranked, relevant, "r@20")),
                     wilcoxon(ref_rr, per_task(sysm.ranked, relevant, "mrr"))))
    import bm25s

    versions = [f"bm25s {bm25s.__version__}"]
    for dist in ("langchain-core", "langchain-classic", "langchain-community", "rank-bm25", "llama-index-core",
                 "llama-index-retrievers-bm25", "PyStemmer"):
        with contextlib.suppress(PackageNotFoundError):  # not installed: that peer's rows are absent
            versions.append(f"{dist} {version(dist)}")
    lines = [
        "# skillrag beside its peers: τ²-bench banking dev tasks",
        "",
        (f"{len(tasks)} dev tasks (the held-out tasks are not on this machine: dev only), {len(docs)} articles; "
         f"query = `user_scenario.instructions` (median {int(statistics.median(len(q.split()) for q in queries))} "
         f"words); relevant = `required_documents`. Produced by `benchmarks/peers.py` on "
         f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {(time.perf_counter() - t_start) / 60:.0f} min; "
         f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load_start[0]:.1f} at start, "
         f"{load_mid[0]:.1f} when the queries began and {load_end[0]:.1f} at end (other jobs share the machine; "
         "latencies depend on the load; the systems take turns query by query)."),
        (f"Embedder `{emb.id}` for every system that embeds; {reports[0].passages} wiki-page passages and the "
         f"direct index's passages (`passage_words` {s.passage_words}, `passage_overlap` {s.passage_overlap}), "
         f"which the peers index too. Indexes brought up to date in {t_index:.1f} s. Settings for the whole run: "
         f"{changes or 'library defaults'}. " + "; ".join(versions) + "."),
        "",
        ("| system | R@10 | R@20 | R@50 | MRR | p50 ms | p95 ms | R@20 / default | R@50 / default | MRR / default "
         "| p50 / default | p (R@20) | p (RR) |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for sysm, m, p50, p95, p_r20, p_rr in rows:
        lines.append(
            f"| {sysm.name}{' (' + sysm.note + ')' if sysm.note else ''} | {m['r@10']:.3f} | {m['r@20']:.3f} "
            f"| {m['r@50']:.3f} | {m['mrr']:.3f} | {p50:.1f} | {p95:.1f} | {m['r@20'] / ref_m['r@20']:.2f} "
            f"| {m['r@50'] / ref_m['r@50']:.2f} | {m['mrr'] / ref_m['mrr']:.2f} | {p50 / ref_p50:.2f} "
            f"| {p_r20} | {p_rr} |")
    lines += ["", ("Ratios are against the skillrag default (first row); p: paired two-sided Wilcoxon signed-rank "
                   "over the tasks against it (— when identical).")]
    lines += [f"- {line}" for line in skipped]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
