"""What the agent-facing retrieve costs on the τ²-bench banking dev tasks: the ranking alone (the
search cost before hits carried a readable relevance, per-retriever ranks and the best-matching
passage) against ``Retriever.search`` now, ``search_pages`` after it (wiki backend), and the whole
``SkillTools.retrieve`` call (the per-case budget charge in SQLite included), in the same run.

    .venv/bin/python benchmarks/tool_retrieve.py [--shared ../shared] [--work build/bench-tool-retrieve]
                                                 [--out benchmarks/results/tool_retrieve.md]

Queries: the 46 tasks' ``user_scenario.instructions`` (long) and the first 100 article titles (short).
Warm latency in milliseconds, p50 / p95, in process, after one warm-up query; k = 10. The ranked ids
of ``search`` are checked to equal the ranking's top 10 (the order did not change). Also reported:
how often the preview is not the article's opening (the old preview) and holds a query term, and the
spread of ``relevance`` (median of the 10th hit's value). Aggregates only, never article text.

The ranking under ``search`` is read only as deep as needed (``skillrag.search._ranked``); the column
"search, full-sort ranking" times the same ``search`` over the same loaded index with the ranking as
it was computed before (every ranking fully sorted: ``skillrag.search.testing.full_sort_retriever``),
the two taking turns query by query; their hits are checked to be identical.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from timing import forget_query

from skillrag.corpus import ingest
from skillrag.search import build_index, open_retriever
from skillrag.search._items import preview_of
from skillrag.search.testing import full_sort_retriever
from skillrag.skill import BudgetLimits, SkillRegistry, SkillTools
from skillrag.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
K = 10


def pct(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def timed_each(fn, queries: list[str], *retrievers) -> list[float]:
    """Milliseconds of ``fn(q)`` per query, the query embedding included: the ``retrievers`` it searches
    with forget their memoised query vector first (``timing.forget_query``)."""
    out = []
    for q in queries:
        for r in retrievers:
            forget_query(r)
        t0 = time.perf_counter()
        fn(q)
        out.append(1000 * (time.perf_counter() - t0))
    return out


def timed_turns(fns: list, queries: list[str], *retrievers) -> list[list[float]]:
    """Milliseconds per query for each of ``fns``, the functions taking turns query by query (which
    goes first rotates, so neither is always the one that meets a cold cache); the query embedding
    included, as in ``timed_each``."""
    out: list[list[float]] = [[] for _ in fns]
    for n, q in enumerate(queries):
        for j in ((i + n) % len(fns) for i in range(len(fns))):
            for r in retrievers:
                forget_query(r)
            t0 = time.perf_counter()
            fns[j](q)
            out[j].append(1000 * (time.perf_counter() - t0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-tool-retrieve")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "tool_retrieve.md")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not (data / "tasks_dev.json").is_file():
        print(f"error: {data}/tasks_dev.json not found (pass --shared)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    shutil.rmtree(args.work, ignore_errors=True)
    ws = Workspace.init(args.work / "ws")
    ingest(ws, [data / "documents"])
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))
    long_q = [t["user_scenario"]["instructions"] for t in tasks]
    from skillrag.corpus import ArticleStore
    from skillrag.wiki import build_wiki

    arts = ArticleStore(ws).list()
    short_q = [a.title for a in arts[:100]]
    print("building the indexes (direct, extractive wiki)…", file=sys.stderr)
    build_wiki(ws, builder="extractive")
    build_index(ws, backend="wiki")  # builds the direct index too (fused wiki order)

    rows = []
    quality: dict[str, dict[str, float]] = {}
    for backend, mode in (("direct", "hybrid"), ("direct", "bm25"), ("wiki", "hybrid")):
        r = open_retriever(ws, backend=backend, mode=mode)
        r.search("warm-up query", k=K)
        r.search_pages("warm-up query", k=3)
        fs = full_sort_retriever(r)  # the same loaded index, ranked by full sorts as before
        for q in long_q:
            assert r.search(q, k=K) == fs.search(q, k=K)  # the same hits, values included
            if backend == "direct":  # the order is the ranking's
                assert [h.article_id for h in r.search(q, k=K)] == [r.items[i]["id"] for i, _ in r.rank_items(q)[:K]]
        label = f"{mode} / {backend}"
        for name, queries in (("long", long_q), ("short", short_q)):
            if backend == "direct":
                base = timed_each(lambda q: r.rank_items(q)[:K], queries, r)  # noqa: B023
            else:  # the wiki ranking alone: pages, then the fused article order, without hits' extras
                base = timed_each(lambda q: r._fused_order(q, K, None, r._articles), queries, r)  # noqa: B023
            def cold(q: str) -> None:
                r._passage_cache.clear()  # noqa: B023 - previews analysed afresh, as in a new process
                r.search(q, k=K)  # noqa: B023

            cold_ms = timed_each(cold, queries, r)
            for q in queries:  # warm: every hit's passages analysed (the two share the retriever's cache)
                r.search(q, k=K)
            full, before = timed_turns([lambda q: r.search(q, k=K), lambda q: fs.search(q, k=K)],  # noqa: B023
                                       queries, r, fs)
            both = timed_each(lambda q: (r.search(q, k=K), r.search_pages(q, k=3)), queries, r)  # noqa: B023
            rows.append({"arm": label, "queries": name, "base": pct(base), "search": pct(full), "cold": pct(cold_ms),
                         "full_sort": pct(before),
                         "search+pages": pct(both) if backend == "wiki" else None})
        body = {a.id: a.body for a in arts}
        moved = with_term = 0
        tenth: list[float] = []
        n = 0
        for q in long_q:
            hits = r.search(q, k=K)
            terms = set(r.analyzer.terms(q))
            for h in hits:
                n += 1
                moved += h.preview.rstrip("…") not in preview_of(body[h.article_id])
                with_term += bool(terms & set(r.analyzer.terms(h.preview)))
            if len(hits) == K:
                tenth.append(hits[-1].relevance)
        quality[label] = {"moved": moved / n, "with_term": with_term / n, "tenth": statistics.median(tenth)}
        r.close()
        print(f"{label} done", file=sys.stderr)

    # the whole tool call: a case session, the budget charge (one SQLite transaction) and the search
    skill = SkillRegistry(ws).get("cs-guidance")
    tool_rows = []
    for backend in ("direct", "wiki"):
        cfg = skill.config.model_copy(update={"backend": backend})
        sk = type(skill)(**{**skill.__dict__, "config": cfg})
        r = open_retriever(ws, backend=backend)
        t = SkillTools(ws, sk, retriever=r, limits=BudgetLimits(10_000, 10_000, 10))
        t.start_session(f"bench-{backend}", new=True)
        t.retrieve("warm-up query")
        lat = timed_each(lambda q: t.retrieve(q), long_q, r)  # noqa: B023
        plain = timed_each(lambda q: r.search(q, k=K), long_q, r)  # noqa: B023
        tool_rows.append((backend, pct(plain), pct(lat)))
        r.close()
    load_end = os.getloadavg()

    def f(p: tuple[float, float] | None) -> str:
        return "n/a" if p is None else f"{p[0]:.1f} / {p[1]:.1f}"

    lines = [
        "# Agent-facing retrieve: cost of relevance, ranks, best passage and pages (τ²-bench banking)",
        "",
        (f"{len(tasks)} dev tasks (long queries, median {int(statistics.median(len(q.split()) for q in long_q))} "
         f"words) and {len(short_q)} article titles (short queries) over {len(arts)} articles; k = {K}; warm "
         f"latency p50 / p95 in ms. Produced by `benchmarks/tool_retrieve.py` on "
         f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {platform.machine()}, {os.cpu_count()} "
         f"CPUs, load average {load_start[0]:.1f} at start and {load_end[0]:.1f} at end (other jobs share the "
         "machine)."),
        "",
        ("Baseline: the ranking alone, as `search` cost before this change (direct: `rank_items`; wiki: pages "
         "ranked and the fused article order). `search` now adds relevance, BM25/dense ranks, the article "
         "bodies and the best-matching passage (its passages analysed once per article version and kept by the "
         "retriever; the 'not cached' column analyses them afresh for every query, as a new process does). "
         "The ranked ids are identical (checked for every long query). 'search, full-sort ranking': the same "
        "`search` with every ranking fully sorted and every item's ranks computed (the ranking before it was "
        "read lazily; identical hits), taking turns with `search` query by query."),
        "",
        ("| arm | queries | baseline (ranking) | search | ratio p50 | search, passages not cached | ratio p50 "
         "| search + search_pages (3) | search, full-sort ranking | search / full-sort p50 |"),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = row["search"][0] / row["base"][0] if row["base"][0] > 0 else float("nan")
        cratio = row["cold"][0] / row["base"][0] if row["base"][0] > 0 else float("nan")
        fratio = row["search"][0] / row["full_sort"][0] if row["full_sort"][0] > 0 else float("nan")
        lines.append(f"| {row['arm']} | {row['queries']} | {f(row['base'])} | {f(row['search'])} | {ratio:.2f} | "
                     f"{f(row['cold'])} | {cratio:.2f} | {f(row['search+pages'])} | {f(row['full_sort'])} | "
                     f"{fratio:.2f} |")
    lines += ["", "| backend (hybrid) | `Retriever.search` | `SkillTools.retrieve` (charge + search + pages) | ratio p50 |",
              "|---|---|---|---|"]
    for backend, plain, tool in tool_rows:
        lines.append(f"| {backend} | {f(plain)} | {f(tool)} | {tool[0] / plain[0]:.2f} |")
    lines += ["", "| arm | previews not the article's opening | previews holding a query term | median relevance of hit 10 |",
              "|---|---|---|---|"]
    for label, qv in quality.items():
        lines.append(f"| {label} | {qv['moved']:.0%} | {qv['with_term']:.0%} | {qv['tenth']:.3f} |")
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
