"""Workspace layout, typed config and its errors."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError, WorkspaceError
from skillrag.workspace import Workspace, WorkspaceConfig, load_config


def test_init_creates_layout_and_keeps_existing_config(tmp_path):
    ws = Workspace.init(tmp_path / "w")
    for sub in ("wiki", "skills", "runs", ".skillrag"):
        assert (ws.root / sub).is_dir()
    assert ws.store_path.is_file()
    assert isinstance(ws.config, WorkspaceConfig)
    ws.config_path.write_text("name: mine\nsearch:\n  k: 7\n")
    again = Workspace.init(tmp_path / "w")
    assert again.config.name == "mine" and again.config.search.k == 7


def test_open_non_workspace_is_a_clear_error(tmp_path):
    with pytest.raises(WorkspaceError, match="not a skillrag workspace"):
        Workspace.open(tmp_path)


def test_open_uses_env_var(tmp_path, monkeypatch):
    Workspace.init(tmp_path / "w")
    monkeypatch.setenv("SKILLRAG_WORKSPACE", str(tmp_path / "w"))
    assert Workspace.open(None).root == (tmp_path / "w").resolve()


@pytest.mark.parametrize(
    "text, needle",
    [
        ("search:\n  kk: 3\n", "search.kk"),
        ("search:\n  k: 0\n", "search.k"),
        ("search: [1, 2\n", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("harness:\n  harness: magic\n", "harness.harness"),
    ],
)
def test_bad_config_names_the_field(tmp_path, text, needle):
    p = tmp_path / "skillrag.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    assert needle in str(exc.value)


def test_unreadable_config_is_a_config_error(tmp_path):
    # regression: a non-UTF-8 (or folder) skillrag.yaml raised a raw UnicodeDecodeError traceback
    cfg = tmp_path / "skillrag.yaml"
    cfg.write_bytes(b"\xff\xfename: x\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(cfg)
    cfg.unlink()
    cfg.mkdir()
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(cfg)
