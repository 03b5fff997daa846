"""Search engines benchmark: ``embedded`` vs ``milvus`` on the τ²-bench banking dev tasks and at scale.

    .venv/bin/python benchmarks/engines.py [--shared ../shared] [--work build/bench-engines]
                                           [--out benchmarks/results/engines.md]
                                           [--sizes 7000,35000,350000] [--no-server]

Needs the ``milvus`` extra. One run, three parts, all in this process (Milvus Lite's server runs as
its child process, as it does for any Milvus Lite user):

1. τ²-bench banking dev (698 articles, 46 tasks; query = ``user_scenario.instructions``, relevant =
   ``required_documents``): recall@10/20/50, MRR and warm long-query latency p50/p95 in milliseconds
   (query embedding included) for the ``embedded`` engine, Milvus Lite in process (a ``.db`` file) and
   a Milvus Lite server on 127.0.0.1 (the client–server path of a Milvus standalone server), for the
   direct backend in every mode and the wiki backend (extractive layer) in hybrid; plus the time to
   move a built index into Milvus (every vector comes from the vector store, none is re-embedded).
2. Embedding throughput on the same 320 τ²-bench passages with the packaged MiniLM: batches in
   arrival order vs batches of similar token length, and onnxruntime threads 1 vs 2 (taking turns
   call by call, twice over).
3. Scale: synthetic corpora of about 7k, 35k and 350k passages (the τ²-bench articles replicated, 15 %
   of each replica's words replaced by other corpus words, titles numbered), with random unit vectors
   (384-d) in place of embeddings (embedding 350k passages would take hours on 2 cores). Per engine:
   index write time (no embedding), open time, warm hybrid long-query latency p50/p95 (the 46 task
   texts; the query vector is a seeded random vector, so the figures are the engines' work), and how
   many of the embedded engine's top 10 the Milvus engine also returns. A third arm is the baseline
   for the embedded engine's ranking: the same loaded index ranked the way it was before rankings were
   read lazily (every ranking fully sorted, every item's ranks and normalised score computed:
   ``skillrag.search.testing.full_sort_rank``); its hits are checked to be identical. In parts 1 and 3
   the engines take turns query by query, so a change in the machine's load hits them alike. The growth
   exponent is the slope of log p50 against log passages (least squares over the three sizes).

The Markdown tables are printed and written to ``--out``; they hold aggregates only, never article
text. Latencies depend on the load of the machine, which the file records.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from synthetic import RandomEmbedder, prefill_vectors, synthetic_corpus
from timing import timed_search

from skillrag.corpus import ingest
from skillrag.evaluation.metrics import ranking_metrics
from skillrag.search import build_index, open_retriever
from skillrag.search._items import collect_items, passages, text_hash
from skillrag.search.engines.milvus import disconnect_all
from skillrag.search.engines.testing import lite_server
from skillrag.search.testing import full_sort_retriever
from skillrag.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
KS = (10, 20, 50)
#: The scale part's baseline arm: the embedded index ranked by full sorts (the ranking before it was lazy).
FULL_SORT = "embedded, full sort (before)"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]]) -> dict[str, float]:
    """recall@k for KS and MRR@50, macro-averaged over queries (``skillrag.evaluation.ranking_metrics``)."""
    return ranking_metrics(ranked, relevant, KS)


def pct(ms: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def run_interleaved(retrievers: dict[str, Any], queries: list[str], k_metrics: int = 50,
                    ) -> dict[str, tuple[list[list[str]], list[float]]]:
    """Per engine: ranked ids (top ``k_metrics``) and warm k=10 latencies in ms, one per query. The
    engines take turns query by query, so a change in the machine's load hits them alike."""
    out: dict[str, tuple[list[list[str]], list[float]]] = {name: ([], []) for name in retrievers}
    for r in retrievers.values():
        r.search("warm-up query", k=10)
    for q in queries:
        for name, r in retrievers.items():
            out[name][1].append(timed_search(r, q, 10)[1])  # the query embedding included
            out[name][0].append([h.article_id for h in r.search(q, k=k_metrics)])
    return out


