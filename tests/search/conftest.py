"""Fixtures for the search tests: a small on-disk corpus in two source folders (tags and paths differ)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrag.corpus import ingest
from skillrag.search.testing import HashEmbedder
from skillrag.workspace import Workspace, WorkspaceConfig

ARTICLES = {
    "cards/lost_card.md": "# Report a lost debit card\n\nFreeze the card in the app, then order a replacement card.\n",
    "cards/card_fees.md": "# Card fees\n\nThe platinum card has an annual fee of 95 dollars and cash back of 2 percent.\n",
    "accounts/close_account.md": "# Close a checking account\n\nTo close a checking account the balance must be zero.\n",
    "accounts/open_savings.md": "# Open a savings account\n\nA savings account pays interest monthly; open it online.\n",
    "accounts/wire.md": "# Send an international wire\n\nWires abroad need the SWIFT code and take two days.\n",
}


def write_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    src = root / "src"
    for rel, text in (files or ARTICLES).items():
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return src


def make_workspace(tmp_path: Path, *, embedder: str = "hash", files: dict[str, str] | None = None,
                   backend: str | None = "direct") -> Workspace:
    """A workspace with the small corpus ingested under two tags (``cards``, ``accounts``).

    ``search.backend`` is ``direct`` here: most search tests are about the article index, and the wiki
    ones name ``backend="wiki"`` in each call. ``backend=None`` keeps the library default (``wiki``).
    """
    cfg = WorkspaceConfig(name="t")
    cfg.search.embedder = embedder
    if backend is not None:
        cfg.search.backend = backend  # type: ignore[assignment]
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    src = write_corpus(tmp_path, files)
    for folder in ("cards", "accounts"):
        if (src / folder).is_dir():
            ingest(ws, [src / folder], tag=folder)
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


@pytest.fixture
def emb() -> HashEmbedder:
    return HashEmbedder()
