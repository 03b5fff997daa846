"""Approved outputs become reference cases: ``export_approved`` writes the case file ``eval`` reads.

For every run whose output is **approved** (its latest review action is an approval), one
``CaseRecord`` line: the case as the agent saw it (``case.json`` of the run, else the workspace case
file) plus a ``ground_truth`` object taken from the approved version (its guidance and its snippets:
the agent's and any a reviewer added; ``review.runs``):

``reference_guidance``
    the guidance version the reviewer approved (the agent's own, or an edited version).
``required_documents``
    the articles of the snippets the approved steps rely on: the snippets linked to at least one step
    of the approved guidance by the one step-to-snippet rule (``skill.links``, as the review page links
    them), their articles in the order of the steps (the first step that relies on an article places
    it). A cited article that no approved step relies on (an off-topic passage the agent also quoted)
    is not required: a later run that does not read it has missed nothing the reviewer approved.
``expected_tools``
    the tools the approved guidance names, in the order it first names them: the names the save
    warnings read as code names (``skillrag.text.code_names``, the one rule), kept when the corpus
    *declares* them as tools (``declared_tools``: a Markdown heading naming only it, ``Tool: name``, or
    ``name(`` written as a call), so a field the guidance names (``order_number``) is not a tool. Tools
    that only a snippet names are not expected: the reviewer approved what the guidance tells the
    specialist to do, not every tool a quoted passage mentions.
``expected_actions``
    empty: a review approves guidance, not tool calls with arguments.

A run is skipped, with its reason, when its case is not available or its approved version fails the
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
from skillrag.review.runs import RunView, VersionView, list_runs, load_run
from skillrag.review.store import ReviewStore
from skillrag.skill.cases import CaseRecord, write_cases
from skillrag.text import IDENTIFIER_PATTERN as TOOL_NAME
from skillrag.text import code_names
from skillrag.workspace import Workspace

__all__ = ["ExportReport", "declared_tools", "expected_tools", "export_approved", "required_documents"]

#: How an article declares a tool: a Markdown heading that is only the name (optionally after
#: ``Tool:``, optionally in backticks), ``Tool: name`` anywhere, or the name written as a call ``name(``.
_DECLARATIONS = (
    re.compile(rf"^[ \t]*#{{1,6}}[ \t]*(?:Tool:[ \t]*)?`?({TOOL_NAME})`?[ \t]*$", re.MULTILINE),
    re.compile(rf"\bTool:[ \t]*`?({TOOL_NAME})`?"),
    re.compile(rf"(?<![A-Za-z0-9_])({TOOL_NAME})\("),
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


def expected_tools(guidance: str, tools: set[str]) -> list[str]:
    """The declared ``tools`` that ``guidance`` names, in the order it first names them (module doc)."""
    return [t for t in code_names(guidance) if t in tools]


def required_documents(view: RunView, version: VersionView) -> list[str]:
    """The articles of the snippets that ``version``'s steps rely on, in step order (module doc)."""
    out: list[str] = []
    for line in version.lines:
        for i in line.snippets:
            aid = view.snippets[i].source_article if i < len(view.snippets) else ""
            if aid and aid not in out:
                out.append(aid)
    return out


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
        if view.output is None:
            report.skipped[summary.case_id] = "the output fails the evidence contract now: " + (
                view.reasons[0] if view.reasons else "no output")
            continue
        if chosen is None:
            report.skipped[summary.case_id] = f"approved guidance version {version} is not stored"
            continue
        if not chosen.accepted:
            report.skipped[summary.case_id] = (f"approved version {version} fails the evidence contract now: "
                                               + chosen.reasons[0])
            continue
        if tools is None:
            tools = declared_tools(a.body for a in ArticleStore(ws).list())
        case = view.case
        records.append(CaseRecord.model_validate({
            **case.model_dump(mode="json", exclude={"n_messages", "n_notes"}),
            "ground_truth": {
                "reference_guidance": chosen.version.guidance,
                "required_documents": required_documents(view, chosen),
                "expected_tools": expected_tools(chosen.version.guidance, tools),
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
