from skillrag import review


def test_public_api_is_pinned():
    assert sorted(review.__all__) == sorted([
        "ACTIONS", "SNIPPET_STATUSES", "STATES", "AddedSnippet", "ArticleEvidence", "ExportReport", "GuidanceLine", "GuidanceVersion",
        "ReviewAction", "ReviewState", "ReviewStore", "RunSummary", "RunView", "Segment", "SnippetCheck", "Span",
        "VersionView", "VersionWarning", "add_evidence", "check_reviewer", "declared_tools", "expected_tools",
        "export_approved", "guidance_summary", "link_snippets", "list_runs", "load_run", "required_documents",
        "run_folder", "segments", "split_guidance", "version_output",
    ])
    for name in review.__all__:
        assert getattr(review, name) is not None
