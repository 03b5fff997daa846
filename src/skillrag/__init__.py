"""skillrag: grounded, auditable guidance from operational documents, as a portable agent skill."""

from skillrag._version import __version__

__all__ = ["__version__"]
