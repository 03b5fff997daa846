"""What reading cost the agents of an agent-harness round, from their tool-call log, and what other cost
models would have charged for the same reads: the measurement behind the fetch rule of ``skill.budget``.

    .venv/bin/python benchmarks/read_costs.py --log RUNS/tool_calls.jsonl [--documents DIR] [--drafts DIR ...]
                                              [--max-fetches 12] [--out benchmarks/results/read_costs.md]

``--log``: the ``runs/tool_calls.jsonl`` lines ``SkillTools`` appends (per call: tool, case, arguments).
``--documents``: the corpus as JSON files (``{"id", "content"}``; default: the τ²-bench banking documents
in ``../shared``), for the size of each article read. ``--drafts``: the agents' draft folders, where an agent
that kept local copies of articles (``*.txt``) left them. Only counts are written, never article text.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--documents", type=Path, default=REPO.parent / "shared" / "data" / "tau2-banking" / "documents")
    ap.add_argument("--drafts", type=Path, nargs="*", default=[])
    ap.add_argument("--max-fetches", type=int, default=12)
    ap.add_argument("--max-queries", type=int, default=5)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "read_costs.md")
    args = ap.parse_args(argv)
    if not args.log.is_file() or not args.documents.is_dir():
        print("error: --log must be a file and --documents a folder", file=sys.stderr)
        return 2
    size: dict[str, int] = {}
    headed: dict[str, int] = {}  # Markdown headings per article: how many sections a --section read can pick
    for f in args.documents.glob("*.json"):
        doc = json.loads(f.read_text(encoding="utf-8"))
        for d in doc if isinstance(doc, list) else [doc]:
            size[d["id"]] = len(d.get("content", ""))
            headed[d["id"]] = len(re.findall(r"(?m)^#{1,6} \S", d.get("content", "")))
    calls = [json.loads(line) for line in args.log.read_text(encoding="utf-8").splitlines() if line.strip()]
    reads: dict[str, list[dict]] = defaultdict(list)
    queries: Counter[str] = Counter()
    for c in calls:
        if c["tool"] == "get_article" and c.get("ok"):
            reads[c["case_id"]].append(c["args"])
        elif c["tool"] == "retrieve" and c.get("ok"):
            queries[c["case_id"]] += 1
    cases = sorted(set(reads) | set(queries))
    fetches = [len(reads[c]) for c in cases]
    rereads = sum(len(reads[c]) - len({a["article_id"] for a in reads[c]}) for c in cases)
    parts = Counter("section" if "section" in a else "summary" if a.get("summary") else "whole"
                    for c in cases for a in reads[c])
    chars = {c: sum(size.get(a["article_id"], 0) for a in reads[c]) for c in cases}
    per_read = [size.get(a["article_id"], 0) for c in cases for a in reads[c]]
    capped = [c for c in cases if len(reads[c]) >= args.max_fetches]
    sectioned = sum(1 for c in cases for a in reads[c] if headed.get(a["article_id"], 0) >= 2)
    corpus = sorted(size.values())
    copies = sum(1 for d in args.drafts for _ in d.rglob("*.txt"))
    mean_read = statistics.mean(per_read)
    budget_equal = round(args.max_fetches * mean_read, -2)  # a character budget as large as today's mean spend
    refused_equal = [c for c in cases if chars[c] > budget_equal]
    budget_all = round(max(chars.values()), -3) + 1000  # the least round budget every run fits in
    n = len(cases)

    def fmt(x: float) -> str:
        return f"{x:,.0f}"

    lines = [
        "# Read costs: what the agents read, and what each cost model would have charged",
        "",
        (f"From `{args.log.name}` of one agent-harness round ({n} cases, budgets {args.max_queries} queries / "
         f"{args.max_fetches} fetches), article sizes from the corpus ({len(size)} articles: median "
         f"{fmt(statistics.median(corpus))} characters, 90th percentile {fmt(corpus[int(0.9 * len(corpus))])}, "
         f"largest {fmt(corpus[-1])}). Produced by `benchmarks/read_costs.py`; counts only."),
        "",
        "| measure | value |",
        "|---|---|",
        f"| `get_article` calls | {sum(fetches)} (median {statistics.median(fetches):g} per case) |",
        f"| re-reads of an article already read in the case | {rereads} |",
        (f"| reads by part: whole / `--section` / `--summary` | {parts['whole']} / {parts['section']} / "
        f"{parts['summary']} |"),
        f"| cases that used every fetch | {len(capped)} of {n} ({', '.join(capped)}) |",
        f"| queries used in those cases | {', '.join(str(queries[c]) for c in capped)} (of {args.max_queries}) |",
        (f"| characters read per case | median {fmt(statistics.median(chars.values()))}, largest "
        f"{fmt(max(chars.values()))} |"),
        (f"| characters per read | median {fmt(statistics.median(per_read))}, mean {fmt(mean_read)}, largest "
        f"{fmt(max(per_read))} |"),
        f"| reads of an article with two sections or more | {sectioned} of {sum(fetches)} |",
        f"| article copies the agents kept in their draft folders | {copies} |",
        "",
        "Other cost models over the same reads:",
        "",
        "| cost model | fetches or characters spent | cases it would have refused earlier |",
        "|---|---|---|",
        f"| one fetch per `get_article` call (before) | {sum(fetches)} fetches | {len(capped)} at the cap |",
        (f"| one fetch per article per case, re-reads free (chosen) | {sum(fetches) - rereads} fetches | "
         f"{len(capped)} at the cap (no run re-read: the rule changes no measured spend) |"),
        (f"| a character budget as large as today's mean spend ({args.max_fetches} × {fmt(mean_read)} ≈ "
         f"{fmt(budget_equal)} characters) | {fmt(sum(chars.values()))} characters | {len(refused_equal)} "
         f"({', '.join(refused_equal) or 'none'}) |"),
        (f"| a character budget every run fits in ({fmt(budget_all)}) | {fmt(sum(chars.values()))} characters | "
         f"none; but {fmt(budget_all / statistics.median(corpus))} median-sized articles per case |"),
        "",
        "## Decision",
        "",
        ("**An article costs one fetch per case, however often and in whatever parts it is read** (whole, a "
         "section, the summary, `--json`); a re-read is free, also once the fetch budget is spent. The budget "
         "stays an enforced control of the same size and unit on every surface (`skill/budget.py`, "
         "`ONCE_PER_TARGET`): it bounds how many articles a case sees, and re-reading shows nothing new."),
        "",
        (f"Why: no run re-read an article or read a section ({rereads} re-reads, {parts['section']} section reads "
         f"in {sum(fetches)} reads, {sectioned} of them of articles with two sections or more), while re-reading "
         f"cost a fetch; the agents kept {copies} copies of articles in their draft folders instead. Free "
         "re-reads remove that reason, make a section read followed by the rest of the article cost what the "
         "whole does, and leave every measured spend as it was, so rounds stay comparable at the same budgets."),
        "",
        (f"Why not a character budget: the fetch cap bound in {len(capped)} of {n} cases; a character budget as "
         f"large as today's mean spend would have stopped {sum(c in refused_equal for c in capped)} of them "
         f"earlier still (and {len(refused_equal)} cases in all), and one large enough for every run "
         f"({fmt(budget_all)} characters) would let a case read about "
         f"{fmt(budget_all / statistics.median(corpus))} median-sized articles: a different, much larger budget "
         "rather than a cost model, and one no earlier round ran under. The comparisons that ran out of fetches "
         "are served by the compact result instead: a page's best-matching articles and, with `--detail pages`, "
         "every article's one-line summary, for one query."),
    ]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
