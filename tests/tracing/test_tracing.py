"""``skillrag.tracing``: its public names, the off decisions of ``setup_tracing`` and attribute cleaning."""

from __future__ import annotations

import pytest
from opentelemetry import trace

from skillrag import tracing
from skillrag.tracing.testing import one, record_spans


def test_public_api_is_pinned():
    assert sorted(tracing.__all__) == sorted([
        "TRACER_NAME", "capture_content", "clean_attributes", "current_span_context", "current_trace_id",
        "instrument_models", "model_instrumentation", "set_attributes", "setup_tracing", "span", "traced",
        "tracer", "tracing_on"])


@pytest.mark.parametrize("env", [{}, {"OTEL_TRACES_EXPORTER": "none"},
                                 {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}])
def test_off_unless_an_exporter_is_named(env, monkeypatch):
    monkeypatch.setattr(tracing, "_configured", [])
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert tracing.setup_tracing() is False
    assert not tracing.tracing_on() and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    with tracing.span("skillrag.x", {"a": 1}) as s:
        assert s is trace.INVALID_SPAN and tracing.current_trace_id() is None


def test_attributes_are_bounded_and_typed():
    long = "x" * 1000
    got = tracing.clean_attributes({"none": None, "s": long, "n": 3, "l": list(range(50)), "mixed": [1, "a"],
                                    "obj": object})
    assert "none" not in got and len(got["s"]) == tracing.MAX_ATTRIBUTE_CHARS + 1 and got["n"] == 3
    assert got["l"] == list(range(tracing.MAX_ATTRIBUTE_ITEMS)) and got["mixed"] == ["1", "a"]
    assert got["obj"].startswith("<class")


def test_traced_records_arguments_outcome_and_errors():
    @tracing.traced("skillrag.t", lambda x: {"x": x}, after=lambda r, x: {"r": r})
    def double(x):
        if x < 0:
            raise ValueError("negative")
        return 2 * x

    with record_spans() as exporter:
        assert double(2) == 4
        with pytest.raises(ValueError):
            double(-1)
    ok, bad = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    assert dict(ok.attributes) == {"x": 2, "r": 4}
    assert bad.status.status_code is trace.StatusCode.ERROR and bad.events[0].name == "exception"
    assert not tracing.tracing_on()  # the recorder put the process back to off
    with record_spans() as exporter, tracing.span("skillrag.outer"):
        assert tracing.current_trace_id() is not None
    assert one(exporter.get_finished_spans(), "skillrag.outer")
