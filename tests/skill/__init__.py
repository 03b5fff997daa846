"""Tests of skillrag.skill, the skill CLI and the MCP server."""
