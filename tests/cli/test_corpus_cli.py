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


HANDBOOK = (
    "# Gym handbook\n\nIntro.\n\n"
    "## Parking\n\n### Overview\nPark in bay B.\n\n### Exceptions\nMembers with a permit park in bay A.\n\n"
    "## Pool\n\n### Overview\nThe pool opens at six.\n"
)


def _handbook_ws(tmp_path):
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gym-handbook.md").write_text(HANDBOOK)
    assert main(["ingest", "-w", str(ws), str(docs)]) == 0
    return ws


def test_article_section_resolves_like_tool_get_article(tmp_path, capsysbinary):
    ws = _handbook_ws(tmp_path)
    capsysbinary.readouterr()
    # by number (sections: 1 Gym handbook, 2 Parking, 3 Overview, 4 Exceptions, 5 Pool, 6 Overview)
    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "4"]) == 0
    assert capsysbinary.readouterr().out == b"### Exceptions\nMembers with a permit park in bay A.\n\n"
    # by heading path (and by any trailing part of it)
    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "Pool > Overview"]) == 0
    assert capsysbinary.readouterr().out == b"### Overview\nThe pool opens at six.\n"
    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "Gym handbook > Parking > Overview",
                 "--json"]) == 0
    data = json.loads(capsysbinary.readouterr().out)
    assert data["text"] == "### Overview\nPark in bay B.\n\n"
    assert data["section"]["index"] == 3 and data["section"]["path"] == "Gym handbook > Parking > Overview"
    # a unique heading, any case
    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "exceptions"]) == 0
    assert capsysbinary.readouterr().out.startswith(b"### Exceptions\n")


def test_article_ambiguous_or_unknown_section_is_refused_with_numbers_and_paths(tmp_path, capsys):
    ws = _handbook_ws(tmp_path)
    capsys.readouterr()
    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "Overview"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing printed: not the first "Overview" silently
    err = captured.err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "2 sections named 'Overview'" in err
    assert "3 (Gym handbook > Parking > Overview)" in err and "6 (Gym handbook > Pool > Overview)" in err

    assert main(["article", "-w", str(ws), "gym-handbook", "--section", "Lockers"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "4 Gym handbook > Parking > Exceptions" in err  # the listing carries numbers and paths


def test_ingest_names_every_bad_file_in_one_line(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.json").write_text(json.dumps({"id": "g", "title": "G", "content": "fine"}))
    (docs / "bad1.json").write_text("{")
    (docs / "bad2.md").write_bytes(b"caf\xe9")
    capsys.readouterr()
    assert main(["ingest", "-w", str(ws), str(docs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 2 bad source files, nothing written") and err.count("\n") == 1
    assert "bad1.json: invalid JSON" in err and "bad2.md: not UTF-8" in err
    assert main(["articles", "-w", str(ws), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_articles_table_never_cuts_an_id(tmp_path, capsys):
    ws = tmp_path / "ws"
    main(["init", str(ws)])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gym-handbook.md").write_text(
        "# Gym handbook\n\nIntro.\n\n## Accessibility and changing rooms for members\nRamps at both doors.\n\n"
        "## Parking\nBay B.\n")
    assert main(["ingest", "-w", str(ws), str(docs), "--split-sections"]) == 0
    capsys.readouterr()
    assert main(["articles", "-w", str(ws)]) == 0
    out = capsys.readouterr().out
    long_id = "gym-handbook#accessibility-and-changing-rooms-for-members"
    assert any(long_id in line for line in out.splitlines()), out  # whole, on one line
    assert "gym-handbook#acc" not in out.replace(long_id, "")  # never cut ("gym-handbook#acce…")
    assert "active" in out  # the other columns fold or shrink instead
