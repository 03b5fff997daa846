"""The evaluation config (YAML): which cases, which arms, which metrics and judges.

Example::

    name: tau2-dev
    cases: cases/tau2_dev.jsonl        # a CaseFile (JSONL with ground truth); relative to this file
    # or: benchmark: {name: tau2-banking-dev, source: ../shared/data/tau2-banking}
    reference_arm: hybrid-wiki
    workers: 2
    matched_effort: {max_queries: 5, max_fetches: 6}   # same budget for every arm (optional)
    judge: {model: "openai:gpt-4.1", calls: 3}          # optional; without it judges are "not measured"
    arms:
      - {name: hybrid-wiki, backend: wiki, mode: hybrid}
      - {name: bm25-wiki, backend: wiki, mode: bm25}
      - {name: no-merge, backend: wiki, mode: hybrid, variant: no-merge}
      - {name: hybrid-direct, backend: direct, mode: hybrid}

Unknown keys are errors (``extra="forbid"``); ``load_eval_config`` raises ``ConfigError`` naming the
file and the first bad field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillrag.errors import ConfigError
from skillrag.evaluation.judges import JUDGES
from skillrag.evaluation.metrics import METRICS
from skillrag.workspace.config import BudgetOverrides, load_yaml_model

__all__ = ["ArmSpec", "BenchmarkRef", "EvalConfig", "JudgeSettings", "load_eval_config"]

_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArmSpec(_Strict):
    """One arm: one way of running every case. Exactly the factors named here vary between arms."""

    name: str = Field(pattern=_NAME, description="Arm name; names the results file `results/NAME.jsonl`.")
    harness: Literal["extractive", "llm"] = Field("extractive", description="Who reasons.")
    model: str | None = Field(None, description="Model id for the llm harness (`provider:model`).")
    skill: str = Field("cs-guidance", description="Skill name.")
    backend: Literal["wiki", "direct"] = Field("wiki", description="Search pages (`wiki`) or articles.")
    mode: Literal["hybrid", "bm25", "dense"] = Field("hybrid", description="Retrievers fused.")
    variant: Literal["full", "no-merge", "no-intent", "pooled-links"] = Field(
        "full", description="Navigation-layer variant (wiki backend only)."
    )
    budget: BudgetOverrides = Field(default_factory=BudgetOverrides,
                                    description="Arm budgets (unless matched_effort).")

    @model_validator(mode="after")
    def _check(self) -> ArmSpec:
        if self.harness == "llm" and not self.model:
            raise ValueError(f"arm {self.name}: the llm harness needs a model")
        if self.backend == "direct" and self.variant != "full":
            raise ValueError(f"arm {self.name}: a layer variant needs backend: wiki")
        return self


class JudgeSettings(_Strict):
    """LLM judges. Without ``model`` (here or the workspace's ``models.judge``) they are not run."""

    model: str | None = Field(None, description="Judge model id (`provider:model`); none = workspace default.")
    calls: int = Field(3, ge=1, le=15, description="Independent calls per decision (odd: majority vote).")
    judges: list[str] = Field(default_factory=lambda: list(JUDGES), description="Judges to run.")
    temperature: float | None = Field(0.0, ge=0, le=2, description="Judge sampling temperature.")

    @model_validator(mode="after")
    def _check(self) -> JudgeSettings:
        unknown = [j for j in self.judges if j not in JUDGES]
        if unknown:
            raise ValueError(f"unknown judge(s) {unknown} (choose from {list(JUDGES)})")
        if self.calls % 2 == 0:
            raise ValueError("judge calls must be odd, so a majority always exists")
        return self


class BenchmarkRef(_Strict):
    """A registered benchmark (``skillrag.evaluation.benchmarks.BENCHMARKS``) instead of a case file."""

    name: str = Field(description="Benchmark name: demo, tau2-banking-dev, jsonl.")
    source: Path | None = Field(None, description="Its data folder or file, relative to the config file.")


class EvalConfig(_Strict):
    """The whole evaluation config."""

    name: str = Field("eval", pattern=_NAME, description="Evaluation name, shown in the report.")
    cases: Path | None = Field(None, description="Case file (JSONL with ground truth), relative to the config file.")
    benchmark: BenchmarkRef | None = Field(None, description="A registered benchmark instead of `cases`.")
    case_ids: list[str] | None = Field(None, description="Only these cases (default: all in the file).")
    limit: int | None = Field(None, ge=1, description="Only the first N cases (after case_ids).")
    arms: list[ArmSpec] = Field(min_length=1, description="The arms, in report order.")
    reference_arm: str | None = Field(None, description="Arm the others are tested against (default: first).")
    workers: int = Field(1, ge=1, le=64, description="Cases run at once per arm.")
    matched_effort: BudgetOverrides | None = Field(
        None, description="When set, every arm gets these budgets (overrides arm budgets)."
    )
    metrics: list[str] | None = Field(None, description="Metric names (default: every registered metric).")
    judge: JudgeSettings | None = Field(None, description="LLM judges (default: none, or models.judge).")

    @model_validator(mode="after")
    def _check(self) -> EvalConfig:
        if (self.cases is None) == (self.benchmark is None):
            raise ValueError("give exactly one of `cases` (a case file) or `benchmark`")
        if self.benchmark is not None:
            from skillrag.evaluation.benchmarks import BENCHMARKS

            if self.benchmark.name not in BENCHMARKS:
                raise ValueError(f"unknown benchmark {self.benchmark.name!r} (choose from {list(BENCHMARKS)})")
        names = [a.name for a in self.arms]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate arm names: {dupes}")
        if self.reference_arm is not None and self.reference_arm not in names:
            raise ValueError(f"reference_arm {self.reference_arm!r} is not an arm ({names})")
        unknown = [m for m in self.metrics or [] if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {unknown} (choose from {list(METRICS)})")
        return self

    @property
    def reference(self) -> str:
        return self.reference_arm or self.arms[0].name

    def arm(self, name: str) -> ArmSpec:
        for a in self.arms:
            if a.name == name:
                return a
        raise ConfigError(f"no arm named {name!r}")

    def budget_for(self, arm: ArmSpec) -> BudgetOverrides:
        """The budget an arm runs under: ``matched_effort`` when set, else the arm's own."""
        return self.matched_effort if self.matched_effort is not None else arm.budget


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read an evaluation config; relative ``cases`` resolve against the config's folder.

    Raises ``ConfigError`` (missing file, bad YAML, bad field).
    """
    p = Path(path)
    cfg = load_yaml_model(p, EvalConfig)
    if cfg.cases is not None and not cfg.cases.is_absolute():
        cfg = cfg.model_copy(update={"cases": (p.parent / cfg.cases).resolve()})
    if cfg.benchmark is not None and cfg.benchmark.source is not None and not cfg.benchmark.source.is_absolute():
        ref = cfg.benchmark.model_copy(update={"source": (p.parent / cfg.benchmark.source).resolve()})
        cfg = cfg.model_copy(update={"benchmark": ref})
    return cfg
