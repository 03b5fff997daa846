"""The Harbor & Pine demo corpus: a fictional, self-authored help center and support cases.

Package data only, no behaviour. Paths point inside the installed package:

- ``HELP_CENTER``: folder of Markdown articles (front matter ``id``, ``title``, ``tag``), the input
  to ``skillrag ingest``.
- ``CASES``: JSONL, one support case per line with its ``ground_truth`` (see README.md here).
- ``REFERENCE_EVIDENCE``: JSONL, per case the verbatim sentences (``article_id``, ``text``) that
  support its reference guidance; each ``text`` is an exact substring of the article file's body.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CASES", "HELP_CENTER", "REFERENCE_EVIDENCE", "ROOT"]

ROOT: Path = Path(__file__).resolve().parent
HELP_CENTER: Path = ROOT / "help-center"
CASES: Path = ROOT / "cases.jsonl"
REFERENCE_EVIDENCE: Path = ROOT / "reference_evidence.jsonl"
