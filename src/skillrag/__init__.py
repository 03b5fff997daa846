"""skillrag: grounded, auditable guidance from operational documents, as a portable agent skill."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skillrag")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
