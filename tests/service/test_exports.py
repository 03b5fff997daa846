"""The public surface of skillrag.service is what ``__all__`` says, and every name resolves."""

from skillrag import service


def test_all_is_pinned_and_importable():
    assert service.__all__ == sorted(service.__all__)
    assert {"create_app", "workspace_app", "HostAllowlist", "WebFetcher", "WebSearchProvider", "SearxngProvider",
            "ThreadStore", "ChatEngine", "ChatRequest", "SkillView", "SourcePolicy", "web_lookup"} <= set(service.__all__)
    for name in service.__all__:
        assert getattr(service, name) is not None
