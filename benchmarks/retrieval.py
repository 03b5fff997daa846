"""Retrieval benchmark on the τ²-bench banking dev tasks: every backend × mode against a plain BM25
baseline computed in the same run.

    .venv/bin/python benchmarks/retrieval.py [--shared ../shared] [--work build/bench-retrieval]
                                             [--out benchmarks/results/retrieval.md] [--no-wiki]

Query = the task's ``user_scenario.instructions`` (long role-play text); relevant = its
``required_documents``. recall@k = |top-k ∩ relevant| / |relevant|, averaged over tasks; MRR = mean of
1 / rank of the first relevant article within the top 50 (0 when none). Baseline: ``bm25s`` defaults
(Lucene BM25, k1 1.5, b 0.75) over title + content, English stop words, no stemming, one query.

Arms: every mode × backend under the library defaults, then one setting changed at a time: the wiki
backend in plain page order, with its article rank weighing as much as the page rank
(``wiki_article_weight`` 1), with the dense query budget of 128 or 256 tokens, with the previous defaults
(128 tokens, weight 1), and with the query focused on the scenario's request sentences
(``skillrag.text.request_sentences``: the role-play directions dropped); and the long-query policy of
the dense query (``search.dense_query`` / ``max_query_tokens``) for hybrid / direct.

Also measured: full index build (fresh workspace, empty vector cache), re-index with nothing changed,
re-index after one article changed, warm query latency p50/p95 in milliseconds (in-process, query
embedding included: every timed call embeds its query, ``timing.timed_search``; after one warm-up
query) for the long task queries and for short queries (the first 100 article titles), peak
resident memory (``ru_maxrss``), and the two BM25 engines considered (``bm25s`` vs SQLite FTS5) on
the same analysed text. The Markdown table is printed and written to
``--out``; it holds aggregates only, never article text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from timing import percentiles, timed_search

from skillrag.corpus import ingest
from skillrag.evaluation.metrics import ranking_metrics
from skillrag.search import build_index, open_retriever
from skillrag.text import Analyzer, request_sentences
from skillrag.workspace import Workspace

KS = (5, 10, 20, 50)
#: The arm whose queries are the scenarios' request sentences only (query focusing, measured, not the default).
FOCUSED = "hybrid / wiki, query = request sentences only (`skillrag.text.request_sentences`)"
REPO = Path(__file__).resolve().parents[1]


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]]) -> dict[str, float]:
    """recall@k for KS and MRR@50, macro-averaged over queries (``skillrag.evaluation.ranking_metrics``)."""
    return ranking_metrics(ranked, relevant, KS)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def measure_arm(r: Any, queries: Sequence[str], short: Sequence[str], *,
                clock: Callable[[], float] = time.perf_counter) -> tuple[list[list[str]], list[float], list[float]]:
    """``(top-50 ids per long query, long-query ms, short-query ms)`` for one open retriever, after one
    warm-up query. Each timed call (k = 10) embeds its query (``timing.timed_search``); the top 50 for
    the metrics is read after it, untimed."""
    r.search("warm-up query", k=10)
    ranked, lat, slat = [], [], []
    for q in queries:
        lat.append(timed_search(r, q, 10, clock=clock)[1])
        ranked.append([h.article_id for h in r.search(q, k=50)])
    for q in short:
        slat.append(timed_search(r, q, 10, clock=clock)[1])
    return ranked, lat, slat


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def baseline_bm25(docs: list[dict], queries: list[str]) -> tuple[list[list[str]], list[float]]:
    """Plain bm25s, one query each: the reference arm of the issue."""
    ids = [d["id"] for d in docs]
    r = bm25s.BM25()
    texts = [d["title"] + "\n" + d["content"] for d in docs]
    corpus = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    r.index(corpus, show_progress=False)
    ranked, lat = [], []
    for q in queries:
        t0 = time.perf_counter()
        res, _ = r.retrieve(bm25s.tokenize(q, stopwords="en", show_progress=False), k=50, show_progress=False)
        lat.append(1000 * (time.perf_counter() - t0))
        ranked.append([ids[i] for i in res[0]])
    return ranked, lat


def fts5_vs_bm25s(docs: list[dict], queries: list[str], relevant: list[set[str]], work: Path) -> list[dict]:
    """The two BM25 engines on identical analysed text (stop words + Snowball stems, title twice)."""
    an = Analyzer("en", "english")
    ids = [d["id"] for d in docs]
    texts = [" ".join(an.terms("\n".join([d["title"]] * 2 + [d["content"]]))) for d in docs]
    qterms = [an.terms(q) for q in queries]
    rows = []
    # bm25s, persisted and loaded back
    def build_bm25s() -> bm25s.BM25:
        r = bm25s.BM25(k1=1.2, b=0.75)
        r.index([t.split() for t in texts], show_progress=False)
        r.save(str(work / "bm25s-probe"), show_progress=False)
        return bm25s.BM25.load(str(work / "bm25s-probe"), load_vocab=True, show_progress=False)

    bt, r = timed(build_bm25s)
    ranked, lat = [], []
    for q in qterms:
        t0 = time.perf_counter()
        s = r.get_scores([r.vocab_dict[t] for t in q if t in r.vocab_dict])
        order = np.argsort(-s, kind="stable")[:50]
        lat.append(1000 * (time.perf_counter() - t0))
        ranked.append([ids[i] for i in order if s[i] > 0])
    rows.append({"engine": "bm25s (numpy, saved/loaded)", "build_s": bt, **metrics(ranked, relevant),
                 "p50": percentiles(lat)[0]})
    # SQLite FTS5 (k1 1.2, b 0.75 fixed), query = OR of distinct terms
    db = work / "fts5-probe.sqlite"
    db.unlink(missing_ok=True)

    def build_fts() -> sqlite3.Connection:
        conn = sqlite3.connect(db)
        conn.execute("CREATE VIRTUAL TABLE a USING fts5(id UNINDEXED, body, tokenize='unicode61')")
        with conn:
            conn.executemany("INSERT INTO a (id, body) VALUES (?, ?)", zip(ids, texts))
        return conn

    bt, conn = timed(build_fts)
    ranked, lat = [], []
    for q in qterms:
        match = " OR ".join(f'"{t}"' for t in q) or '""'  # repeated phrases count again, as in bm25s
        t0 = time.perf_counter()
        got = [row[0] for row in conn.execute(
            "SELECT id FROM a WHERE a MATCH ? ORDER BY bm25(a) LIMIT 50", (match,))]
        lat.append(1000 * (time.perf_counter() - t0))
        ranked.append(got)
    conn.close()
    rows.append({"engine": "SQLite FTS5 (OR query)", "build_s": bt, **metrics(ranked, relevant),
                 "p50": percentiles(lat)[0]})
    return rows


def fmt(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-retrieval")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "retrieval.md")
    ap.add_argument("--no-wiki", action="store_true", help="Skip the wiki backend rows.")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not (data / "tasks_dev.json").is_file():
        print(f"error: {data}/tasks_dev.json not found (pass --shared)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    src = args.work / "documents"
    shutil.copytree(data / "documents", src)  # a private copy: one article is edited below
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(src.glob("*.json"))]
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))
    queries = [t["user_scenario"]["instructions"] for t in tasks]
    relevant = [set(t["required_documents"]) for t in tasks]
    ws = Workspace.init(args.work / "ws")
    ingest(ws, [src])
    rss0 = rss_mib()

    print(f"building the direct index over {len(docs)} articles (fresh vector cache)…", file=sys.stderr)
    build_s, report = timed(lambda: build_index(ws, backend="direct"))
    rss_build = rss_mib()
    noop_s, noop = timed(lambda: build_index(ws, backend="direct"))
    assert noop.up_to_date  # type: ignore[union-attr]
    victim = min(src.glob("*.json"))
    doc = json.loads(victim.read_text(encoding="utf-8"))
    doc["content"] += "\n\nThis paragraph was added by the benchmark to change one article."
    victim.write_text(json.dumps(doc), encoding="utf-8")
    ingest(ws, [src])
    incr_s, incr = timed(lambda: build_index(ws, backend="direct"))
    victim.write_text(json.dumps(json.loads((data / "documents" / victim.name).read_text(encoding="utf-8"))),
                      encoding="utf-8")
    ingest(ws, [src])
    build_index(ws, backend="direct")  # back to the original corpus (vectors come from the cache)

    backends = ["direct"]
    wiki_note = ""
    wiki_build = None
    if not args.no_wiki:
        try:
            from skillrag.wiki import build_wiki

            t_wiki, _ = timed(lambda: build_wiki(ws, builder="extractive"))
            wiki_build = timed(lambda: build_index(ws, backend="wiki"))
            backends.append("wiki")
            wiki_note = f"extractive layer built in {t_wiki:.1f} s; {wiki_build[1].items} pages"
        except Exception as exc:  # noqa: BLE001 - report, do not hide: the row says why
            wiki_note = f"not available: {type(exc).__name__}: {exc}"

    base_ranked, base_lat = baseline_bm25(docs, queries)
    rows = [{"arm": "baseline: bm25s, single query, raw articles", **metrics(base_ranked, relevant),
             "p50": percentiles(base_lat)[0], "p95": percentiles(base_lat)[1], "sp50": None}]
    short = [d["title"] for d in docs[:100]]
    s = ws.config.search
    defaults = (f"dense query {s.dense_query} {s.max_query_tokens} tokens, wiki order {s.wiki_order} "
                f"(article rank weight {s.wiki_article_weight:g})")
    # (label, backend, mode, settings changed from the defaults for this arm only)
    arms: list[tuple[str, str, str, dict[str, object]]] = [
        (f"{m} / {b}", b, m, {}) for b in backends for m in ("hybrid", "bm25", "dense")]
    focused = [" ".join(request_sentences(q)) or q for q in queries]
    if "wiki" in backends:
        arms += [
            ("hybrid / wiki, page order (`wiki_order: page`)", "wiki", "hybrid", {"wiki_order": "page"}),
            ("hybrid / wiki, article rank weight 1 (`wiki_article_weight: 1`)", "wiki", "hybrid",
             {"wiki_article_weight": 1.0}),
            ("hybrid / wiki, dense query select 128 tokens", "wiki", "hybrid", {"max_query_tokens": 128}),
            ("hybrid / wiki, dense query select 256 tokens", "wiki", "hybrid", {"max_query_tokens": 256}),
            ("hybrid / wiki, before issue 24 (select 128 tokens, article rank weight 1)", "wiki", "hybrid",
             {"max_query_tokens": 128, "wiki_article_weight": 1.0}),
            (FOCUSED, "wiki", "hybrid", {}),
        ]
    policy_arms = [("pool", 0), ("truncate", 128), ("truncate", 256), ("select", 96), ("select", 128),
                   ("select", 160), ("select", 192), ("select", 256)]
    arms += [(f"hybrid / direct, dense query {pol}" + (f" {n} tokens" if n else " (150-word windows)"), "direct",
              "hybrid", {"dense_query": pol, **({"max_query_tokens": n} if n else {})}) for pol, n in policy_arms
             if (pol, n) != (s.dense_query, s.max_query_tokens)]
    for label, backend, mode, changes in arms:
        saved = {name: getattr(s, name) for name in changes}
        for name, value in changes.items():
            setattr(s, name, value)
        r = open_retriever(ws, backend=backend, mode=mode)
        ranked, lat, slat = measure_arm(r, focused if label == FOCUSED else queries, short)
        r.close()
        for name, value in saved.items():
            setattr(s, name, value)
        rows.append({"arm": label, **metrics(ranked, relevant), "p50": percentiles(lat)[0],
                     "p95": percentiles(lat)[1], "sp50": percentiles(slat)[0], "sp95": percentiles(slat)[1]})
        print(f"{label} done", file=sys.stderr)
    if "wiki" not in backends:
        rows.append({"arm": "hybrid / wiki", "note": wiki_note})
    engines = fts5_vs_bm25s(docs, queries, relevant, args.work)
    load_end = os.getloadavg()

    lines = [
        "# Retrieval benchmark: τ²-bench banking dev tasks",
        "",
        (f"{len(tasks)} dev tasks, {len(docs)} articles; query = `user_scenario.instructions` "
        f"(median {int(statistics.median(len(q.split()) for q in queries))} words); relevant = "
        "`required_documents`. Produced by `benchmarks/retrieval.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load_start[0]:.1f} at start and {load_end[0]:.1f} at end "
        "(other jobs may share the machine; latencies and build times depend on the load)."),
        f"Embedder `{report.embedder_id}`; {report.passages} passages.",  # type: ignore[union-attr]
        f"Library defaults unless the row says otherwise: {defaults}.",
        "",
        ("| arm (mode / backend) | R@5 | R@10 | R@20 | R@50 | MRR | long-query p50 ms | p95 ms "
        "| short-query p50 ms | p95 ms |"),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "note" in row:
            lines.append(f"| {row['arm']} | {row['note']} |||||||||")
            continue
        lines.append(
            f"| {row['arm']} | {fmt(row['r@5'])} | {fmt(row['r@10'])} | {fmt(row['r@20'])} "
            f"| {fmt(row['r@50'])} "
            f"| {fmt(row['mrr'])} | {fmt(row['p50'], 1)} | {fmt(row['p95'], 1)} | {fmt(row.get('sp50'), 1)} "
            f"| {fmt(row.get('sp95'), 1)} |"
        )
    rep, nrep, irep = report, noop, incr
    lines += [
        "",
        "| index (direct backend) | value |",
        "|---|---|",
        (f"| full build, fresh vector cache | {build_s:.1f} s ({rep.passages} passages embedded, "  # type: ignore
        f"{rep.passages / build_s:.1f} passages/s) |"),  # type: ignore[union-attr]
        f"| re-index, nothing changed | {noop_s:.2f} s (up to date: {nrep.up_to_date}) |",  # type: ignore
        (f"| re-index, one article changed | {incr_s:.2f} s ({irep.embedded} passages embedded, "  # type: ignore
        f"{irep.reused} reused) |"),  # type: ignore[union-attr]
        f"| peak resident memory (ru_maxrss) | {rss0:.0f} MiB before the build, {rss_build:.0f} MiB after |",
    ]
    if wiki_build is not None:
        lines.append(f"| wiki backend index | {wiki_build[0]:.1f} s ({wiki_note}) |")
    lines += [
        "",
        ("BM25 engine choice (same analysed text: stop words, Snowball stems, title twice; k1 1.2, b 0.75; "
        "one long query each):"),
        "",
        "| engine | build s | R@10 | R@20 | R@50 | MRR | query p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in engines:
        lines.append(f"| {e['engine']} | {e['build_s']:.2f} | {fmt(e['r@10'])} | {fmt(e['r@20'])} | "
                     f"{fmt(e['r@50'])} | {fmt(e['mrr'])} | {e['p50']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
