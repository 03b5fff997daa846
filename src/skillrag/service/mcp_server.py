"""The skill's four tools (and skill listing) as an MCP server, with the official ``mcp`` SDK.

``build_mcp_server(ws)`` returns an ``mcp.server.MCPServer`` exposing ``load_case``,
``retrieve``, ``get_article``, ``save_output`` and ``list_skills``; ``serve_stdio`` runs it over
stdio (``skillrag mcp -w DIR``). Every tool goes through ``SkillTools``, so the evidence contract
and the latency log are the same as for the CLI and the Python API. Tool errors (bad id, rejected
output, missing index) come back as MCP tool errors (``isError``) whose text is the one-line
message; a rejected ``save_output`` lists every reason, one per line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from skillrag import __version__
from skillrag.errors import ContractViolation, SkillragError
from skillrag.skill import CaseFile, SkillRegistry, SkillTools, hit_to_dict
from skillrag.skill.tools import Retriever
from skillrag.workspace import Workspace

__all__ = ["TOOL_NAMES", "build_mcp_server", "serve_stdio"]

#: The tools the server exposes, in workflow order.
TOOL_NAMES = ("load_case", "retrieve", "get_article", "save_output", "list_skills")


def _fail(exc: SkillragError) -> ToolError:
    if isinstance(exc, ContractViolation):
        return ToolError("output rejected:\n" + "\n".join(f"- {r}" for r in exc.reasons))
    return ToolError(str(exc))


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
    tools = SkillTools(ws, sk, cases, retriever=retriever,
                       log_path=log_path if log_path is not None else ws.runs_dir / "tool_calls.jsonl")
    server = MCPServer(
        name="skillrag",
        version=__version__,
        instructions=f"Skill {sk.name!r}: {sk.description}\n\n{sk.manual}",
    )

    @server.tool(description="Load one support case by id: contact reason, notes, transcript (no reference answer).")
    def load_case(case_id: str) -> dict[str, Any]:
        try:
            return tools.load_case(case_id).model_dump(mode="json")
        except SkillragError as exc:
            raise _fail(exc) from None

    @server.tool(description="Search the knowledge base; returns ranked source-article ids with title and preview.")
    def retrieve(query: str, k: int | None = None) -> list[dict[str, Any]]:
        try:
            return [hit_to_dict(h) for h in tools.retrieve(query, k)]
        except SkillragError as exc:
            raise _fail(exc) from None

    @server.tool(description="Read a source article by id: the raw body (quote from this), one section, or a summary.")
    def get_article(article_id: str, section: str | None = None, summary: bool = False) -> dict[str, Any]:
        try:
            return tools.get_article(article_id, section=section, summary=summary).to_dict()
        except SkillragError as exc:
            raise _fail(exc) from None

    @server.tool(description=(
        "Validate an output (case_id, guidance, snippets[{source_article, source_title, text, why}], "
        "n_snippets, articles_consulted) against the evidence contract and save it; "
        "a rejection lists every reason and writes nothing."
    ))
    def save_output(output: dict[str, Any]) -> dict[str, Any]:
        try:
            saved = tools.save_output(output)
        except SkillragError as exc:
            raise _fail(exc) from None
        return {"accepted": True, "path": str(saved.path), "case_id": saved.case_id,
                "evidence": [e.to_dict() for e in saved.evidence]}

    @server.tool(description="List the skills this workspace offers (name, description).")
    def list_skills() -> list[dict[str, Any]]:
        return [{"name": s.name, "description": s.description, "builtin": s.builtin} for s in registry.list()]

    return server, tools


def serve_stdio(ws: Workspace, *, skill: str = "cs-guidance", cases: CaseFile | None = None) -> None:
    """Serve the skill's tools over stdio until the client disconnects."""
    server, _ = build_mcp_server(ws, skill=skill, cases=cases)
    server.run("stdio")
