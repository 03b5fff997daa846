"""Token usage that is true however an agent run ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["counted_usage"]


@contextmanager
def counted_usage(add: Callable[[Any], None]) -> Iterator[Any]:
    """A fresh pydantic-ai ``RunUsage`` for one agent run (pass it as ``agent.run(..., usage=usage)``):
    the agent adds each request's tokens to it as it goes, and ``add(usage)`` is called when the block
    ends, however it ends (an accepted answer, a token or request cap, a deadline, a model that gave up,
    a provider error), so no exit path drops the tokens already spent."""
    from pydantic_ai.usage import RunUsage

    usage = RunUsage()
    try:
        yield usage
    finally:
        add(usage)
