"""Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp,
text-embeddings-inference), over ``httpx``. The key is read from ``$OPENAI_API_KEY`` when set.

This is the way to build a large index on a GPU server: serve the embedding model there, point
``search.embedder_url`` at it and set ``search.embed_threads`` to the requests to keep in flight
(``concurrency``); queries are embedded by the same server, so build and search share one model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np

from skillrag.errors import ConfigError, EmbedderError
from skillrag.search.embedders._base import l2_normalize

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible server; ``embed`` returns ``(n, dim)`` float32, L2-normalised.

    ``base_url`` e.g. ``http://127.0.0.1:8080/v1``; ``model`` the server's model name. ``timeout_s``
    per request, in seconds. ``batch_size`` texts per request; ``concurrency`` requests in flight at
    once when a call has several batches (results keep the input order). ``transport`` lets tests pass
    an ``httpx.MockTransport``. Raises ``ConfigError`` without a URL or model, ``EmbedderError`` on any
    HTTP or payload failure.
    """

    def __init__(
        self,
        base_url: str | None,
        model: str | None,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        concurrency: int = 1,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ConfigError("the openai embedder needs search.embedder_url (e.g. http://127.0.0.1:8080/v1)")
        if not model:
            raise ConfigError("the openai embedder needs search.embedder_model (the server's model name)")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.batch_size = batch_size
        self.concurrency = max(1, concurrency)
        self.client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)
        self.id = f"openai:{model}@{base_url.rstrip('/')}"
        self._dim = 0

    @property
    def dim(self) -> int:
        if not self._dim:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _post(self, chunk: list[str]) -> list[list[float]]:
        try:
            resp = self.client.post(self.url, json={"model": self.model, "input": chunk})
            resp.raise_for_status()
            rows = [d["embedding"] for d in sorted(resp.json()["data"], key=lambda d: d["index"])]
        except httpx.HTTPError as exc:
            raise EmbedderError(f"{self.url}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError(f"{self.url}: unexpected response ({exc})") from None
        if len(rows) != len(chunk):
            raise EmbedderError(f"{self.url}: {len(chunk)} texts sent, a different number of vectors back")
        return rows

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised. Raises ``EmbedderError``."""
        texts = list(texts)
        chunks = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if self.concurrency > 1 and len(chunks) > 1:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(chunks))) as pool:
                parts = list(pool.map(self._post, chunks))
        else:
            parts = [self._post(c) for c in chunks]
        rows = [row for part in parts for row in part]
        if not rows:
            return np.zeros((0, self._dim), dtype=np.float32)
        out = l2_normalize(np.asarray(rows, dtype=np.float32))
        self._dim = out.shape[1]
        return out
