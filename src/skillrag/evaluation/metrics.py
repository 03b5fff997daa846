"""Deterministic metrics, declared as data and kept apart from the code that runs them.

A ``Metric`` is a name, a description, a kind and a pure function of one ``ScoredCase`` (the run's
output, its run record and the ground truth). ``METRICS`` is the registry the config and the CLI read
their choices from (``skillrag eval metrics``). No metric needs an LLM: they use the τ²-bench style
ground truth (``required_documents``, ``expected_tools``).

Kinds:

- ``rate``: a pass/fail per case (``bool``) → pass rates with Wilson intervals and McNemar tests;
- ``fraction``: a value in ``[0, 1]`` per case (recalls) → means;
- ``score``: a value in ``[-1, 1]`` (order agreement, Kendall tau-b) → means;
- ``cost``: counts and seconds from the run record → medians.

A function returns ``None`` when the metric is undefined for the case (e.g. recall of required
documents when the ground truth lists none); such cases leave the denominator. An empty or missing
output scores 0 / False, never ``None``: a failed run is a failed case.
"""

from __future__ import annotations

import math
import re
import statistics
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import kendalltau

from skillrag.errors import UserError

__all__ = [
    "METRICS",
    "TOOL_GAP_KINDS",
    "Metric",
    "Reference",
    "RunCost",
    "ScoredCase",
    "ToolLocator",
    "compute_metrics",
    "get_metric",
    "ranking_metrics",
    "tool_gaps",
    "tool_mentioned",
]

MetricKind = Literal["rate", "fraction", "score", "cost"]
MetricSide = Literal["outcome", "retrieval", "guidance", "evidence", "cost"]


