from __future__ import annotations

import asyncio
import json

import httpx2

from skillrag.models import resolve_model
from skillrag.models._compat import CompatProvider, CompatTransport, fix_chat_body


def test_fix_chat_body_only_touches_null_assistant_content():
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
            {"role": "assistant", "content": "text"},
        ],
    }
    fixed = json.loads(fix_chat_body(json.dumps(body).encode()))
    assert [m["content"] for m in fixed["messages"]] == ["hi", "", "text"]
    assert fixed["messages"][1]["tool_calls"] == [{"id": "1"}]
    assert fix_chat_body(json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode()) is None
    assert fix_chat_body(b"not json") is None


def test_transport_rewrites_chat_requests_on_the_wire():
    seen = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append((request.url.path, json.loads(request.content), request.headers.get("content-length")))
        return httpx2.Response(200, json={"ok": True})

    async def go():
        async with httpx2.AsyncClient(transport=CompatTransport(httpx2.MockTransport(handler))) as client:
            msgs = [{"role": "assistant", "content": None}]
            await client.post("http://h/v1/chat/completions", json={"messages": msgs})
            await client.post("http://h/v1/embeddings", json={"messages": msgs})

    asyncio.run(go())
    (p1, b1, len1), (p2, b2, _) = seen
    assert (p1, p2) == ("/v1/chat/completions", "/v1/embeddings")
    assert b1["messages"][0]["content"] == "" and int(len1) == len(json.dumps(b1).encode())
    assert b2["messages"][0]["content"] is None  # other endpoints pass through untouched


def test_openai_compat_models_use_the_compat_provider():
    model = resolve_model("openai-compat:smol@http://127.0.0.1:8080/v1")
    assert isinstance(model._provider, CompatProvider)
