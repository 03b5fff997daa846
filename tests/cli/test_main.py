"""The entry point: usage errors, help and Ctrl-C, for every command."""

from __future__ import annotations

import json

import pytest

from skillrag.cli import corpus as corpus_cli
from skillrag.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message", "command"),
    [
        (["search", "-k", "0", "fees"], "Invalid value for '-k'", "skillrag search"),
        (["search", "--pages", "-2", "fees"], "Invalid value for '--pages'", "skillrag search"),
        (["article"], "Missing argument 'ID'", "skillrag article"),
        (["articles", "--bogus"], "No such option: --bogus", "skillrag articles"),
        (["tool", "get-article"], "Missing argument", "skillrag tool get-article"),
        (["wiki", "build", "--variant"], "requires an argument", None),  # click gives no context here
        (["no-such-command"], "No such command 'no-such-command'", "skillrag"),
    ],
)
def test_usage_errors_are_one_error_line_with_exit_2(argv, message, command, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("error: ") and err.count("\n") == 1, err  # no boxed rich panel, no usage block
    assert message in err
    if command is not None:
        assert err.rstrip().endswith(f"(try: {command} --help)")
    assert "╭" not in err and "Usage:" not in err and captured.out == ""


def test_help_is_unchanged_and_exits_0(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage: skillrag [OPTIONS] COMMAND [ARGS]..." in out and "search" in out
    assert main(["search", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage: skillrag search [OPTIONS]" in out and "--pages" in out


def test_no_arguments_prints_the_help(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert "Usage: skillrag [OPTIONS] COMMAND [ARGS]..." in captured.out and "error" not in captured.err


def test_ctrl_c_in_a_command_exits_130(monkeypatch, tmp_path):
    def interrupted(_path):
        raise KeyboardInterrupt

    monkeypatch.setattr(corpus_cli, "open_workspace", interrupted)
    assert main(["articles", "-w", str(tmp_path)]) == 130


def _rejected(tmp_path, snippets):
    """A workspace with one article and an output file whose snippets the contract rejects."""
    from skillrag.skill.testing import make_output

    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "a.json").write_text(json.dumps({"id": "doc_a", "title": "A",
                                             "content": "Verify the customer's identity before any change.\n"}))
    assert main(["ingest", "-w", str(ws), str(docs)]) == 0
    out = tmp_path / "out.json"
    out.write_text(json.dumps(make_output("c1", snippets)))
    return ws, out


def test_a_rejected_output_prints_each_reason_once(tmp_path, capsys):
    ws, out = _rejected(tmp_path, [("doc_a", "Verify the customer before any change at all")])
    capsys.readouterr()
    assert main(["validate", str(out), "-w", str(ws)]) == 1
    err = capsys.readouterr().err
    reason = "snippets[0].text: not a verbatim substring of article 'doc_a'"
    assert err.count(reason) == 1 and err.startswith("error: output rejected: ") and err.count("\n") == 1

    ws, out = _rejected(tmp_path / "two", [("doc_a", "Verify the customer before any change at all"),
                                           ("doc_zz", "whatever text is quoted here")])
    capsys.readouterr()
    assert main(["validate", str(out), "-w", str(ws)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"error: output rejected: {len(lines) - 1} reasons"
    assert len(lines) >= 3 and all(line.startswith("  - ") for line in lines[1:])
    assert len(set(lines)) == len(lines)  # no reason printed twice
    assert sum(reason in line for line in lines) == 1
