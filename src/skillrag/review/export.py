"""Approved outputs become reference cases: ``export_approved`` writes the case file ``eval`` reads.

For every run whose output is **approved** (its latest review action is an approval), one
``CaseRecord`` line: the case as the agent saw it (``case.json`` of the run, else the workspace case
file) plus a ``ground_truth`` object:

``reference_guidance``
    the guidance version the reviewer approved (the agent's own, or an edited version).
``required_documents``
    the articles the output cites, in order of first citation.
``expected_tools``
    the tool names found in the cited snippets: identifiers of words joined by ``_`` that the
    corpus *declares* as tools (``declared_tools``), ordered by first mention in the approved
    guidance, then by first appearance in the snippets.
``expected_actions``
    empty: a review approves guidance, not tool calls with arguments.

A run is skipped, with its reason, when its case is not available or its output fails the
evidence contract now (e.g. a cited article changed so that a snippet is no longer verbatim): the
approval was of evidence that no longer holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from skillrag.corpus import ArticleStore
from skillrag.errors import EmptyInputError
from skillrag.review.runs import list_runs, load_run
from skillrag.review.store import ReviewStore
from skillrag.skill.cases import CaseRecord, write_cases
from skillrag.workspace import Workspace

__all__ = ["ExportReport", "declared_tools", "export_approved", "tools_in_snippets"]

_IDENT = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_IDENT_RE = re.compile(rf"(?<![A-Za-z0-9_])({_IDENT})(?![A-Za-z0-9_])")
#: How an article declares a tool: a Markdown heading that is only the name (optionally after
#: ``Tool:``, optionally in backticks), ``Tool: name`` anywhere, or the name written as a call ``name(``.
_DECLARATIONS = (
    re.compile(rf"^[ \t]*#{{1,6}}[ \t]*(?:Tool:[ \t]*)?`?({_IDENT})`?[ \t]*$", re.MULTILINE),
    re.compile(rf"\bTool:[ \t]*`?({_IDENT})`?"),
    re.compile(rf"(?<![A-Za-z0-9_])({_IDENT})\("),
)


def declared_tools(bodies: Iterable[str]) -> set[str]:
    """The tool names the articles declare (module doc): on the demo help center the 19 tools of its
    tool-reference articles, on the tau2-bench banking corpus names such as ``open_bank_account_4821``;
    field names (``order_number``) are not declarations."""
    found: set[str] = set()
    for body in bodies:
        for pattern in _DECLARATIONS:
            found.update(m.group(1) for m in pattern.finditer(body))
    return found


def tools_in_snippets(snippet_texts: Iterable[str], tools: set[str], guidance: str = "") -> list[str]:
    """The declared ``tools`` named in the snippets: first those the ``guidance`` mentions, in the
    order it first mentions them, then the rest in snippet order."""
    in_snippets: list[str] = []
    for text in snippet_texts:
        for m in _IDENT_RE.finditer(text):
            if m.group(1) in tools and m.group(1) not in in_snippets:
                in_snippets.append(m.group(1))
    pos = {}
    for m in _IDENT_RE.finditer(guidance):
        pos.setdefault(m.group(1), m.start())
    named = sorted((t for t in in_snippets if t in pos), key=pos.__getitem__)
    return named + [t for t in in_snippets if t not in pos]


@dataclass
class ExportReport:
    """What ``export_approved`` wrote: the ``written`` case ids, in file order, and ``skipped``
    approved runs with the reason (``case_id -> reason``)."""

    path: Path
    written: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def export_approved(ws: Workspace, out: str | Path, *, store: ReviewStore | None = None) -> ExportReport:
    """Write the approved runs of ``ws`` as reference cases (JSONL, ``skill.cases`` format) to ``out``,
    atomically, sorted by case id. Raises ``EmptyInputError`` when no approved run can be exported
    (nothing is written then)."""
    store = store or ReviewStore(ws)
    report = ExportReport(Path(out))
    records: list[CaseRecord] = []
    tools: set[str] | None = None
    for summary in sorted(list_runs(ws, store), key=lambda r: r.case_id):
        if summary.review != "approved":
            continue
        view = load_run(ws, summary.case_id, store)
        version = view.state.approved_version
        chosen = view.version(version) if version is not None else None
        if view.case is None:
            report.skipped[summary.case_id] = "the case is not available (no case.json, no case file holds it)"
            continue
        if not view.accepted or view.output is None:
            report.skipped[summary.case_id] = "the output fails the evidence contract now: " + (
                view.reasons[0] if view.reasons else "no output")
            continue
        if chosen is None:
            report.skipped[summary.case_id] = f"approved guidance version {version} is not stored"
            continue
        if tools is None:
            tools = declared_tools(a.body for a in ArticleStore(ws).list())
        texts = [c.text for c in view.snippets]
        cited = list(dict.fromkeys(c.source_article for c in view.snippets if c.source_article))
        case = view.case
        records.append(CaseRecord.model_validate({
            **case.model_dump(mode="json", exclude={"n_messages", "n_notes"}),
            "ground_truth": {
                "reference_guidance": chosen.version.guidance,
                "required_documents": cited,
                "expected_tools": tools_in_snippets(texts, tools, chosen.version.guidance),
                "expected_actions": [],
            },
        }))
        report.written.append(case.case_id)
    if not records:
        why = "; ".join(f"{k}: {v}" for k, v in report.skipped.items())
        raise EmptyInputError("no approved run to export" + (f" ({why})" if why else
                                                             " (approve runs on the review page first)"))
    write_cases(report.path, records)
    return report
