"""The content-layer commands through the real entry point."""

from __future__ import annotations

import json

from skillrag.cli.main import main


def test_init_ingest_article_articles(tmp_path, capsysbinary):
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "# Title\n\nLine with “quotes”\u00a0and NBSP.\n\n## Fees\nA fee of $5.\n"
    (docs / "a.json").write_text(json.dumps({"id": "doc_a", "title": "A", "content": body}))
    assert main(["ingest", "-w", str(ws), str(docs)]) == 0
    capsysbinary.readouterr()

    assert main(["article", "-w", str(ws), "doc_a"]) == 0
    assert capsysbinary.readouterr().out == body.encode("utf-8")  # exactly the body, nothing else

    assert main(["article", "-w", str(ws), "doc_a", "--section", "Fees"]) == 0
    assert capsysbinary.readouterr().out == b"## Fees\nA fee of $5.\n"

    assert main(["article", "-w", str(ws), "doc_a", "--summary"]) == 0
    out = capsysbinary.readouterr().out.decode()
    assert out.startswith("A [doc_a]") and "Sections: Title; Fees" in out

    assert main(["article", "-w", str(ws), "doc_a", "--json"]) == 0
    assert json.loads(capsysbinary.readouterr().out)["body"] == body

    assert main(["articles", "-w", str(ws), "--json"]) == 0
    listed = json.loads(capsysbinary.readouterr().out)
    assert [a["id"] for a in listed] == ["doc_a"]


def test_bad_ids_and_missing_workspace_are_one_line_errors(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    capsys.readouterr()
    for bad in ["../../etc/passwd", "nope"]:
        assert main(["article", "-w", str(ws), bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1
    assert main(["articles", "-w", str(tmp_path / "nowhere")]) == 2
    assert "not a skillrag workspace" in capsys.readouterr().err


def test_malformed_ingest_exit_code_and_message(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.json").write_text("{")
    assert main(["ingest", "-w", str(ws), str(docs)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and err.count("\n") == 1


def test_ingest_of_an_unsupported_file_is_a_one_line_error(tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    (tmp_path / "notes.docx").write_text("zzz")
    capsys.readouterr()
    assert main(["ingest", "-w", str(ws), str(tmp_path / "notes.docx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "unsupported file type" in err and "Traceback" not in err


def test_unwritable_output_path_is_a_one_line_error(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    capsys.readouterr()
    # a folder that cannot be created: its parent is a regular file
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["init", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(blocker) in err
