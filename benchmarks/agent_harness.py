"""τ²-bench banking dev: the skill run by an external agent harness, scored by `eval score`.

    .venv/bin/python benchmarks/agent_harness.py -w WS --cases CASES.jsonl \
        --arm agent=RUNS_A --arm extractive=RUNS_B [--verdicts VOTES --mapping MAP [--votes 3]] \
        --harness "a Claude-class coding agent run through the exported scripts" \
        --judge "one blind vote per item by a separate agent" [--out benchmarks/results]

The runs come from `../shared/agent-eval/` (docs/agent-eval.md): one runs folder per arm, written by the
exported skill's scripts (or `skillrag run-batch --out`). Nothing is run here: every figure is
`skillrag.evaluation.score_runs` over those folders (the outputs re-validated against the evidence
contract on the workspace's articles, a missing output a failed case), restricted to the cases some arm
attempted. Writes ``OUT/agent_harness.md`` (the table, with how it was produced) and the full report
under ``OUT/agent_harness/`` (aggregates only; per-case results, which quote articles, stay out).
The harness and judge descriptions are required: a table without them cannot be read honestly.
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-w", "--workspace", type=Path, required=True, help="workspace the runs used (its articles)")
    ap.add_argument("--cases", type=Path, required=True, help="case file with ground truth (dev cases)")
    ap.add_argument("--arm", action="append", required=True, help="NAME=RUNS_DIR (first = reference)")
    ap.add_argument("--verdicts", type=Path, help="external votes (filled packets folder, .jsonl or .json)")
    ap.add_argument("--mapping", type=Path, help="the packets' item mapping (blind packets)")
    ap.add_argument("--votes", type=int, help="votes expected per item (missing ones count as failed votes)")
    ap.add_argument("--harness", required=True, help="who ran the skill, in plain words")
    ap.add_argument("--judge", default="no judge (judge metrics not measured)", help="who judged, in plain words")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results", help="results folder")
    args = ap.parse_args(argv)

    from skillrag.evaluation import load_mapping, read_votes, score_runs, write_report
    from skillrag.evaluation.score import parse_arm
    from skillrag.skill.cases import CaseFile
    from skillrag.workspace import Workspace

    ws = Workspace.open(args.workspace)
    cf = CaseFile(args.cases)
    arms = [parse_arm(a) for a in args.arm]
    votes = None
    if args.verdicts is not None:
        votes = read_votes(args.verdicts, load_mapping(args.mapping) if args.mapping else None)
    outcome = score_runs(ws, cf, arms, only_ran=True, votes=votes, votes_per_item=args.votes)
    report = outcome.report(name="agent-harness", reference_arm=arms[0].name)
    write_report(report, args.out / "agent_harness")

    judges = report.judge_names
    head = ["arm", "n", "accepted", "docs_consulted_recall", "docs_cited_recall", "tools_in_guidance_recall",
            "tools_grounded_recall", *(f"judge:{j}" for j in judges), "median queries/fetches"]
    rows = []
    for a in report.arms:
        rate = a.rates["accepted"]
        row = [a.name, str(a.n_cases), rate.format()]
        row += [("n/a" if a.means.get(m) is None else f"{a.means[m]:.2f}")
                for m in ("docs_consulted_recall", "docs_cited_recall", "tools_in_guidance_recall",
                          "tools_grounded_recall")]
        row += [a.judges[j].rate.format() if j in a.judges else "n/a" for j in judges]
        q, f = a.medians.get("queries"), a.medians.get("fetches")
        row.append(f"{'n/a' if q is None else f'{q:g}'}/{'n/a' if f is None else f'{f:g}'}")
        rows.append(row)
    lines = [
        "# τ²-bench banking dev: the skill in an external agent harness",
        "",
        (f"Scored by `benchmarks/agent_harness.py` (`eval score`) on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
         f"{platform.machine()} / Python {platform.python_version()}. {len(outcome.case_ids)} dev cases (those some "
         f"arm attempted); reference arm `{arms[0].name}`. Harness: {args.harness}. Judges: {args.judge}."),
        ("Rates: k/n with 95% Wilson intervals; recalls are means over the cases. A missing or rejected output "
         "is a failed case. With n this small, differences are directional."),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]
    for arm, comps in report.paired.items():
        for metric, c in comps.items():
            if metric in ("accepted", "tools_grounded_all", "judge:guidance_match", "judge:snippets_sufficient"):
                lines.append(f"- {arm} vs {report.reference_arm}, {metric}: delta {c.delta_pp:+.1f} pp, "
                             f"b={c.test.b} c={c.test.c}, exact McNemar p="
                             f"{'<0.001' if c.test.p_value < 0.001 else f'{c.test.p_value:.3f}'}")
    lines += ["", *(f"> {n}" for n in report.notes), "",
              "Full report: [agent_harness/report.md](agent_harness/report.md).", ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "agent_harness.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out / 'agent_harness.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