class Reference(BaseModel):
    """Ground truth for one case, as the evaluation sees it (mirrors ``skillrag.skill.GroundTruth``).

    Build one from a ``GroundTruth`` with ``Reference.from_ground_truth(gt)``.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    case_id: str
    reference_guidance: str = ""
    required_documents: tuple[str, ...] = ()
    expected_tools: tuple[str, ...] = Field((), description="Tool names in expected order (may repeat).")
    expected_actions: tuple[Any, ...] = ()

    @classmethod
    def from_ground_truth(cls, gt: Any) -> Reference:
        """Accept a ``GroundTruth`` (any object with its attributes) or a mapping."""
        if isinstance(gt, Reference):
            return gt
        if isinstance(gt, Mapping):
            return cls.model_validate(dict(gt))
        return cls.model_validate(gt, from_attributes=True)


class RunCost(BaseModel):
    """What one run spent. Counts are calls; times are seconds (None when the record does not say)."""

    model_config = ConfigDict(frozen=True)

    queries: int | None = None
    fetches: int | None = None
    tokens: int | None = None
    seconds: float | None = None
    search_seconds: float | None = None
    generation_seconds: float | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> RunCost:
        """Read a run record (``skillrag.harness.RunRecord.model_dump()``).

        Queries and fetches: the record's ``queries`` / ``fetches`` (lists or counts), else the number
        of ``retrieve`` / ``get_article`` steps. Tokens: ``input_tokens + output_tokens`` (or ``tokens``).
        Seconds: ``wall_ms`` / 1000 (or ``seconds``, ``ms``, else the sum of step times). Search time is
        the time in ``retrieve`` tool steps; generation time is the rest of the run (model and other tools),
        the split of the paper's latency table.
        """
        if not record:
            return cls()
        steps = [s for s in record.get("steps") or [] if isinstance(s, Mapping)] if isinstance(
            record.get("steps"), list) else []

        def num(v: Any) -> float | None:
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        def step_name(s: Mapping[str, Any]) -> str:
            return str(s.get("tool") or s.get("name") or "")

        def count(key: str, tool: str) -> int | None:
            val = record.get(key)
            if isinstance(val, (list, tuple)):
                return len(val)
            if num(val) is not None:
                return int(val)
            return sum(1 for s in steps if step_name(s) == tool) if steps else None

        tokens: float | None
        if num(record.get("input_tokens")) is not None or num(record.get("output_tokens")) is not None:
            tokens = (num(record.get("input_tokens")) or 0.0) + (num(record.get("output_tokens")) or 0.0)
        else:
            tokens = num(record.get("tokens"))
        seconds: float | None
        if num(record.get("wall_ms")) is not None:
            seconds = num(record.get("wall_ms")) / 1000.0  # type: ignore[operator]
        elif num(record.get("seconds")) is not None:
            seconds = num(record.get("seconds"))
        elif num(record.get("ms")) is not None:
            seconds = num(record.get("ms")) / 1000.0  # type: ignore[operator]
        else:
            step_ms = [num(s.get("ms")) for s in steps if num(s.get("ms")) is not None]
            seconds = sum(step_ms) / 1000.0 if step_ms else None  # type: ignore[arg-type]
        search_seconds: float | None
        if num(record.get("search_ms")) is not None:
            search_seconds = num(record.get("search_ms")) / 1000.0  # type: ignore[operator]
        elif steps:
            search_seconds = sum(num(s.get("ms")) or 0.0 for s in steps if step_name(s) == "retrieve") / 1000.0
        else:
            search_seconds = None
        generation = None
        if seconds is not None and search_seconds is not None:
            generation = max(0.0, seconds - search_seconds)
        return cls(
            queries=count("queries", "retrieve"),
            fetches=count("fetches", "get_article"),
            tokens=None if tokens is None else int(tokens),
            seconds=seconds,
            search_seconds=search_seconds,
            generation_seconds=generation,
        )


@dataclass(frozen=True)
class ScoredCase:
    """Everything a metric may look at for one case of one arm.

    ``output`` is the validated output dict (``case_id, guidance, snippets[{source_article, text, ...}],
    articles_consulted``) or None when the run produced none; ``record`` is the run record as a dict.
    """

    case_id: str
    status: str
    output: Mapping[str, Any] | None
    reference: Reference
    record: Mapping[str, Any] | None = None

    @property
    def guidance(self) -> str:
        g = (self.output or {}).get("guidance")
        return g if isinstance(g, str) else ""

    @property
    def snippets(self) -> list[Mapping[str, Any]]:
        snips = (self.output or {}).get("snippets")
        return [s for s in snips if isinstance(s, Mapping)] if isinstance(snips, list) else []

    @property
    def articles_consulted(self) -> list[str]:
        arts = (self.output or {}).get("articles_consulted")
        return [a for a in arts if isinstance(a, str)] if isinstance(arts, list) else []

    @property
    def cited_articles(self) -> list[str]:
        return [str(s.get("source_article")) for s in self.snippets if s.get("source_article")]

    @property
    def cost(self) -> RunCost:
        return RunCost.from_record(self.record)


@dataclass(frozen=True)
class Metric:
    """A metric declared as data: ``fn(case) -> bool | float | None`` (None = undefined for the case)."""

    name: str
    kind: MetricKind
    side: MetricSide
    description: str
    fn: Callable[[ScoredCase], bool | float | None]

    def __call__(self, case: ScoredCase) -> bool | float | None:
        return self.fn(case)


# --- helpers --------------------------------------------------------------------------------------

_NON_WORD = re.compile(r"[^0-9a-z]+")


def _words(text: str) -> str:
    """Lower-case text with every run of non-alphanumerics (``_`` included) turned into one space."""
    return " " + _NON_WORD.sub(" ", text.lower()).strip() + " "


def tool_mentioned(tool: str, text: str) -> bool:
    """True when ``text`` names ``tool``: the identifier or its words (``apply_for_credit_card`` matches
    "apply_for_credit_card" and "Apply for credit card"), case-insensitive, on word boundaries."""
    needle = _words(tool)
    return bool(needle.strip()) and needle in _words(text)


def _first_position(tool: str, text: str) -> int | None:
    needle = _words(tool)
    hay = _words(text)
    pos = hay.find(needle)
    return None if pos < 0 else pos


def _unique(seq: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in seq:
        if item and item not in seen:
            seen[item] = None
    return list(seen)


def _recall(required: Sequence[str], found: Iterable[str]) -> float | None:
    req = set(required)
    if not req:
        return None
    return len(req & set(found)) / len(req)


def _all(value: float | None) -> bool | None:
    return None if value is None else value >= 1.0 - 1e-12


def _docs_consulted(c: ScoredCase) -> float | None:
    # the articles a run read: what the output lists, plus what it cited (a citation implies a read)
    return _recall(c.reference.required_documents, [*c.articles_consulted, *c.cited_articles])


def _docs_cited(c: ScoredCase) -> float | None:
    return _recall(c.reference.required_documents, c.cited_articles)


def _tools_in_guidance(c: ScoredCase) -> float | None:
    tools = _unique(c.reference.expected_tools)
    if not tools:
        return None
    return sum(1 for t in tools if tool_mentioned(t, c.guidance)) / len(tools)


def _tools_grounded(c: ScoredCase) -> float | None:
    tools = _unique(c.reference.expected_tools)
    if not tools:
        return None
    texts = [str(s.get("text") or "") for s in c.snippets]
    return sum(1 for t in tools if any(tool_mentioned(t, x) for x in texts)) / len(tools)


def _tool_order(c: ScoredCase) -> float | None:
    """Kendall tau-b between expected order and order of first mention in the guidance, over the
    expected tools the guidance names; undefined with fewer than two such tools."""
    tools = _unique(c.reference.expected_tools)
    found = [(i, p) for i, t in enumerate(tools) if (p := _first_position(t, c.guidance)) is not None]
    if len(found) < 2:
        return None
    expected_rank = [i for i, _ in found]
    mention_pos = [p for _, p in found]
    tau = kendalltau(expected_rank, mention_pos).statistic
    return None if math.isnan(tau) else float(tau)  # NaN when all positions tie


def _cost_field(name: str) -> Callable[[ScoredCase], float | None]:
    def fn(c: ScoredCase) -> float | None:
        value = getattr(c.cost, name)
        return None if value is None else float(value)

    return fn


def _recall_metrics(stem: str, side: MetricSide, recall: Callable[[ScoredCase], float | None],
                    share: str, every: str) -> list[Metric]:
    """The two metrics of one recall: ``<stem>_recall`` (the fraction ``recall``, described by ``share``)
    and ``<stem>_all`` (whether it is complete, described by ``every``)."""
    return [Metric(f"{stem}_recall", "fraction", side, share, recall),
            Metric(f"{stem}_all", "rate", side, every, lambda c: _all(recall(c)))]


_METRIC_LIST: list[Metric] = [
    Metric("accepted", "rate", "outcome", "The run saved an output the evidence contract accepted.",
           lambda c: c.status == "accepted" and c.output is not None),
    *_recall_metrics("docs_consulted", "retrieval", _docs_consulted,
                     "Share of required_documents among the articles the run consulted (or cited).",
                     "Every required document was consulted."),
    Metric("docs_consulted_any", "rate", "retrieval",
           "At least one required document was consulted (success@run).",
           lambda c: None if (r := _docs_consulted(c)) is None else r > 0),
    *_recall_metrics("docs_cited", "evidence", _docs_cited,
                     "Share of required_documents cited by at least one snippet.",
                     "Every required document is cited by a snippet."),
    *_recall_metrics("tools_in_guidance", "guidance", _tools_in_guidance,
                     "Share of expected tool names that the guidance names.",
                     "The guidance names every expected tool."),
    *_recall_metrics("tools_grounded", "evidence", _tools_grounded,
                     "Share of expected tools grounded: some cited snippet names the tool.",
                     "Every expected tool is grounded in a cited snippet."),
    Metric("tool_order_tau", "score", "guidance",
           "Kendall tau-b of expected vs mentioned order of the tools the guidance names.", _tool_order),
    Metric("queries", "cost", "cost", "Retrieve calls in the run.", _cost_field("queries")),
    Metric("fetches", "cost", "cost", "get_article calls in the run.", _cost_field("fetches")),
    Metric("tokens", "cost", "cost", "Model tokens used (0 for the extractive harness).", _cost_field("tokens")),
    Metric("seconds", "cost", "cost", "Wall time of the run, seconds.", _cost_field("seconds")),
    Metric("search_seconds", "cost", "cost", "Time in retrieve calls, seconds.", _cost_field("search_seconds")),
    Metric("generation_seconds", "cost", "cost",
           "Time outside retrieve calls (model + other tools), seconds.", _cost_field("generation_seconds")),
]

#: The registry: name → Metric, in report order.
METRICS: dict[str, Metric] = {m.name: m for m in _METRIC_LIST}

#: Pairs (guidance-side rate, evidence-side rate) whose gap is the investment localiser.
GAP_PAIRS: list[tuple[str, str]] = [("tools_in_guidance_all", "tools_grounded_all")]


class ToolLocator:
    """Which articles name a tool (same matching as ``tool_mentioned``), computed once per tool.

    Built from ``{article_id: title + body}``; thread-safe. Feeds ``tool_gaps``.
    """

    def __init__(self, articles: Mapping[str, str]) -> None:
        self._texts = {aid: _words(text) for aid, text in articles.items()}
        self._cache: dict[str, frozenset[str]] = {}
        self._lock = threading.Lock()

    def articles_naming(self, tool: str) -> frozenset[str]:
        with self._lock:
            hit = self._cache.get(tool)
        if hit is None:
            needle = _words(tool)
            hit = frozenset(aid for aid, t in self._texts.items() if needle.strip() and needle in t)
            with self._lock:
                self._cache[tool] = hit
        return hit


#: Where an expected tool of a case stands, in the order ``tool_gaps`` assigns them.
TOOL_GAP_KINDS = ("grounded", "in_consulted_article", "in_other_article", "not_in_corpus")


def tool_gaps(case: ScoredCase, locator: ToolLocator) -> dict[str, int] | None:
    """The investment localiser at the level of expected tools (distinct per case).

    Each expected tool is ``grounded`` (a cited snippet names it), else ``in_consulted_article`` (an
    article the run read names it: the agent did not quote it), else ``in_other_article`` (the corpus
    names it but retrieval did not reach that article), else ``not_in_corpus`` (no article names it:
    the corpus lacks it). None when the case expects no tool.
    """
    tools = _unique(case.reference.expected_tools)
    if not tools:
        return None
    out = dict.fromkeys(TOOL_GAP_KINDS, 0)
    texts = [str(s.get("text") or "") for s in case.snippets]
    read = set(case.articles_consulted) | set(case.cited_articles)
    for tool in tools:
        if any(tool_mentioned(tool, x) for x in texts):
            out["grounded"] += 1
            continue
        naming = locator.articles_naming(tool)
        if naming & read:
            out["in_consulted_article"] += 1
        elif naming:
            out["in_other_article"] += 1
        else:
            out["not_in_corpus"] += 1
    return out


def get_metric(name: str) -> Metric:
    """The registered metric ``name``; ``UserError`` naming the choices otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise UserError(f"unknown metric {name!r} (choose from: {', '.join(METRICS)})") from None


