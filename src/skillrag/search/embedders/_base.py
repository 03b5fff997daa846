"""The ``Embedder`` protocol every dense backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "l2_normalize"]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit vectors.

    ``id``: a stable string naming the model *and* everything that changes its vectors (file hash,
    truncation); the index records it and refuses vectors from another id. ``dim``: vector length.
    """

    id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row L2-normalised. Raises ``EmbedderError``."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm (zero rows stay zero), as float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
