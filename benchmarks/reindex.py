"""Re-index cost at scale: a no-op ``build_index`` and an incremental one, on a synthetic corpus.

    .venv/bin/python benchmarks/reindex.py [--shared ../shared] [--work build/bench-reindex]
                                           [--out benchmarks/results/reindex.md] [--passages 100000]
                                           [--changed 1,100] [--keep]

The corpus: the τ²-bench banking articles replicated to about ``--passages`` direct-backend passages
(``synthetic.synthetic_corpus``), ingested into a fresh workspace, passage vectors prefilled into the
vector store (random unit vectors: the benchmark measures the index, not the model). Measured, wall
seconds: the first build (nothing embedded: every vector is in the store), a re-index with nothing
changed (``report.up_to_date``: told from the manifest's header, ``search.index.input_stamp``), beside
the same no-op with the stamp hidden from ``build_index``, taking turns (every article's id, title,
hashes and parent read, its facets and item hash computed and compared with the full manifest; no
body read), and, for each count in ``--changed``, a re-index after that many articles were edited and
ingested (the ingest itself is not in the figure): the update in place, then, as its baseline in the
same run, a full rebuild of the same corpus (``force``: every article read and analysed, no vector
embedded again), the ratio of the two, and whether the two left the same index files (the header's
time stamp aside). ``--keep`` reuses the workspace of an earlier run with the same size (the first
build is then not measured). The Markdown table is printed and written to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from synthetic import RandomEmbedder, prefill_vectors, synthetic_corpus

from skillrag.corpus import ingest
from skillrag.search import build_index
from skillrag.search import index as search_index
from skillrag.search.engines.embedded import index_dir
from skillrag.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
#: Direct-backend passages of one copy of the τ²-bench articles (150-word passages, 30 overlap).
TAU2_PASSAGES = 1259


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextlib.contextmanager
def item_by_item() -> Iterator[None]:
    """``build_index`` without the manifest's stamp (it never matches), so a no-op is told item by item:
    every article's head read, its facets and item hash computed and compared with the full manifest."""
    real = search_index.input_stamp
    search_index.input_stamp = lambda *a, **k: "baseline: no stamp"
    try:
        yield
    finally:
        search_index.input_stamp = real


def index_digest(ws: Workspace) -> str:
    """sha256 over the direct index's files and its manifest's item maps: equal for two builds that
    store the same index (the header's ``built_at`` and ``input_stamp`` are left out)."""
    folder = index_dir(ws, "direct")
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name not in ("header.json", "manifest.json"):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    h.update(json.dumps([manifest["items"], manifest["content_hashes"], manifest["passages"]]).encode())
    return h.hexdigest()


def edit(corpus: Path, n: int, round_: int) -> Path:
    """``corpus`` rewritten in place with one sentence added to each of its first ``n`` articles (an
    article keeps its source file: ingest refuses an id from another one)."""
    lines = corpus.read_text(encoding="utf-8").splitlines()
    for i in range(min(n, len(lines))):
        rec = json.loads(lines[i])
        rec["content"] += f"\n\nEdited by the re-index benchmark, round {round_}."
        lines[i] = json.dumps(rec)
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "bench-reindex")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "reindex.md")
    ap.add_argument("--passages", type=int, default=100_000)
    ap.add_argument("--changed", default="1,100", help="Articles edited before each incremental re-index.")
    ap.add_argument("--keep", action="store_true", help="Reuse the workspace of an earlier run of this size.")
    args = ap.parse_args(argv)
    data = args.shared / "data" / "tau2-banking"
    if not (data / "documents").is_dir():
        print(f"error: {data}/documents not found (pass --shared)", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    folder = args.work / f"p{args.passages}"
    corpus = folder / "corpus.jsonl"
    emb = RandomEmbedder()
    rows: list[tuple[str, str]] = []
    if not (args.keep and (folder / "ws" / "skillrag.yaml").is_file()):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((data / "documents").glob("*.json"))]
        n_articles = synthetic_corpus(docs, max(1, round(args.passages / TAU2_PASSAGES)), corpus)
        ws = Workspace.init(folder / "ws")
        log(f"ingesting {n_articles} articles…")
        t0 = time.perf_counter()
        ingest(ws, [corpus])
        rows.append(("ingest (not an index figure)", f"{time.perf_counter() - t0:.1f} s"))
        log("prefilling vectors…")
        prefill_vectors(ws, emb)
        log("first build…")
        t0 = time.perf_counter()
        rep = build_index(ws, backend="direct", embedder=emb)
        rows.append(("first build (every vector already in the store)",
                     (f"{time.perf_counter() - t0:.1f} s ({rep.items} articles, {rep.passages} passages, "
                      f"{rep.embedded} embedded)")))
    else:
        ws = Workspace.open(folder / "ws")
        build_index(ws, backend="direct", embedder=emb)  # whatever an earlier run left, brought up to date
    for attempt in range(3):
        for label, how in (("stamp in the manifest", contextlib.nullcontext),
                           ("stamp hidden, item by item", item_by_item)):
            with how():
                t0 = time.perf_counter()
                rep = build_index(ws, backend="direct", embedder=emb)
                took = time.perf_counter() - t0
            rows.append((f"re-index, nothing changed, {label} (run {attempt + 1})",
                         f"{took:.2f} s (up to date: {rep.up_to_date}; {rep.items} items, {rep.passages} passages)"))
            log(rows[-1][1])
    for round_, n in enumerate(int(x) for x in args.changed.split(",") if x.strip()):
        ingest(ws, [edit(corpus, n, round_)])
        t0 = time.perf_counter()
        rep = build_index(ws, backend="direct", embedder=emb)
        took = time.perf_counter() - t0
        rows.append((f"re-index, {n} article(s) changed, updated in place",
                     (f"{took:.2f} s ({len(rep.changed)} changed, {rep.embedded} passages "
                      f"embedded, {rep.reused} reused)")))
        log(rows[-1][1])
        digest = index_digest(ws)
        t0 = time.perf_counter()
        full = build_index(ws, backend="direct", embedder=emb, force=True)
        base = time.perf_counter() - t0
        rows.append((f"re-index, {n} article(s) changed, baseline: full rebuild of the same corpus",
                     f"{base:.2f} s ({full.items} articles, {full.passages} passages, {full.embedded} embedded)"))
        rows.append((f"re-index, {n} article(s) changed: full rebuild / in place",
                     f"{base / took:.0f}× (same index files: {index_digest(ws) == digest})"))
        log(rows[-2][1] + "; " + rows[-1][1])
    load_end = os.getloadavg()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        "# Re-index cost at scale (synthetic corpus)",
        "",
        (f"Produced by `benchmarks/reindex.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: "
         f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load_start[0]:.1f} at start and "
         f"{load_end[0]:.1f} at end (other jobs share the machine). τ²-bench articles replicated to about "
         f"{args.passages} passages, random vectors prefilled; embedded engine, direct backend; "
         f"`build_index` wall time. Peak resident memory {rss:.0f} MiB."),
        "",
        "| step | value |",
        "|---|---|",
        *[f"| {a} | {b} |" for a, b in rows],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
