"""Reading a user's file with one clear line per failure: the one place the read errors are worded.

``read_text_file(path, "tool log")`` and ``read_json_file(path, "case file")`` raise
``MalformedSourceError`` (``PATH: why``), never a traceback: ``no such tool log``, ``is a folder, not a
file``, ``cannot read the tool log (Permission denied)``, ``not UTF-8 text (invalid start byte at byte 3)``,
``not JSON (Expecting value at line 1)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillrag.errors import MalformedSourceError

__all__ = ["read_json_file", "read_text_file"]


def read_text_file(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; ``what`` names the file in the errors (``"case file"``)."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MalformedSourceError(p, f"no such {what}") from None
    except IsADirectoryError:
        raise MalformedSourceError(p, f"is a folder, not a {what}") from None
    except OSError as exc:
        raise MalformedSourceError(p, f"cannot read the {what} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise MalformedSourceError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_json_file(path: str | Path, what: str = "file") -> Any:
    """``path`` parsed as JSON (``read_text_file``'s errors, and ``not JSON (…at line N)``)."""
    text = read_text_file(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedSourceError(Path(path), f"not JSON ({exc.msg} at line {exc.lineno})") from None
