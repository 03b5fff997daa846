"""OpenTelemetry traces: every run, tool call, model call, chat turn and wiki-build pass as a span.

The code everywhere emits spans through the OpenTelemetry **API** (``span``, ``traced``); nothing is
recorded until an application sets up the SDK. ``setup_tracing`` does that from the standard
environment variables only, through the SDK's own configurator (the one ``opentelemetry-instrument``
uses), so any OTLP collector (the OpenTelemetry Collector, Jaeger, Grafana Tempo, Langfuse, Phoenix)
receives the spans with no code of ours in between:

``OTEL_TRACES_EXPORTER``            ``otlp``, ``console`` (to stderr) or ``none``; unset = tracing off
``OTEL_EXPORTER_OTLP_ENDPOINT``     the collector (default ``http://localhost:4318``)
``OTEL_EXPORTER_OTLP_PROTOCOL``     ``http/protobuf`` (the default here, as the OTLP spec says); ``grpc``
                                    needs ``opentelemetry-exporter-otlp-proto-grpc``
``OTEL_SERVICE_NAME``               the service name (default ``skillrag``)
``OTEL_TRACES_SAMPLER``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*`` ...   as the SDK documents them
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``   ``true`` puts prompts and completions on the
                                    model spans (off by default: case text stays out of the traces)

Off (the default) costs nothing measurable: ``span`` hands out the API's one shared invalid span after a
single provider check, attributes that take work to compute are only computed for a recording span, and
the SDK is not even imported (``benchmarks/tracing_overhead.py``). Model calls are traced by pydantic-ai's own
instrumentation (OpenTelemetry GenAI spans), switched on here for every agent.

Span names and their ``skillrag.*`` attributes are listed in docs/service-and-security.md ("Traces"). Tests record spans
with ``skillrag.tracing.testing.record_spans`` (the SDK's in-memory exporter).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanContext, SpanKind

from skillrag._version import __version__
from skillrag.errors import ConfigError

__all__ = [
    "TRACER_NAME",
    "capture_content",
    "clean_attributes",
    "current_span_context",
    "current_trace_id",
    "instrument_models",
    "model_instrumentation",
    "set_attributes",
    "setup_tracing",
    "span",
    "traced",
    "tracer",
    "tracing_on",
]

#: The instrumentation scope every skillrag span is recorded under.
TRACER_NAME = "skillrag"
#: Longest string attribute kept whole; longer ones are cut (a span stays bounded like a log line).
MAX_ATTRIBUTE_CHARS = 300
#: Most items kept in a list attribute.
MAX_ATTRIBUTE_ITEMS = 20

F = TypeVar("F", bound=Callable[..., Any])
_configured: list[bool] = []


def tracer() -> trace.Tracer:
    """The ``skillrag`` tracer of the current global provider (looked up per call, so a provider set
    later, or a test's, is the one used)."""
    return trace.get_tracer(TRACER_NAME, __version__)


def tracing_on() -> bool:
    """Whether an SDK tracer provider is installed (``setup_tracing`` or the application's own)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def _value(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_ATTRIBUTE_CHARS else value[:MAX_ATTRIBUTE_CHARS] + "…"
    if isinstance(value, Sequence):
        items = [_value(v) for v in list(value)[:MAX_ATTRIBUTE_ITEMS] if v is not None]
        if all(isinstance(v, str) for v in items) or all(isinstance(v, bool) for v in items):
            return items
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in items):
            return items
        return [str(v) for v in items]
    return _value(str(value))


def clean_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """``attributes`` as OpenTelemetry accepts them: None values dropped, strings cut at
    ``MAX_ATTRIBUTE_CHARS``, lists at ``MAX_ATTRIBUTE_ITEMS`` of one type, anything else as its text."""
    return {k: _value(v) for k, v in (attributes or {}).items() if v is not None}


def set_attributes(target: Span, attributes: Mapping[str, Any]) -> None:
    """Set ``attributes`` (cleaned) on ``target`` when it records; nothing otherwise."""
    if target.is_recording():
        target.set_attributes(clean_attributes(attributes))


@contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None, *,
         kind: SpanKind = SpanKind.INTERNAL) -> Iterator[Span]:
    """A span named ``name``, current for the block. An exception leaving the block is recorded on it
    and sets its status to error (then propagates). Off (no SDK provider): the API's shared invalid span,
    handed out without touching the tracer or the context, so an unused span costs one provider check."""
    if not tracing_on():
        yield INVALID_SPAN
        return
    with tracer().start_as_current_span(
        name, attributes=clean_attributes(attributes) if attributes else None, kind=kind,
    ) as current:
        yield current


def traced(name: str, attributes: Callable[..., Mapping[str, Any]] | None = None,
           after: Callable[..., Mapping[str, Any]] | None = None) -> Callable[[F], F]:
    """Decorator: each call of the function (sync or ``async``) runs in ``span(name)``. ``attributes``,
    given the call's arguments, names its attributes; ``after``, given the return value and then the
    arguments, adds the outcome's. Both are called only when the span records."""

    def wrap(fn: F) -> F:
        def before(current: Span, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if attributes is not None and current.is_recording():
                set_attributes(current, attributes(*args, **kwargs))

        def done(current: Span, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if after is not None and current.is_recording():
                set_attributes(current, after(value, *args, **kwargs))
            return value

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with span(name) as current:
                    before(current, args, kwargs)
                    return done(current, await fn(*args, **kwargs), args, kwargs)

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with span(name) as current:
                before(current, args, kwargs)
                return done(current, fn(*args, **kwargs), args, kwargs)

        return run  # type: ignore[return-value]

    return wrap


def current_span_context() -> SpanContext | None:
    """The current span's context when it is recorded and sampled (a link target), else None."""
    ctx = trace.get_current_span().get_span_context()
    return ctx if ctx.is_valid and ctx.trace_flags.sampled else None


def current_trace_id() -> str | None:
    """The current trace's id, 32 lowercase hex digits as collectors show it, when the current span is
    sampled (its trace reaches the collector); None when tracing is off."""
    ctx = current_span_context()
    return trace.format_trace_id(ctx.trace_id) if ctx is not None else None


def capture_content() -> bool:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``: prompts and completions on model spans."""
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def model_instrumentation(tracer_provider: Any = None) -> Any:
    """pydantic-ai ``InstrumentationSettings`` for the current (or the given) tracer provider: GenAI
    spans for every model request, message content only with ``capture_content``."""
    from pydantic_ai.models.instrumented import InstrumentationSettings

    return InstrumentationSettings(tracer_provider=tracer_provider or trace.get_tracer_provider(),
                                   include_content=capture_content(), include_binary_content=False)


def instrument_models(tracer_provider: Any = None) -> None:
    """Switch pydantic-ai's instrumentation on for every ``Agent`` (``Agent.instrument_all``)."""
    from pydantic_ai import Agent

    Agent.instrument_all(model_instrumentation(tracer_provider))


def _exporter_names() -> list[str]:
    raw = os.environ.get("OTEL_TRACES_EXPORTER", "")
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    return [] if names in ([], ["none"]) else names


def setup_tracing() -> bool:
    """Set up the OpenTelemetry SDK from the ``OTEL_*`` environment (module doc) and instrument model
    calls; returns whether tracing is on. Does nothing (and imports no SDK) when ``OTEL_TRACES_EXPORTER``
    is unset or ``none``, or ``OTEL_SDK_DISABLED=true``. Once per process; later calls return the first
    answer. Raises ``ConfigError`` (one line) for an exporter or protocol that is not installed."""
    if _configured:
        return _configured[0]
    names = _exporter_names()
    if not names or os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        _configured.append(False)
        return False
    from opentelemetry.sdk._configuration import _OTelSDKConfigurator
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    if not (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")):
        # the OTLP spec's default transport; the Python SDK would otherwise pick gRPC, which is not installed
        os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    resource: dict[str, Any] = {}
    if not os.environ.get("OTEL_SERVICE_NAME") and "service.name=" not in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        resource["service.name"] = "skillrag"
    resource["service.version"] = __version__
    try:
        _OTelSDKConfigurator().configure(
            resource_attributes=resource,
            # console spans go to stderr, so `--json` output on stdout stays one JSON document
            exporter_args_map={ConsoleSpanExporter: {"out": sys.stderr}},
        )
    except RuntimeError as exc:  # the SDK's words for an unknown exporter or protocol
        hint = ("OTLP over gRPC needs `pip install opentelemetry-exporter-otlp-proto-grpc`; or set "
                "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf" if "grpc" in str(exc) else
                "installed here: otlp (http/protobuf), console, none")
        raise ConfigError(f"OTEL_TRACES_EXPORTER={os.environ.get('OTEL_TRACES_EXPORTER')!r}: {exc} ({hint})") from None
    instrument_models()
    _configured.append(True)
    return True
