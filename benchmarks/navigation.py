"""Navigation benchmark on the τ²-bench banking dev tasks: what one retrieve call lets an agent reach.

    .venv/bin/python benchmarks/navigation.py [--shared ../shared] [--work build/bench-navigation]
                                              [--out benchmarks/results/navigation.md] [--k 10]

Query = the task's ``user_scenario.instructions``; relevant = its ``required_documents``. For each
task and each backend, one retrieve call:

* ``direct``: the top ``k`` article hits;
* ``wiki``: the top ``k`` article hits (fused order, the library default) **plus every article listed
  on the top ``p`` pages** of the same call, the pages ranked exactly as the retriever ranks them
  (its hybrid BM25 + dense ranking of the wiki index; ``Retriever.search_pages`` when the library
  has it).

*Enumeration* = |reachable ∩ relevant| / |relevant|, averaged over tasks: the share of the required
documents an agent can name after one call without guessing ids. Next to it: recall@k of the
article hits alone, the median number of articles reachable, and a matched-budget baseline: direct
recall at the same number of articles the wiki call reaches for that task (so the wiki is not
credited merely for listing more ids). The extractive navigation layer is built by the library
(entity, aspect and topic pages); ``--variants`` adds the ``no-merge`` layer (one page per article).
Results hold aggregates only, never article text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from skillrag.corpus import ingest
from skillrag.search import build_index, open_retriever
from skillrag.wiki import build_wiki, load_pages
from skillrag.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
PAGES = (1, 3, 5)


def ranked_pages(retriever, query: str, p: int) -> list[tuple[str, list[str]]]:
    """The top ``p`` pages of one wiki retrieve call: ``(page id, cited article ids)``."""
    search_pages = getattr(retriever, "search_pages", None)
    if callable(search_pages):  # the public call, once the retriever has it
        return [_page_hit(h) for h in search_pages(query, k=p)]
    qvec = retriever.query_vector(query) if retriever.mode != "bm25" else None
    out = []
    for i, _ in retriever.rank_items(query, qvec=qvec)[:p]:
        item = retriever.items[i]
        out.append((item["id"], list(item["cites"])))
    return out


def _page_hit(hit: object) -> tuple[str, list[str]]:
    """``(page id, cited article ids)`` of a ``PageHit`` (the shape the retriever's ``search_pages``
    documents: the page's id and its cited articles, each an id or an object with ``article_id``/``id``)."""
    pid = getattr(hit, "page_id", None) or getattr(hit, "id", None)
    arts = getattr(hit, "articles", None)
    if arts is None:
        arts = getattr(hit, "article_ids", None)
    if pid is None or arts is None:
        raise SystemExit(f"error: unexpected page hit {hit!r} from search_pages (no page id or articles)")
    ids = [a if isinstance(a, str) else (getattr(a, "article_id", None) or a.id) for a in arts]
    return str(pid), ids


def share(found: set[str], relevant: set[str]) -> float:
    return len(found & relevant) / len(relevant)


def evaluate(ws: Workspace, tasks: list[dict], k: int) -> dict[str, object]:
    direct = open_retriever(ws, backend="direct", mode="hybrid")
    wiki = open_retriever(ws, backend="wiki", mode="hybrid")
    rows: dict[str, list[float]] = {}
    reach_sizes: dict[int, list[int]] = {p: [] for p in PAGES}
    for t in tasks:
        q, rel = t["user_scenario"]["instructions"], set(t["required_documents"])
        d_hits = [h.article_id for h in direct.search(q, k=max(200, k))]
        w_hits = [h.article_id for h in wiki.search(q, k=k)]
        rows.setdefault("direct recall@k", []).append(share(set(d_hits[:k]), rel))
        rows.setdefault("wiki recall@k", []).append(share(set(w_hits), rel))
        pages = ranked_pages(wiki, q, max(PAGES))
        for p in PAGES:
            reach = set(w_hits) | {a for _, cites in pages[:p] for a in cites}
            reach_sizes[p].append(len(reach))
            rows.setdefault(f"wiki enum p={p}", []).append(share(reach, rel))
            rows.setdefault(f"direct matched p={p}", []).append(share(set(d_hits[: len(reach)]), rel))
    means = {name: statistics.mean(v) for name, v in rows.items()}
    wins = {p: sum(w > d for w, d in zip(rows[f"wiki enum p={p}"], rows["direct recall@k"], strict=True))
            for p in PAGES}
    losses = {p: sum(w < d for w, d in zip(rows[f"wiki enum p={p}"], rows["direct recall@k"], strict=True))
              for p in PAGES}
    return {"means": means, "reach": {p: statistics.median(v) for p, v in reach_sizes.items()},
            "wins": wins, "losses": losses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-navigation")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "navigation.md")
    ap.add_argument("--k", type=int, default=10, help="Article hits per retrieve call.")
    ap.add_argument("--variants", action="store_true", help="Also measure the no-merge layer.")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not data.is_dir():
        print(f"error: {data} not found (pass --shared)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    tasks = json.loads((data / "tasks_dev.json").read_text(encoding="utf-8"))
    arms = [("full", "entity, aspect and topic pages (extractive)")]
    if args.variants:
        arms.append(("no-merge", "one topic page per article (extractive, `no-merge`)"))
    results = []
    for variant, label in arms:
        root = args.work / variant
        ws = Workspace.open(root) if (root / "skillrag.yaml").is_file() else Workspace.init(root)
        ingest(ws, [data / "documents"])
        t0 = time.perf_counter()
        rep = build_wiki(ws, variant=variant, rebuild=(ws.wiki_dir / "manifest.json").is_file())
        wiki_s = time.perf_counter() - t0
        pages = load_pages(ws)
        kinds = {k: sum(p.kind == k for p in pages) for k in ("entity", "aspect", "topic")}
        t0 = time.perf_counter()
        build_index(ws, backend="wiki")  # brings the direct index up to date as well
        index_s = time.perf_counter() - t0
        print(f"{variant}: {rep.pages} pages ({kinds}) in {wiki_s:.1f} s; indexes in {index_s:.1f} s", flush=True)
        results.append((variant, label, kinds, evaluate(ws, tasks, args.k)))
    load_end = os.getloadavg()

    k = args.k
    lines = [
        "# Navigation: what one retrieve call reaches (τ²-bench banking)",
        "",
        (f"{len(tasks)} dev tasks, 698 articles; query = `user_scenario.instructions`; relevant = "
         f"`required_documents`; hybrid mode, k = {k} article hits per call. Produced by "
         f"`benchmarks/navigation.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: "
         f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load_start[0]:.1f} at start and "
         f"{load_end[0]:.1f} at end."),
        "",
        ("*Enumeration* = share of the required documents reachable from one call: the article hits plus "
         "every article listed on the top p pages the call returns. *Direct, matched* = direct recall at "
         "the same number of articles the wiki call reaches for that task. *Wins / losses* count tasks "
         "where wiki enumeration is above / below direct recall@k."),
        "",
        ("| layer | pages (entity / aspect / topic) | direct recall@k | wiki recall@k | p | wiki enumeration "
        "| direct, matched | median articles reached | wins / losses vs direct |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, label, kinds, res in results:
        m = res["means"]
        for p in PAGES:
            lines.append(
                f"| {label} | {kinds['entity']} / {kinds['aspect']} / {kinds['topic']} | {m['direct recall@k']:.3f} "
                f"| {m['wiki recall@k']:.3f} | {p} | {m[f'wiki enum p={p}']:.3f} | {m[f'direct matched p={p}']:.3f} "
                f"| {res['reach'][p]:.0f} | {res['wins'][p]} / {res['losses'][p]} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    full = results[0][3]["means"]
    ok = all(full[f"wiki enum p={p}"] > full["direct recall@k"] for p in PAGES)
    print("wiki enumeration beats direct recall@k at every p" if ok else
          "WARNING: wiki enumeration does not beat direct recall@k at every p", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
