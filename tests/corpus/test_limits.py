"""Ingest limits: binary content is not text, and an article over `corpus.max_article_bytes` is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, ingest
from skillrag.corpus.loaders._common import binary_reason
from skillrag.errors import MalformedSourceError
from skillrag.workspace import Workspace
from skillrag.workspace.config import WorkspaceConfig


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.init(tmp_path / "ws")


def test_a_file_of_nul_bytes_saved_as_markdown_is_not_text(ws, tmp_path):
    # regression: 3,000 NUL bytes in a .md file were ingested as an article
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "blank.md").write_bytes(b"\x00" * 3000)
    (tmp_path / "kb" / "ok.md").write_text("# Ok\n\nReal text.\n", encoding="utf-8")
    with pytest.raises(MalformedSourceError, match=r"blank\.md: not text: binary content \(3,000 NUL bytes\)"):
        ingest(ws, [tmp_path / "kb"])
    assert ArticleStore(ws).count() == 0  # nothing written
    rep = ingest(ws, [tmp_path / "kb"], skip_bad=True)
    assert rep.added == ["ok"] and len(rep.rejected) == 1 and "NUL" in rep.rejected[0]


def test_other_binary_content_is_not_text_but_ordinary_control_characters_are(ws, tmp_path):
    assert binary_reason("text\twith\ttabs\r\nand\x0cform feeds") is None
    assert binary_reason("x" * 5000 + "\x1b") is None  # one stray escape in a long text
    assert "control characters" in binary_reason("\x01\x02\x03 binary \x04\x05")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "rec.json").write_text(json.dumps({"id": "r", "title": "R", "content": "a\u0000b"}))
    with pytest.raises(MalformedSourceError, match="not text"):
        ingest(ws, [tmp_path / "kb"])


def test_a_20_mb_markdown_file_is_refused_naming_the_setting(ws, tmp_path):
    # regression: accepted silently, then 33 min to index and 2.4 GB of memory to run one case
    (tmp_path / "kb").mkdir()
    big = tmp_path / "kb" / "huge.md"
    line = "The quick brown fox jumps over the lazy dog. " * 20 + "\n"
    big.write_text("# Huge\n\n" + line * (20_000_000 // len(line)), encoding="utf-8")
    with pytest.raises(MalformedSourceError) as err:
        ingest(ws, [tmp_path / "kb"])
    msg = str(err.value)
    assert "huge.md" in msg and "20.0 MB" in msg and "5,000,000 bytes" in msg
    assert "corpus.max_article_bytes" in msg and "\n" not in msg


def test_the_limit_is_per_article_and_a_setting_raises_it(tmp_path):
    cfg = WorkspaceConfig()
    cfg.corpus.max_article_bytes = 1000
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    (tmp_path / "kb").mkdir()
    # a JSON list may be larger than the limit as a file; each of its articles is checked
    recs = [{"id": f"a{i}", "title": "A", "content": "x" * 600} for i in range(5)]
    (tmp_path / "kb" / "many.json").write_text(json.dumps(recs))
    assert len(ingest(ws, [tmp_path / "kb"]).added) == 5
    (tmp_path / "kb" / "big.json").write_text(json.dumps({"id": "b", "title": "B", "content": "y" * 1500}))
    with pytest.raises(MalformedSourceError, match="article 'b' is 0.0 MB, over the per-article limit of 1,000"):
        ingest(ws, [tmp_path / "kb"])
    rep = ingest(ws, [tmp_path / "kb"], skip_bad=True)  # --skip-bad still skips it
    assert rep.rejected and "corpus.max_article_bytes" in rep.rejected[0]
    (ws.root / "skillrag.yaml").write_text((ws.root / "skillrag.yaml").read_text().replace(
        "max_article_bytes: 1000", "max_article_bytes: 2000"))
    assert ingest(Workspace.open(ws.root), [tmp_path / "kb"]).added == ["b"]


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "blank.md").write_bytes(b"\x00" * 3000)
    capsys.readouterr()
    assert main(["ingest", "-w", str(ws), str(tmp_path / "kb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not text" in err and err.count("\n") == 1
    assert main(["ingest", "-w", str(ws), str(tmp_path / "kb"), "--skip-bad"]) == 0
    out = capsys.readouterr()
    assert "1 rejected" in out.out and "rejected: " in out.err
