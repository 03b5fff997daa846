"""Run records: what one harness run did, step by step, with latency and token usage.

A ``RunRecord`` is written as ``record.json`` beside each output (``runs/<case_id>/record.json``).
Times are wall-clock milliseconds (``time.perf_counter``); tokens are as the provider reported
them (pydantic-ai ``RequestUsage``), zero for the extractive harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from skillrag.workspace.config import Budgets

__all__ = ["Budgets", "RunRecord", "RunResult", "RunStatus", "Step"]

RunStatus = Literal["accepted", "failed", "budget_exceeded"]


class Step(BaseModel):
    """One tool call or model call. ``ms`` is wall time in milliseconds; tokens only for model calls."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tool", "model"]
    name: str = Field(description="Tool name, or the model id for a model call.")
    ms: float = Field(description="Wall time, in milliseconds.")
    ok: bool = True
    error: str | None = None
    args: dict[str, Any] = Field(default_factory=dict, description="Tool arguments (save_output: a summary).")
    detail: str | None = Field(None, description="Hits returned, tool calls requested, ...")
    input_tokens: int = 0
    output_tokens: int = 0


class RunRecord(BaseModel):
    """Everything one run did; saved as ``record.json`` beside the output."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    harness: str
    skill: str
    model: str | None = None
    guided: bool = Field(False, description="LLM harness: the next tool was forced on every turn.")
    search_backend: str | None = Field(
        None, description="The backend `retrieve` searched (`wiki` or `direct`; None for a test double)."
    )
    search_mode: str | None = Field(None, description="Its retrievers (`hybrid`, `bm25` or `dense`).")
    status: RunStatus = "failed"
    error: str | None = Field(None, description="Why the run did not end accepted (one line).")
    reasons: list[str] = Field(
        default_factory=list, description="Last rejection reasons of the evidence contract."
    )
    budgets: Budgets
    started_at: str = ""
    wall_ms: float = 0.0
    model_ms: float = Field(0.0, description="Time spent waiting on the model, in milliseconds.")
    tool_ms: float = Field(0.0, description="Time spent in the four tools, in milliseconds.")
    queries: list[str] = Field(default_factory=list)
    fetches: list[str] = Field(
        default_factory=list, description="Article ids read with get_article, in order."
    )
    saves: int = Field(0, description="save_output attempts.")
    retries: int = Field(0, description="Rejected saves (each one sent back to the model).")
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    output_path: str | None = None
    skillrag_version: str = ""
    trace_id: str | None = Field(
        None, description="The run's OpenTelemetry trace id (32 hex digits) when tracing was on (`OTEL_*`).")
    steps: list[Step] = Field(default_factory=list)

    @property
    def non_model_ms(self) -> float:
        """Wall time not spent waiting on the model, in milliseconds."""
        return max(0.0, self.wall_ms - self.model_ms)

    @computed_field(description="input_tokens + output_tokens (written to record.json).")  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class RunResult:
    """The result of ``run_case``: ``status``, the validated ``output`` (``None`` unless accepted),
    the ``record`` and where they were written (``output_path``, ``record_path``)."""

    status: RunStatus
    output: dict[str, Any] | None
    record: RunRecord
    output_path: Path | None = None
    record_path: Path | None = None

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"
