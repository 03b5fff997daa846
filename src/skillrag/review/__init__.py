"""Human review of saved runs: the reviewer checks each case, approves, rejects or edits the guidance.

``ReviewStore`` keeps every action (reviewer, time, comment) and every version (edited guidance, or
a snippet a reviewer added) in the workspace store, append-only; ``list_runs``/``load_run`` read
``runs/`` into what the review pages show (the case as the agent saw it, each version's steps linked
to its snippets, each snippet marked in its rendered article at its stored offsets, the evidence
contract's verdict and each version's warnings); ``add_evidence`` adds a passage as a snippet of a
new version; ``export_approved`` turns approved outputs into reference cases for ``skillrag eval``. The pages themselves are served by
``skillrag.service.review``.
"""

from skillrag.review.export import (
    ExportReport,
    declared_tools,
    expected_tools,
    export_approved,
    required_documents,
)
from skillrag.review.runs import (
    SNIPPET_STATUSES,
    ArticleEvidence,
    RunSummary,
    RunView,
    SnippetCheck,
    VersionView,
    VersionWarning,
    add_evidence,
    guidance_summary,
    list_runs,
    load_run,
    run_folder,
    version_output,
)
from skillrag.review.store import (
    ACTIONS,
    STATES,
    AddedSnippet,
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
    "AddedSnippet",
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
    "VersionWarning",
    "add_evidence",
    "check_reviewer",
    "declared_tools",
    "expected_tools",
    "export_approved",
    "guidance_summary",
    "link_snippets",
    "list_runs",
    "load_run",
    "required_documents",
    "run_folder",
    "segments",
    "split_guidance",
    "version_output",
]
