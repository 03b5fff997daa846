"""The LLM harness against a real local model over real HTTP (llama.cpp + SmolLM2-135M-Instruct).

The model is far too small to write useful guidance; the test checks the *path*: real tool calls
over the OpenAI-compatible API, the model's junk rejected by the evidence contract, bounded
retries, token usage from the server in the run record, and a clean final status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.models import override_allow_model_requests

from skillrag.corpus import ArticleStore, ingest
from skillrag.harness import run_case
from skillrag.harness.llm import MAX_CHECKS, LLMHarness
from skillrag.skill import Case, validate_output
from skillrag.skill.testing import FakeRetriever
from skillrag.workspace import Workspace

ARTICLES = [
    {
        "id": "kb_card_lost",
        "title": "Lost debit cards",
        "content": "1. Verify the customer's identity.\n2. Freeze the card with `freeze_card_4410`.\n"
        "3. Order a replacement card; it arrives within 5 business days.",
    },
    {"id": "kb_wire", "title": "Wire transfers", "content": "Wires above $5,000 need a second approver."},
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = Workspace.init(tmp_path / "ws")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "articles.json").write_text(json.dumps(ARTICLES), encoding="utf-8")
    ingest(w, [tmp_path / "kb"])
    return w


@pytest.mark.llama
@pytest.mark.slow
def test_llm_harness_against_a_real_local_server(ws, llama_server):
    spec = f"openai-compat:smollm2@{llama_server}"
    harness = LLMHarness(spec, guided=True, model_settings={"max_tokens": 256, "temperature": 0.0})
    case = Case(
        case_id="case_lost",
        contact_reason="Customer lost their debit card",
        case_messages=[{"role": "customer", "content": "I lost my card, please freeze it."}],
    )
    budgets = {"max_queries": 1, "max_fetches": 1, "max_save_retries": 2, "max_seconds": 300}
    with override_allow_model_requests(True):
        res = run_case(ws, case, harness=harness, retriever=FakeRetriever(ws), budgets=budgets)
    rec = res.record
    assert res.status in ("failed", "accepted"), rec.error  # a clean end, never a crash or a time-out
    assert rec.model == spec and rec.guided
    model_steps = [s for s in rec.steps if s.kind == "model"]
    tool_steps = [s for s in rec.steps if s.kind == "tool"]
    # real HTTP round trips that came back as tool calls, with the server's token counts
    assert len(model_steps) >= 4 and all(s.ok for s in model_steps)
    assert all(s.detail.startswith("calls: ") for s in model_steps)
    assert all(s.input_tokens > 0 for s in model_steps) and rec.input_tokens > 500
    assert [s.name for s in tool_steps][:3] == ["load_case", "retrieve", "get_article"]
    saves = [s for s in tool_steps if s.name == "save_output"]
    real_saves = [s for s in saves if not s.args.get("check")]
    save_calls = [s for s in model_steps if s.detail == "calls: save_output"]
    # bounded: at most max_save_retries + 1 saves, and MAX_CHECKS check calls (malformed calls, which never
    # reach the contract, spend the same model-side allowance)
    assert len(real_saves) <= budgets["max_save_retries"] + 1
    assert 1 <= len(save_calls) <= budgets["max_save_retries"] + MAX_CHECKS + 1
    if res.status == "failed":
        # every attempt used, then stopped: the contract's saves, or the model's calls to save_output
        assert len(real_saves) == budgets["max_save_retries"] + 1 or \
            len(save_calls) == budgets["max_save_retries"] + MAX_CHECKS + 1
        # the evidence contract saw the model's junk and named what was wrong with it
        assert rec.retries == rec.saves == len(real_saves)
        assert all(not s.ok and s.detail for s in real_saves)
        assert not real_saves or rec.reasons
        assert "rejected" in rec.error or "gave up" in rec.error
        assert res.output is None and not (ws.runs_dir / "case_lost" / "output.json").exists()
    else:  # pragma: no cover - a 135M model passing the contract would be a pleasant surprise
        bodies = {a.id: a.body for a in ArticleStore(ws).list()}
        assert validate_output({k: v for k, v in res.output.items() if k != "audit"}, bodies) == []
    assert json.loads(res.record_path.read_text())["status"] == res.status
