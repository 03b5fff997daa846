"""Recording spans in tests: the SDK's ``InMemorySpanExporter`` behind a tracer provider installed for
one block, and a readable span tree to assert on.

``record_spans()`` installs a fresh SDK ``TracerProvider`` as the global one (every ``skillrag`` span and
pydantic-ai's model spans go to it), yields its ``InMemorySpanExporter`` and afterwards restores the
process to tracing off, exactly as the OpenTelemetry test utilities reset their globals
(``opentelemetry.test.globals_test.reset_trace_globals``; done here so tests need no package pinned to
one SDK version).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace

__all__ = ["attributes_of", "children", "one", "record_spans", "span_tree"]


def _reset_globals() -> None:
    from opentelemetry.util._once import Once

    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace._PROXY_TRACER_PROVIDER = trace.ProxyTracerProvider()  # type: ignore[attr-defined]


@contextmanager
def record_spans() -> Iterator[Any]:
    """A block with tracing on: yields the ``InMemorySpanExporter`` (``get_finished_spans()``) that every
    span ended inside it is exported to, at once (``SimpleSpanProcessor``)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent

    from skillrag.tracing import instrument_models

    provider = TracerProvider(resource=Resource.create({"service.name": "skillrag-test"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _reset_globals()
    trace.set_tracer_provider(provider)
    instrument_models(provider)
    try:
        yield exporter
    finally:
        provider.shutdown()
        Agent.instrument_all(False)
        _reset_globals()


def children(spans: Sequence[Any], parent: Any) -> list[Any]:
    """The spans whose parent is ``parent``, in start order."""
    pid = parent.context.span_id
    return sorted((s for s in spans if s.parent is not None and s.parent.span_id == pid), key=lambda s: s.start_time)


def span_tree(spans: Sequence[Any], *, prefix: str = "") -> list[str]:
    """The span names as an indented tree (two spaces a level), roots and children in start order;
    only spans whose name starts with ``prefix`` are listed (their descendants are still walked)."""
    ids = {s.context.span_id for s in spans}
    roots = sorted((s for s in spans if s.parent is None or s.parent.span_id not in ids), key=lambda s: s.start_time)
    lines: list[str] = []

    def walk(s: Any, depth: int) -> None:
        shown = s.name.startswith(prefix)
        if shown:
            lines.append("  " * depth + s.name)
        for c in children(spans, s):
            walk(c, depth + 1 if shown else depth)

    for r in roots:
        walk(r, 0)
    return lines


def one(spans: Sequence[Any], name: str) -> Any:
    """The one span named ``name`` (``AssertionError`` listing the names when there are none or several)."""
    found = [s for s in spans if s.name == name]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} spans named {name!r} among {[s.name for s in spans]}")
    return found[0]


def attributes_of(spans: Sequence[Any], name: str) -> list[dict[str, Any]]:
    """The attributes of every span named ``name``, in start order, as plain dicts (lists for sequences)."""
    out = []
    for s in sorted((s for s in spans if s.name == name), key=lambda s: s.start_time):
        out.append({k: list(v) if isinstance(v, tuple) else v for k, v in (s.attributes or {}).items()})
    return out
