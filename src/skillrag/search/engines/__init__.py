"""Search engines, one module per backend, chosen by ``search.engine``.

==============  ==========================================================================================
name            where the index lives and who scores it
==============  ==========================================================================================
``embedded``    files in the workspace; BM25 by ``bm25s``, brute-force numpy dense scoring (default)
``milvus``      Milvus: a Milvus Lite ``.db`` file (in process) or a Milvus standalone / cluster server
                (``search.milvus_uri``); BM25 by a Milvus BM25 function over our analysed text (extra
                ``milvus``)
==============  ==========================================================================================

Both engines rank the same items with the same analysed terms, passages, vectors, k1/b and depth; the
retriever fuses and aggregates identically on top (see ``_base``).
"""

from __future__ import annotations

from collections.abc import Callable

from skillrag.errors import ConfigError
from skillrag.search.engines._base import (
    BuildInput,
    BuildUpdate,
    Engine,
    EngineIndex,
    Ranking,
    ScoringIndex,
    top_k,
)
from skillrag.workspace import Workspace

__all__ = ["ENGINES", "BuildInput", "BuildUpdate", "Engine", "EngineIndex", "Ranking", "ScoringIndex", "get_engine", "top_k"]


def _embedded(ws: Workspace) -> Engine:
    from skillrag.search.engines.embedded import EmbeddedEngine

    return EmbeddedEngine(ws)


def _milvus(ws: Workspace) -> Engine:
    from skillrag.search.engines.milvus import MilvusEngine

    return MilvusEngine(ws)


#: name -> factory(workspace); the config's ``search.engine`` takes its choices from these keys.
ENGINES: dict[str, Callable[[Workspace], Engine]] = {"embedded": _embedded, "milvus": _milvus}


def get_engine(ws: Workspace, name: str | None = None) -> Engine:
    """The engine ``name`` (default: the workspace's ``search.engine``) for ``ws``.

    Raises ``ConfigError`` for an unknown name, ``MissingExtraError`` when its extra is not installed.
    """
    name = name or ws.config.search.engine
    try:
        factory = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown search engine {name!r} (known: {', '.join(ENGINES)})") from None
    return factory(ws)
