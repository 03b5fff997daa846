"""Test tiers: unit tests need nothing; `shared` tests read ../shared/data (skipped when absent,
failing instead when SKILLRAG_REQUIRE_SHARED=1, as in CI); `llama` tests start a real local server."""

from __future__ import annotations

import os
from pathlib import Path

import pydantic_ai.models
import pytest

# Unit tests never reach a real model: an accidental request fails loudly. The llama tier
# (tests/integration) lifts this per test for its real local server.
pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
# Tests run with tracing off whatever the developer's shell exports (a CLI test calling main() in process
# would set up the SDK for the whole session); a test that wants spans records them itself
# (skillrag.tracing.testing.record_spans) or sets OTEL_* for a subprocess.
for _name in [n for n in os.environ if n.startswith("OTEL_")]:
    del os.environ[_name]

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SKILLRAG_SHARED", REPO.parent / "shared"))
TAU2 = SHARED / "data" / "tau2-banking"
DEMO = REPO / "src" / "skillrag" / "demo_data"


def pytest_collection_modifyitems(config, items):
    if TAU2.is_dir():
        return
    if os.environ.get("SKILLRAG_REQUIRE_SHARED") == "1":
        return  # let them run and fail loudly: CI must have ../shared
    skip = pytest.mark.skip(reason=f"{TAU2} not found (set SKILLRAG_SHARED or run beside ../shared)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def tau2_dir() -> Path:
    if not TAU2.is_dir():
        pytest.fail(f"SKILLRAG_REQUIRE_SHARED=1 but {TAU2} is missing")
    return TAU2
