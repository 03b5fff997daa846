"""Measurement: deterministic metrics, LLM judges, paired statistics, arms and the report.

    metrics     Metric registry over (output, run record, ground truth): recall of required documents,
                tools named in guidance / grounded in snippets, order agreement, run cost
    judges      Guidance-Match, Snippets-Sufficient, reference-free correctness; majority of 3 calls
    statistics  Wilson intervals, exact McNemar tests, paired deltas (scipy)
    benchmarks  registry of benchmarks (demo, tau2-banking-dev, jsonl): cases + ground truth + corpus
    config      the evaluation YAML: cases, arms (harness, model, backend, mode, variant), matched effort
    arms        run every arm over the same cases with N workers and resume → results/ARM.jsonl;
                ``score_case``, the one scoring path of eval run and eval score
    collect     read runs any harness saved (RUNS_DIR/<case_id>/output.json, record.json, the tool log)
    score       eval score: re-validate and score saved runs, one or several arms, same report
    packets     external judges: blind judge packets out, verdicts back in
    report      summary, Markdown + HTML + plots; compare two results files
    testing     ScriptedJudge and fake_run_case (no network, no model)
"""

from skillrag.evaluation.arms import (
    CaseResult,
    ResultsFile,
    arm_workspace,
    harness_runner,
    run_evaluation,
    score_case,
)
from skillrag.evaluation.benchmarks import BENCHMARKS, prepare_benchmark
from skillrag.evaluation.collect import CollectedRun, attribute_calls, collect_runs, read_tool_log
from skillrag.evaluation.config import (
    ArmSpec,
    BenchmarkRef,
    EvalConfig,
    JudgeSettings,
    load_eval_config,
)
from skillrag.evaluation.judges import (
    JUDGES,
    JudgeInputs,
    JudgeResult,
    JudgeVote,
    decide,
    judge_inputs,
    not_judged,
    parse_verdict,
    run_judge,
)
from skillrag.evaluation.metrics import (
    METRICS,
    Metric,
    Reference,
    RunCost,
    ScoredCase,
    compute_metrics,
    get_metric,
    ranking_metrics,
)
from skillrag.evaluation.packets import (
    PacketEntry,
    PacketMapping,
    VoteSet,
    load_mapping,
    read_votes,
    write_packets,
)
from skillrag.evaluation.report import Report, compare_files, load_results, summarize, write_report
from skillrag.evaluation.score import ArmRuns, ScoreOutcome, packet_entries, score_runs, score_summary
from skillrag.evaluation.statistics import (
    McNemarResult,
    PairedComparison,
    RateInterval,
    mcnemar_exact,
    paired_comparison,
    wilson_interval,
)

__all__ = [
    "BENCHMARKS",
    "JUDGES",
    "METRICS",
    "ArmRuns",
    "ArmSpec",
    "BenchmarkRef",
    "CaseResult",
    "CollectedRun",
    "EvalConfig",
    "JudgeInputs",
    "JudgeResult",
    "JudgeSettings",
    "JudgeVote",
    "McNemarResult",
    "Metric",
    "PacketEntry",
    "PacketMapping",
    "PairedComparison",
    "RateInterval",
    "Reference",
    "Report",
    "ResultsFile",
    "RunCost",
    "ScoreOutcome",
    "ScoredCase",
    "VoteSet",
    "arm_workspace",
    "attribute_calls",
    "collect_runs",
    "compare_files",
    "compute_metrics",
    "decide",
    "get_metric",
    "harness_runner",
    "judge_inputs",
    "load_eval_config",
    "load_mapping",
    "load_results",
    "mcnemar_exact",
    "not_judged",
    "packet_entries",
    "paired_comparison",
    "parse_verdict",
    "prepare_benchmark",
    "ranking_metrics",
    "read_tool_log",
    "read_votes",
    "run_evaluation",
    "run_judge",
    "score_case",
    "score_runs",
    "score_summary",
    "summarize",
    "wilson_interval",
    "write_packets",
    "write_report",
]
