"""Turn pydantic-ai / provider exceptions into one-line ``ModelError``s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from skillrag.errors import ModelError

__all__ = ["as_model_error", "model_errors"]


def as_model_error(exc: BaseException, *, model: str = "model") -> ModelError | None:
    """The ``ModelError`` for a provider failure ``exc``, or ``None`` if ``exc`` is not one.

    Covers pydantic-ai's ``ModelAPIError`` family (HTTP status, connection refused, timeouts,
    authentication) and raw ``httpx`` transport errors.
    """
    import httpx
    from pydantic_ai import exceptions as pe

    if isinstance(exc, pe.ModelAuthenticationError):
        return ModelError(f"{model}: authentication failed (check the API key)")
    if isinstance(exc, pe.ModelConnectionError):
        return ModelError(f"{model}: server unreachable ({_first_line(exc)})")
    if isinstance(exc, pe.ModelHTTPError):
        return ModelError(f"{model}: HTTP {exc.status_code} from provider ({_first_line(exc)})")
    if isinstance(exc, pe.ModelAPIError):
        return ModelError(f"{model}: provider error ({_first_line(exc)})")
    if isinstance(exc, httpx.TransportError):
        return ModelError(f"{model}: server unreachable ({type(exc).__name__}: {_first_line(exc)})")
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line[:300]


@contextmanager
def model_errors(model: str = "model") -> Iterator[None]:
    """Re-raise provider failures inside the block as ``ModelError`` (anything else passes through)."""
    try:
        yield
    except ModelError:
        raise
    except Exception as exc:
        translated = as_model_error(exc, model=model)
        if translated is None:
            raise
        raise translated from exc
