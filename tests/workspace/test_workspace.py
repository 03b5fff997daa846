"""Workspace layout, typed config and its errors."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError, WorkspaceError
from skillrag.workspace import Workspace, WorkspaceConfig, aside_dir, load_config, swap_dir


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


def test_zero_byte_store_is_a_damaged_store_not_an_empty_workspace(tmp_path):
    # regression: a truncated store.sqlite read as a workspace with 0 articles
    from skillrag.corpus import ArticleStore

    ws = Workspace.init(tmp_path / "w")
    assert ws.store_path.stat().st_size > 0  # a store this package creates always has SQLite's header
    ws.store_path.write_bytes(b"")
    for side in ("-wal", "-shm"):
        (ws.store_path.parent / (ws.store_path.name + side)).unlink(missing_ok=True)
    with pytest.raises(WorkspaceError, match=r"store is damaged \(an empty file, 0 bytes\)"):
        ArticleStore(ws).count()
    assert ws.store_path.stat().st_size == 0  # left as found, nothing written over it


def test_corrupt_store_is_one_error_line_from_the_cli(tmp_path, capsys):
    from skillrag.cli.main import main

    ws = Workspace.init(tmp_path / "w")
    for data in (b"", b"not a database at all " * 100):
        ws.store_path.write_bytes(data)
        assert main(["articles", "-w", str(ws.root)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "store is damaged" in err and err.count("\n") == 1


def test_a_missing_store_is_created_with_its_header(tmp_path):
    from skillrag.corpus import ArticleStore

    ws = Workspace.init(tmp_path / "w")
    ws.store_path.unlink()
    assert ArticleStore(ws).count() == 0
    assert ws.store_path.read_bytes()[:16] == b"SQLite format 3\x00"


def test_write_lock_is_reentrant_in_one_process_and_exclusive_across_processes(tmp_path):
    import subprocess
    import sys

    ws = Workspace.init(tmp_path / "w")
    holder = (
        "import sys, time\n"
        "from skillrag.workspace import Workspace\n"
        "ws = Workspace.open(sys.argv[1])\n"
        "with ws.write_lock('ingest'):\n"
        "    print('locked', flush=True)\n"
        "    sys.stdin.readline()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, str(ws.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        busy = rf"busy: `skillrag ingest` \(pid {proc.pid}, since "
        with pytest.raises(WorkspaceError, match=busy), ws.write_lock("index", wait=0.2):
            pass
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    with ws.write_lock("demo"), ws.write_lock("ingest"):  # re-entrant: demo runs ingest under its lock
        info = (ws.state_dir / "write.lock.json").read_text()
        assert '"command": "demo"' in info
    assert not (ws.state_dir / "write.lock.json").exists()


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    import signal
    import subprocess
    import sys

    ws = Workspace.init(tmp_path / "w")
    code = (
        "import sys, time\nfrom skillrag.workspace import Workspace\n"
        "with Workspace.open(sys.argv[1]).write_lock('run-batch'):\n"
        "    print('locked', flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ws.root)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with ws.write_lock("index"):  # the kernel released the dead holder's lock
        pass


def test_writer_names_a_live_lock_holder_and_ignores_a_killed_ones_note(tmp_path):
    import json
    import os
    import subprocess
    import sys

    ws = Workspace.init(tmp_path / "ws")
    assert ws.writer() is None
    with ws.write_lock("index"):
        assert ws.writer().startswith(f"`skillrag index` (pid {os.getpid()}, since ")
    assert ws.writer() is None
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    (ws.state_dir / "write.lock.json").write_text(json.dumps({"command": "index", "pid": int(gone.stdout),
                                                              "since": "2026-12-01 00:00:00 UTC"}))
    assert ws.writer() is None  # a SIGKILLed writer leaves its note: no one is writing


def test_run_folder_owns_the_layout(tmp_path):
    from skillrag.errors import InvalidIdError
    from skillrag.workspace import RunFolder

    run = RunFolder.of(tmp_path / "runs", "c_1")
    assert (run.output.name, run.record.name, run.case.name, run.scores.name) == (
        "output.json", "record.json", "case.json", "scores.json")
    assert run.folder == tmp_path / "runs" / "c_1" and run.case_id == "c_1"
    flat = RunFolder.flat(tmp_path / "arm", "c_1")  # an evaluation arm's output (or `run --out OUT.json`)
    assert (flat.record.name, flat.case.name, flat.case_id) == ("c_1.record.json", "c_1.case.json", "c_1")
    assert RunFolder.beside(flat.record) == flat and RunFolder.beside(run.case) == run
    assert not run.present
    run.folder.mkdir(parents=True)
    run.record.write_text("{}")
    assert run.present  # a failed run leaves only its record
    with pytest.raises(InvalidIdError):
        RunFolder.of(tmp_path, "a/../b")


def test_swap_dir_puts_the_new_folder_in_place_and_drops_the_old_one(tmp_path):
    live, new = tmp_path / "index", tmp_path / ".index.tmp"
    assert aside_dir(live) == tmp_path / ".index.old"
    new.mkdir()
    (new / "a").write_text("first")
    swap_dir(new, live)  # no live folder yet
    assert (live / "a").read_text() == "first" and not new.exists()
    aside_dir(live).mkdir()  # left by a swap killed before it removed it
    (aside_dir(live) / "stale").write_text("")
    new.mkdir()
    (new / "b").write_text("second")
    swap_dir(new, live)
    assert sorted(p.name for p in live.iterdir()) == ["b"]
    assert not new.exists() and not aside_dir(live).exists()
