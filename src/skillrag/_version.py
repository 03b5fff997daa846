"""The installed version of skillrag, in a module of its own so that every package can record it
(run records, index manifests, MCP) without importing the front door, ``skillrag/__init__.py``."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skillrag")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
