"""The skill's four tools (and skill listing) as an MCP server, with the official ``mcp`` SDK.

``build_mcp_server(ws)`` returns an ``mcp.server.MCPServer`` exposing ``load_case``,
``retrieve``, ``get_article``, ``save_output`` and ``list_skills``; ``serve_stdio`` runs it over
stdio (``skillrag mcp -w DIR``). Every tool goes through ``SkillTools``, so the evidence contract,
the per-case budgets (kept in the workspace store, shared with the command line) and the latency log
are the same as for the CLI and the Python API, and results have the JSON shapes of
``skillrag.skill.views``. Calls that name no ``case_id`` go to the case this server loaded last. Tool
errors (bad id, rejected output, missing index, a spent budget) come back as MCP tool errors
(``isError``) whose text is the one-line message; a rejected ``save_output`` lists every reason, one
per line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent

from skillrag._version import __version__
from skillrag.errors import ContractViolation, SkillragError, UserError
from skillrag.skill import CaseFile, SkillRegistry, SkillTools, render_manual
from skillrag.skill.tools import Retriever
from skillrag.skill.views import article_json, case_json, page_json, retrieve_json, save_json, status_json
from skillrag.workspace import Workspace

__all__ = ["TOOL_NAMES", "build_mcp_server", "serve_stdio"]

#: The tools the server exposes, in workflow order.
TOOL_NAMES = ("load_case", "retrieve", "get_article", "save_output", "list_skills")


def _fail(exc: SkillragError) -> Any:
    """A tool error result (``isError``) whose text is the error's own line, exactly as the command
    line prints it after ``error:`` (raising ``ToolError`` would prefix the SDK's "Error executing
    tool ..."), so a refused over-budget call reads the same on every surface."""
    if isinstance(exc, ContractViolation):
        text = "output rejected:\n" + "\n".join(f"- {r}" for r in exc.reasons)
    else:
        text = str(exc)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_mcp_server(
    ws: Workspace,
    *,
    skill: str = "cs-guidance",
    cases: CaseFile | None = None,
    retriever: Retriever | None = None,
    log_path: Path | None = None,
) -> tuple[MCPServer, SkillTools]:
    """An MCP server over ``ws`` for the named skill, and the ``SkillTools`` behind it (whose
    ``.calls`` records every call). ``log_path`` defaults to ``runs/tool_calls.jsonl``.
    Raises ``SkillNotFound``/``ConfigError`` for a missing or broken skill."""
    registry = SkillRegistry(ws)
    sk = registry.get(skill)
    tools = SkillTools(ws, sk, cases, retriever=retriever, surface="mcp",
                       log_path=log_path if log_path is not None else ws.tool_log)
    server = MCPServer(
        name="skillrag",
        version=__version__,
        instructions=f"Skill {sk.name!r}: {sk.description}\n\n{render_manual(sk, tools.limits)}",
    )

    @server.tool(description=(
        "Load one support case by id: contact reason, notes, transcript (no reference answer), its as_of "
        "reference date and the budget left. Starts the case's session (calling it again continues it; "
        "new_session=true starts the next one only after an accepted save, never resetting a budget)."))
    def load_case(case_id: str, new_session: bool = False) -> dict[str, Any]:
        try:
            case = tools.load_case(case_id, new_session=new_session)
            return case_json(case, tools.budget(case.case_id))
        except SkillragError as exc:
            return _fail(exc)

    @server.tool(description=(
        "Search the knowledge base: ranked source articles (id, title, relevance 0-1, the start of the "
        "best-matching passage and its section, category and customer_type, tools: the tool names the article "
        "gives) and, over the wiki backend, ranked navigation pages each with its best-matching articles (shown "
        "of; cut_by says what left others out). Filters: tags, title_prefix, title_contains, id_prefix, "
        "category, customer_type (lists). detail='pages' gives every hit and page whole (ranks included); "
        "detail='tools' is a tool search: the tool names the best-matching articles give, each with its "
        "article. page=PAGE_ID reads one page whole instead. Spends one query "
        "of the case (case_id: default the case loaded last)."))
    def retrieve(query: str = "", k: int | None = None, tags: list[str] | None = None,
                 title_prefix: list[str] | None = None, title_contains: list[str] | None = None,
                 id_prefix: list[str] | None = None, category: list[str] | None = None,
                 customer_type: list[str] | None = None, detail: str | None = None, page: str | None = None,
                 case_id: str | None = None) -> dict[str, Any]:
        try:
            if page is not None:
                if query.strip():
                    raise UserError("give either a query or page, not both")
                return page_json(tools.read_page(page, case_id=case_id))
            filters = {"source_tags": tags, "title_prefixes": title_prefix, "title_contains": title_contains,
                       "id_prefixes": id_prefix, "categories": category, "customer_types": customer_type}
            return retrieve_json(tools.retrieve(query, k, filters=filters, case_id=case_id, detail=detail))
        except SkillragError as exc:
            return _fail(exc)

    @server.tool(description=(
        "Read a source article by id: id, title, parent, numbered sections with character offsets, and the "
        "raw body (quote from this); or one section (its number, path 'A > B' or heading); or a summary. "
        "Spends one fetch of the case."))
    def get_article(article_id: str, section: str | None = None, summary: bool = False,
                    case_id: str | None = None) -> dict[str, Any]:
        try:
            return article_json(tools.get_article(article_id, section=section, summary=summary, case_id=case_id))
        except SkillragError as exc:
            return _fail(exc)

    @server.tool(description=(
        "Validate an output (case_id, guidance, snippets[{source_article, source_title, text, why}], "
        "n_snippets, articles_consulted, optional derived[{value, from, how}]) against the evidence contract "
        "and save it; a rejection lists every reason and writes nothing. An accepted save returns each "
        "snippet's offsets and warnings (evidence gaps; never a rejection); a save after an accepted one "
        "replaces it (while saves are left) and says so. check=true validates and reports without saving or "
        "spending a save. status=true (no output) returns the case's last save result again, free "
        "(case_id: default the case loaded last)."
    ))
    def save_output(output: dict[str, Any] | None = None, check: bool = False, status: bool = False,
                    case_id: str | None = None) -> dict[str, Any]:
        try:
            if status:
                if output is not None or check:
                    raise UserError("status=true shows the last save of a case: give it without output or check")
                return status_json(tools.save_status(case_id))
            if output is None:
                raise UserError("give the output to save (or status=true to see the last save)")
            return save_json(tools.save_output(output, check=check))
        except SkillragError as exc:
            return _fail(exc)

    @server.tool(description="List the skills this workspace offers (name, description).")
    def list_skills() -> list[dict[str, Any]]:
        return [{"name": s.name, "description": s.description, "builtin": s.builtin} for s in registry.list()]

    return server, tools


def serve_stdio(ws: Workspace, *, skill: str = "cs-guidance", cases: CaseFile | None = None) -> None:
    """Serve the skill's tools over stdio until the client disconnects."""
    server, _ = build_mcp_server(ws, skill=skill, cases=cases)
    server.run("stdio")