# -- part 1 and 2: τ²-bench ---------------------------------------------------------------------------
def tau2_part(data: Path, work: Path, with_server: bool) -> tuple[list[str], dict[str, Any]]:
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))
    queries = [t["user_scenario"]["instructions"] for t in tasks]
    relevant = [set(t["required_documents"]) for t in tasks]
    ws = Workspace.init(work / "tau2")
    ingest(ws, [data / "documents"])
    s = ws.config.search
    log("tau2: embedding throughput…")
    throughput = embedding_throughput(ws)
    log("tau2: embedded engine build (fresh vector store)…")
    build_s, rep = timed(lambda: build_index(ws, backend="direct"))
    from skillrag.wiki import build_wiki

    build_wiki(ws, builder="extractive")
    build_index(ws, backend="wiki")
    arms = [("direct", "hybrid"), ("direct", "bm25"), ("direct", "dense"), ("wiki", "hybrid")]
    rows: list[dict[str, Any]] = []
    moves: list[str] = []
    targets = {"embedded": ("embedded", None), "milvus, Lite in process": ("milvus", str(work / "tau2-lite.db"))}
    for label, (engine, uri) in targets.items():
        if engine == "milvus":
            s.engine, s.milvus_uri = engine, uri
            t, reports = timed(lambda: [build_index(ws, backend=b) for b in ("direct", "wiki")])
            moves.append(f"{label}: {t:.1f} s to write both indexes, {sum(r.embedded for r in reports)} passages "
                         f"embedded, {sum(r.reused for r in reports)} reused")
    with contextlib.ExitStack() as stack:
        stack.callback(disconnect_all)
        if with_server:
            uri = stack.enter_context(lite_server(work / "tau2-server" / "server.db"))
            s.engine, s.milvus_uri = "milvus", uri
            t, reports = timed(lambda: [build_index(ws, backend=b) for b in ("direct", "wiki")])
            moves.append(f"Milvus Lite server on 127.0.0.1: {t:.1f} s to write both indexes, "
                         f"{sum(r.embedded for r in reports)} passages embedded")
            targets["milvus, server on 127.0.0.1"] = ("milvus", uri)
        for backend, mode in arms:
            retrievers = {}
            for label, (engine, uri) in targets.items():
                s.engine, s.milvus_uri = engine, uri  # each engine copies the settings it was opened with
                retrievers[label] = open_retriever(ws, backend=backend, mode=mode)
            for label, (ranked, lat) in run_interleaved(retrievers, queries).items():
                rows.append({"engine": label, "arm": f"{mode} / {backend}", **metrics(ranked, relevant),
                             "p50": pct(lat)[0], "p95": pct(lat)[1]})
            for r in retrievers.values():
                r.close()
            log(f"tau2: {mode}/{backend} done")
    s.engine, s.milvus_uri = "embedded", None
    base = {r["arm"]: r for r in rows if r["engine"] == "embedded"}
    lines = [
        f"Embedder `{rep.embedder_id}`; {rep.passages} passages (direct); embedded engine full build "
        f"{build_s:.1f} s with a fresh vector store. Moving the built indexes into Milvus: " + "; ".join(moves) + ".",
        "",
        ("| engine | arm (mode / backend) | R@10 | R@20 | R@50 | MRR | ΔR@20 vs embedded | long-query p50 ms "
         "| p95 ms | p50 / embedded p50 |"),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for r in rows:
        b = base[r["arm"]]
        delta = max(abs(r[f"r@{k}"] - b[f"r@{k}"]) for k in KS)
        worst = max(worst, delta)
        lines.append(f"| {r['engine']} | {r['arm']} | {r['r@10']:.3f} | {r['r@20']:.3f} | {r['r@50']:.3f} "
                     f"| {r['mrr']:.3f} | {r['r@20'] - b['r@20']:+.3f} | {r['p50']:.1f} | {r['p95']:.1f} "
                     f"| {r['p50'] / b['p50']:.2f} |")
    lines += ["", (f"Largest recall@10/20/50 difference from the embedded engine over all arms: {worst:.3f}. "
                   "The engines of an arm take turns query by query."), ""]
    lines += throughput
    return lines, {"worst_recall_delta": worst, "rows": rows, "passages": rep.passages}


def embedding_throughput(ws: Workspace, n: int = 320, passes: int = 2) -> list[str]:
    """Passages/s of the packaged MiniLM on ``n`` τ²-bench passages: arrival vs token-length order, 1 vs 2
    threads, 32 texts per call as a build makes them. The configurations take turns call by call
    (``passes`` times over the passages), so a change in the machine's load hits them alike."""
    from skillrag.search.embedders.onnx import OnnxEmbedder, default_minilm_paths

    s = ws.config.search
    items, _ = collect_items(ws, "direct")
    texts = sorted({p for it in items for p in passages(it.title, it.text, s.passage_words, s.passage_overlap)},
                   key=text_hash)[:n]  # arrival order of a build: by passage hash
    model, tok, sha = default_minilm_paths()
    configs = (("arrival order, 2 threads", 2, False), ("token-length order, 2 threads", 2, True),
               ("token-length order, 1 thread", 1, True))
    embedders, orders, secs = {}, {}, {}
    for label, threads, by_length in configs:
        e = OnnxEmbedder(model, tok, name="minilm-int8", sha256=sha, threads=threads)
        counts = e.token_counts(texts)
        orders[label] = [texts[i] for i in sorted(range(len(texts)), key=lambda i: counts[i])] if by_length else texts
        e.embed(texts[:8])  # warm-up
        embedders[label], secs[label] = e, 0.0
    for _ in range(passes):
        for i in range(0, len(texts), 32):
            for label, _, _ in configs:
                t0 = time.perf_counter()
                embedders[label].embed(orders[label][i : i + 32])
                secs[label] += time.perf_counter() - t0
    out = [(f"| embedding (packaged MiniLM int8, {len(texts)} passages × {passes}, 32 per call, taking turns) "
           "| passages/s | ratio |"), "|---|---|---|"]
    base = passes * len(texts) / secs[configs[0][0]]
    for label, _, _ in configs:
        rate = passes * len(texts) / secs[label]
        out.append(f"| {label} | {rate:.1f} | {rate / base:.2f} |")
        log(f"embedding: {label} {rate:.1f}/s")
    return out


# -- part 3: scale -------------------------------------------------------------------------------------
def scale_part(docs: list[dict[str, str]], queries: list[str], work: Path, sizes: list[int],
               base_passages: int) -> list[str]:
    emb = RandomEmbedder()
    rows: list[dict[str, Any]] = []
    for target in sizes:
        replicas = max(1, round(target / base_passages))
        folder = work / f"scale-{target}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        corpus = folder / "corpus.jsonl"
        n_articles = synthetic_corpus(docs, replicas, corpus)
        ws = Workspace.init(folder / "ws")
        log(f"scale {target}: ingesting {n_articles} articles…")
        ingest_s, _ = timed(lambda ws=ws, corpus=corpus: ingest(ws, [corpus]))
        prefill_vectors(ws, emb)
        s = ws.config.search
        built: dict[str, dict[str, Any]] = {}
        retrievers = {}
        for engine in ("embedded", "milvus"):
            s.engine = engine
            s.milvus_uri = str(folder / "lite.db")
            log(f"scale {target}: {engine} build…")
            write_s, rep = timed(lambda ws=ws: build_index(ws, backend="direct", embedder=emb))
            assert rep.embedded == 0, rep
            open_s, retrievers[engine] = timed(
                lambda ws=ws: open_retriever(ws, backend="direct", mode="hybrid", embedder=emb))
            built[engine] = {"write_s": write_s, "open_s": open_s, "passages": rep.passages}
        # the baseline: the same loaded embedded index (no second copy of the vectors), fully sorted
        retrievers[FULL_SORT] = full_sort_retriever(retrievers["embedded"])
        built[FULL_SORT] = {"write_s": None, "open_s": None, "passages": built["embedded"]["passages"]}
        for q in queries[:10]:  # the baseline is the same ranking: identical hits, values included
            assert retrievers[FULL_SORT].search(q, k=10) == retrievers["embedded"].search(q, k=10)
        measured = run_interleaved(retrievers, queries, k_metrics=10)
        for engine in ("embedded", FULL_SORT, "milvus"):
            lat = measured[engine][1]
            rows.append({"size": target, "engine": engine, "articles": n_articles, "ingest_s": ingest_s,
                         **built[engine], "p50": pct(lat)[0], "p95": pct(lat)[1]})
            log(f"scale {target}: {engine} p50 {pct(lat)[0]:.1f} ms")
            if engine != FULL_SORT:
                retrievers[engine].close()
            if engine != "embedded":
                rows[-1]["overlap"] = statistics.mean(len(set(a) & set(b)) / max(len(a), 1) for a, b in
                                                      zip(measured["embedded"][0], measured[engine][0], strict=True))
        del retrievers, measured
        gc.collect()
        disconnect_all()
        shutil.rmtree(folder, ignore_errors=True)
    lines = [
        ("| passages | articles | engine | index write s | open s | hybrid long-query p50 ms | p95 ms "
         "| p50 / embedded p50 | top-10 shared with embedded |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    p50_of = {(r["size"], r["engine"]): r["p50"] for r in rows}

    def secs(x: float | None) -> str:
        return "same index" if x is None else f"{x:.1f}"

    for r in rows:
        shared = f"{r['overlap']:.3f}" if "overlap" in r else "—"
        ratio = r["p50"] / p50_of[r["size"], "embedded"]
        lines.append(f"| {r['passages']} | {r['articles']} | {r['engine']} | {secs(r['write_s'])} | "
                     f"{secs(r['open_s'])} | {r['p50']:.1f} | {r['p95']:.1f} | {ratio:.2f} | {shared} |")
    fits = {}
    for engine in ("embedded", FULL_SORT, "milvus"):
        pts = [(r["passages"], r["p50"]) for r in rows if r["engine"] == engine]
        if len(pts) >= 2:
            fit = stats.linregress(np.log([p for p, _ in pts]), np.log([ms for _, ms in pts]))
            fits[engine] = fit
    lines.append("")
    for engine, fit in fits.items():
        lines.append(f"- {engine}: p50 ∝ passages^{fit.slope:.2f} (least squares on log–log, r² {fit.rvalue ** 2:.2f})")
    if "embedded" in fits and "milvus" in fits:
        e, m = fits["embedded"], fits["milvus"]
        if abs(e.slope - m.slope) > 1e-9:
            n_star = math.exp((m.intercept - e.intercept) / (e.slope - m.slope))
            p_star = math.exp(e.intercept + e.slope * math.log(n_star))
            lines.append(f"- the embedded and milvus fits cross at about {n_star:,.0f} passages ({p_star:.0f} ms p50)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-engines")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "engines.md")
    ap.add_argument("--sizes", default="7000,35000,350000", help="Approximate passages of each synthetic corpus.")
    ap.add_argument("--no-server", action="store_true", help="Skip the Milvus Lite server rows on τ².")
    ap.add_argument("--no-tau2", dest="tau2", action="store_false", help="Skip parts 1 and 2 (development runs).")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not (data / "tasks_dev.json").is_file():
        print(f"error: {data}/tasks_dev.json not found (pass --shared)", file=sys.stderr)
        return 2
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    tau2_lines, summary = tau2_part(data, args.work, with_server=not args.no_server) if args.tau2 else ([], {})
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((data / "documents").glob("*.json"))]
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))
    queries = [t["user_scenario"]["instructions"] for t in tasks]
    base_passages = summary.get("passages", 1259)  # τ²-bench articles, 150-word passages
    scale_lines = scale_part(docs, queries, args.work, sizes, base_passages) if sizes else []
    load_end = os.getloadavg()
    import pymilvus

    lines = [
        "# Search engines: embedded vs Milvus",
        "",
        (f"Produced by `benchmarks/engines.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in "
         f"{(time.perf_counter() - t_start) / 60:.0f} min; machine: {platform.machine()}, {os.cpu_count()} CPUs, "
         f"load average {load_start[0]:.1f} at start and {load_end[0]:.1f} at end (other jobs share the "
         f"machine; latencies depend on the load). pymilvus {pymilvus.__version__}, Milvus Lite 2.5.1; "
         "dense index FLAT (exact); library defaults otherwise."),
        "",
        "## τ²-bench banking dev (46 tasks, 698 articles)",
        "",
        *tau2_lines,
        "",
        "## Scale (synthetic corpora, random 384-d vectors)",
        "",
        ("τ²-bench articles replicated with 15 % of each replica's words replaced; query = the 46 task texts, "
         "hybrid / direct, k = 10; the query vector is a seeded random vector (no model time)."),
        "",
        *scale_lines,
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
