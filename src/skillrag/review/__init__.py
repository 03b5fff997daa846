"""Human review of saved runs: the reviewer checks each case, approves, rejects or edits the guidance.

``ReviewStore`` keeps every action (reviewer, time, comment) and every edited guidance version in
the workspace store, append-only; ``list_runs``/``load_run`` read ``runs/`` into what the review
page shows (the case as the agent saw it, guidance steps linked to snippets, each snippet placed in
its article at its stored offsets, the evidence contract's verdict); ``export_approved`` turns
approved outputs into reference cases for ``skillrag eval``. The pages themselves are served by
``skillrag.service.review``.
"""

from skillrag.review.export import ExportReport, declared_tools, export_approved, tools_in_snippets
from skillrag.review.runs import (
    SNIPPET_STATUSES,
    ArticleEvidence,
    RunSummary,
    RunView,
    SnippetCheck,
    VersionView,
    list_runs,
    load_run,
    run_folder,
)
from skillrag.review.store import (
    ACTIONS,
    STATES,
    GuidanceVersion,
    ReviewAction,
    ReviewState,
    ReviewStore,
    check_reviewer,
)
from skillrag.review.view import GuidanceLine, Segment, Span, link_snippets, segments, split_guidance

__all__ = [
    "ACTIONS",
    "SNIPPET_STATUSES",
    "STATES",
    "ArticleEvidence",
    "ExportReport",
    "GuidanceLine",
    "GuidanceVersion",
    "ReviewAction",
    "ReviewState",
    "ReviewStore",
    "RunSummary",
    "RunView",
    "Segment",
    "SnippetCheck",
    "Span",
    "VersionView",
    "check_reviewer",
    "declared_tools",
    "export_approved",
    "link_snippets",
    "list_runs",
    "load_run",
    "run_folder",
    "segments",
    "split_guidance",
    "tools_in_snippets",
]