def compute_metrics(case: ScoredCase, names: Sequence[str] | None = None) -> dict[str, bool | float | None]:
    """Every registered metric (or those in ``names``) for one case: ``{name: value}``."""
    metrics = [get_metric(n) for n in names] if names is not None else list(METRICS.values())
    return {m.name: m(case) for m in metrics}


def ranking_metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]],
                    ks: Sequence[int] = (5, 10, 20, 50), mrr_depth: int = 50) -> dict[str, float]:
    """Retrieval metrics macro-averaged over queries: ``r@K`` (recall@k: the share of a query's relevant
    ids among its first k ranked ids) for each k in ``ks``, and ``mrr`` (mean reciprocal rank of the first
    relevant id within the first ``mrr_depth``; 0 when none). ``ranked[i]`` and ``relevant[i]`` belong to
    query i; every ``relevant[i]`` must be non-empty. Raises ``UserError`` on unequal lengths, no queries or
    an empty relevant set (Manning et al., *Introduction to Information Retrieval*, ch. 8)."""
    if len(ranked) != len(relevant) or not ranked:
        raise UserError(f"ranking_metrics: {len(ranked)} rankings for {len(relevant)} relevance sets")
    if any(not rel for rel in relevant):
        raise UserError("ranking_metrics: a query has no relevant ids (recall is undefined)")
    out = {f"r@{k}": statistics.mean(len(set(r[:k]) & rel) / len(rel) for r, rel in zip(ranked, relevant, strict=True))
           for k in ks}
    out["mrr"] = statistics.mean(next((1 / (i + 1) for i, a in enumerate(r[:mrr_depth]) if a in rel), 0.0)
                                 for r, rel in zip(ranked, relevant, strict=True))
    return out
