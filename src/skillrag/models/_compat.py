"""Small wire fixes for OpenAI-compatible servers that are stricter than the OpenAI API.

llama.cpp's server (``python -m llama_cpp.server``) rejects an assistant message whose
``content`` is ``null`` (HTTP 500), which is what the OpenAI format sends for a turn that only
calls tools. ``CompatTransport`` rewrites such messages to ``"content": ""`` on the way out;
everything else passes through unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
from pydantic_ai.providers.openai import OpenAIProvider

__all__ = ["CompatProvider", "CompatTransport", "fix_chat_body"]


def fix_chat_body(content: bytes) -> bytes | None:
    """The chat-completions request body with ``null`` assistant contents made ``""``, or ``None``
    when nothing needed changing (or the body is not a JSON object)."""
    try:
        body = json.loads(content)
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    changed = False
    for msg in body["messages"]:
        if isinstance(msg, dict) and msg.get("role") == "assistant" and msg.get("content", "") is None:
            msg["content"] = ""
            changed = True
    return json.dumps(body).encode("utf-8") if changed else None


class CompatTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that applies ``fix_chat_body`` to ``POST .../chat/completions``."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            fixed = fix_chat_body(await request.aread())
            if fixed is not None:
                headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
                request = httpx2.Request(
                    request.method, request.url, headers=headers, content=fixed, extensions=request.extensions
                )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _client_factory() -> Any:
    from pydantic_ai._http import create_async_httpx2_client

    return create_async_httpx2_client(transport=CompatTransport())


class CompatProvider(OpenAIProvider):
    """``OpenAIProvider`` for an OpenAI-compatible server, sending through ``CompatTransport``.

    The provider keeps owning its HTTP client (a fresh one per event loop, as pydantic-ai does for
    its own clients), so it works from ``run_sync`` in several threads.
    """

    def __init__(self, *, base_url: str, api_key: str) -> None:
        super().__init__(base_url=base_url, api_key=api_key)
        client = _client_factory()
        self._own_http_client = client
        self._http_client_factory = _client_factory
        self._set_http_client(client)
