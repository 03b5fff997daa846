"""Measurement: deterministic metrics, LLM judges, paired statistics, arms and the report.

    metrics     Metric registry over (output, run record, ground truth): recall of required documents,
                tools named in guidance / grounded in snippets, order agreement, run cost
    judges      Guidance-Match, Snippets-Sufficient, reference-free correctness; majority of 3 calls
    statistics  Wilson intervals, exact McNemar tests, paired deltas (scipy)
    benchmarks  registry of benchmarks (demo, tau2-banking-dev, jsonl): cases + ground truth + corpus
    config      the evaluation YAML: cases, arms (harness, model, backend, mode, variant), matched effort
    arms        run every arm over the same cases with N workers and resume → results/ARM.jsonl
    report      summary, Markdown + HTML + plots; compare two results files
    testing     ScriptedJudge and fake_run_case (no network, no model)
"""

from skillrag.evaluation.arms import CaseResult, ResultsFile, arm_workspace, harness_runner, run_evaluation
from skillrag.evaluation.benchmarks import BENCHMARKS, prepare_benchmark
from skillrag.evaluation.config import (
    ArmSpec,
    BenchmarkRef,
    EffortBudget,
    EvalConfig,
    JudgeSettings,
    load_eval_config,
)
from skillrag.evaluation.judges import (
    JUDGES,
    JudgeInputs,
    JudgeResult,
    JudgeVote,
    judge_inputs,
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
)
from skillrag.evaluation.report import Report, compare_files, load_results, summarize, write_report
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
    "ArmSpec",
    "BenchmarkRef",
    "CaseResult",
    "EffortBudget",
    "EvalConfig",
    "JudgeInputs",
    "JudgeResult",
    "JudgeSettings",
    "JudgeVote",
    "McNemarResult",
    "Metric",
    "PairedComparison",
    "RateInterval",
    "Reference",
    "Report",
    "ResultsFile",
    "RunCost",
    "ScoredCase",
    "arm_workspace",
    "compare_files",
    "compute_metrics",
    "get_metric",
    "harness_runner",
    "judge_inputs",
    "load_eval_config",
    "load_results",
    "mcnemar_exact",
    "paired_comparison",
    "parse_verdict",
    "prepare_benchmark",
    "run_evaluation",
    "run_judge",
    "summarize",
    "wilson_interval",
    "write_report",
]
