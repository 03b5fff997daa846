"""The HTTP service: FastAPI app, skill selection, per-skill threads, allowlisted web fallback.

``workspace_app(ws)`` builds the app of ``skillrag serve``; ``create_app(...)`` builds one from explicit
parts (tests pass the doubles in ``skillrag.service.testing``). The MCP server lives in
``skillrag.service.mcp_server`` (owned by the skill package).
"""

from skillrag.service.allowlist import HostAllowlist, connect_host, normalize_host
from skillrag.service.app import create_app, workspace_app
from skillrag.service.chat import ChatEngine, ChatRequest, Citation, Event, condense_terms
from skillrag.service.knowledge import Knowledge, ScopedKnowledge, WorkspaceKnowledge, verify_snippet
from skillrag.service.skills import (
    RegistryCatalog,
    SkillCatalog,
    SkillView,
    SourcePolicy,
    parse_slug,
    select_skill,
)
from skillrag.service.threads import ThreadStore, Turn, check_thread_id, thread_key
from skillrag.service.web import (
    Dropped,
    SearxngProvider,
    WebDocument,
    WebFetcher,
    WebLookup,
    WebResult,
    WebSearchProvider,
    plain_query,
    web_lookup,
)

__all__ = [
    "ChatEngine",
    "ChatRequest",
    "Citation",
    "Dropped",
    "Event",
    "HostAllowlist",
    "Knowledge",
    "RegistryCatalog",
    "ScopedKnowledge",
    "SearxngProvider",
    "SkillCatalog",
    "SkillView",
    "SourcePolicy",
    "ThreadStore",
    "Turn",
    "WebDocument",
    "WebFetcher",
    "WebLookup",
    "WebResult",
    "WebSearchProvider",
    "WorkspaceKnowledge",
    "check_thread_id",
    "condense_terms",
    "connect_host",
    "create_app",
    "normalize_host",
    "parse_slug",
    "plain_query",
    "select_skill",
    "thread_key",
    "verify_snippet",
    "web_lookup",
    "workspace_app",
]
