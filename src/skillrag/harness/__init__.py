"""Harnesses: who reasons over the skill's four tools for one case.

``run_case(ws, case, harness="extractive"|"llm", ...)`` runs one case and writes
``runs/<case_id>/output.json`` (validated by the evidence contract), ``record.json`` (a
``RunRecord``: every tool and model call with latency and tokens, queries, fetches, retries,
status) and ``case.json`` (the case as the agent saw it: no ground truth); ``RunFolder`` (from
``skillrag.workspace``) owns that layout. ``run_batch`` runs a case file with N workers and resumes where it stopped.
"""

from skillrag.harness._records import Budgets, RunRecord, RunResult, RunStatus, Step
from skillrag.harness._run import HARNESSES, Harness, make_harness, output_paths, run_case
from skillrag.harness._session import Session
from skillrag.harness.batch import BatchItem, BatchReport, is_done, run_batch, run_each
from skillrag.workspace.runs import RunFolder

__all__ = [
    "HARNESSES",
    "BatchItem",
    "BatchReport",
    "Budgets",
    "Harness",
    "RunFolder",
    "RunRecord",
    "RunResult",
    "RunStatus",
    "Session",
    "Step",
    "is_done",
    "make_harness",
    "output_paths",
    "run_batch",
    "run_case",
    "run_each",
]
