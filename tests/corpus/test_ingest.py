"""Content layer: each input format, re-ingest diffing, malformed input, atomicity, ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.corpus import ArticleStore, content_hash, ingest
from skillrag.errors import (
    ArticleNotFound,
    EmptyInputError,
    InvalidIdError,
    MalformedSourceError,
    MalformedSourcesError,
    UserError,
)
from skillrag.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace.init(tmp_path / "ws")


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_json_folder_keeps_id_title_and_body_byte_identical(ws, tmp_path):
    body = "# Refunds\r\n\nCurly “quotes” — and\u00a0NBSP.\n\n## Steps\n1. Do it.\n"
    write(tmp_path / "docs" / "a.json", json.dumps({"id": "doc_a_(x)+1", "title": "Refunds", "content": body}))
    rep = ingest(ws, [tmp_path / "docs"])
    assert rep.counts() == {"added": 1, "changed": 0, "unchanged": 0, "removed": 0, "rejected": 0}
    art = ArticleStore(ws).get("doc_a_(x)+1")
    assert art.body == body
    assert art.title == "Refunds"
    assert art.content_hash == content_hash(body)
    assert art.source_path == "a.json"
    assert [s.heading for s in art.sections] == ["Refunds", "Steps"]
    assert art.section("steps") == "## Steps\n1. Do it.\n"


def test_json_file_with_a_list_and_jsonl(ws, tmp_path):
    write(tmp_path / "src" / "many.json", json.dumps([
        {"id": "a1", "title": "A1", "content": "alpha"},
        {"id": "a2", "title": "A2", "content": "beta"},
    ]))
    write(tmp_path / "src" / "more.jsonl", '{"id": "b1", "title": "B1", "content": "gamma"}\n\n'
          '{"id": "b2", "title": "B2", "content": "delta"}\n')
    rep = ingest(ws, [tmp_path / "src"])
    assert sorted(rep.added) == ["a1", "a2", "b1", "b2"]
    assert ArticleStore(ws).get("b2").body == "delta"


def test_markdown_front_matter_and_first_heading(ws, tmp_path):
    md = "---\nid: kb-returns\ntitle: Returns policy\ntag: policies\n---\n# Ignored heading\n\nBody text.\n"
    write(tmp_path / "hc" / "policies" / "returns.md", md)
    write(tmp_path / "hc" / "guides" / "setup.md", "Intro line\n\n# Setting up\n\nText.\n")
    write(tmp_path / "hc" / "notes.txt", "plain text note\n")
    ingest(ws, [tmp_path / "hc"])
    store = ArticleStore(ws)
    a = store.get("kb-returns")
    assert a.title == "Returns policy"
    assert a.body == "# Ignored heading\n\nBody text.\n"  # everything after the front matter, byte for byte
    assert a.source_tag == "policies"
    b = store.get("guides__setup")
    assert b.title == "Setting up"
    assert b.source_tag == "hc"
    assert store.get("notes").title == "notes"


def test_html_is_converted_to_markdown(ws, tmp_path):
    html = ("<html><head><title>Damage claims</title><meta name=\"article-id\" content=\"kb-damage\"></head>"
            "<body><h1>Damage claims</h1><p>Open a claim with <code>open_damage_claim</code>.</p>"
            "<h2>Steps</h2><ol><li>Ask for photos</li><li>Submit</li></ol></body></html>")
    write(tmp_path / "web" / "damage.html", html)
    ingest(ws, [tmp_path / "web"])
    art = ArticleStore(ws).get("kb-damage")
    assert art.title == "Damage claims"
    assert "# Damage claims" in art.body and "## Steps" in art.body
    assert "1. Ask for photos" in art.body
    assert "<p>" not in art.body


def test_reingest_unchanged_changed_removed(ws, tmp_path):
    d = tmp_path / "docs"
    for i in range(3):
        write(d / f"{i}.json", json.dumps({"id": f"d{i}", "title": f"T{i}", "content": f"body {i}"}))
    ingest(ws, [d])
    before = ArticleStore(ws).get("d0")
    again = ingest(ws, [d])
    assert again.counts()["unchanged"] == 3 and again.counts()["added"] == 0
    write(d / "1.json", json.dumps({"id": "d1", "title": "T1", "content": "body 1, revised"}))
    (d / "2.json").unlink()
    rep = ingest(ws, [d])
    assert rep.changed == ["d1"] and rep.removed == ["d2"] and rep.unchanged == ["d0"]
    store = ArticleStore(ws)
    assert store.get("d1").changed is True
    assert store.get("d1").body == "body 1, revised"
    with pytest.raises(ArticleNotFound):
        store.get("d2")
    assert store.get("d2", include_removed=True).status == "removed"
    assert store.get("d0") == before  # untouched
    assert sorted(a.id for a in store.list()) == ["d0", "d1"]
    # coming back re-activates it
    write(d / "2.json", json.dumps({"id": "d2", "title": "T2", "content": "body 2"}))
    assert ingest(ws, [d]).changed == ["d2"]


def test_other_roots_are_not_marked_removed(ws, tmp_path):
    write(tmp_path / "a" / "x.json", json.dumps({"id": "x", "title": "X", "content": "x"}))
    write(tmp_path / "b" / "y.json", json.dumps({"id": "y", "title": "Y", "content": "y"}))
    ingest(ws, [tmp_path / "a"])
    rep = ingest(ws, [tmp_path / "b"])
    assert rep.removed == []
    assert ArticleStore(ws).count() == 2


@pytest.mark.parametrize(
    "name, content, needle",
    [
        ("bad.json", "{not json", "invalid JSON"),
        ("missing.json", json.dumps({"id": "m", "title": "M"}), "missing field(s) content"),
        ("badid.json", json.dumps({"id": "../../etc/passwd", "title": "M", "content": "c"}), "not a plain identifier"),
        ("types.json", json.dumps({"id": "t", "title": 3, "content": "c"}), "must be strings"),
        ("latin.md", "caf\xe9 au lait".encode("latin-1"), "not UTF-8"),
        ("lines.jsonl", '{"id": "ok", "title": "t", "content": "c"}\n{oops\n', "line 2"),
        ("fm.md", "---\nid: [unclosed\n---\nbody\n", "front matter is not valid YAML"),
    ],
)
def test_malformed_file_is_named_and_nothing_is_written(ws, tmp_path, name, content, needle):
    d = tmp_path / "docs"
    write(d / "good.json", json.dumps({"id": "good", "title": "G", "content": "fine"}))
    write(d / name, content)
    with pytest.raises(MalformedSourceError) as exc:
        ingest(ws, [d])
    assert name in str(exc.value) and needle in str(exc.value)
    assert "\n" not in str(exc.value)
    assert ArticleStore(ws).count() == 0  # atomic: the good file was not written either


def test_skip_bad_rejects_and_ingests_the_rest(ws, tmp_path):
    d = tmp_path / "docs"
    write(d / "good.json", json.dumps({"id": "good", "title": "G", "content": "fine"}))
    write(d / "bad.json", "{")
    rep = ingest(ws, [d], skip_bad=True)
    assert rep.added == ["good"]
    assert len(rep.rejected) == 1 and "bad.json" in rep.rejected[0]


def test_duplicate_ids_across_files_are_rejected(ws, tmp_path):
    d = tmp_path / "docs"
    write(d / "a.json", json.dumps({"id": "same", "title": "A", "content": "a"}))
    write(d / "b.json", json.dumps({"id": "same", "title": "B", "content": "b"}))
    with pytest.raises(MalformedSourceError, match="duplicate id 'same'"):
        ingest(ws, [d])


@pytest.mark.parametrize("name, text", [
    ("list.json", json.dumps([{"id": "q", "title": "1", "content": "one one"}, {"id": "q", "title": "2", "content": "two"}])),
    ("lines.jsonl", '{"id": "q", "title": "1", "content": "one one"}\n{"id": "q", "title": "2", "content": "two"}\n'),
])
def test_duplicate_ids_inside_one_file_are_rejected(ws, tmp_path, name, text):
    """Found by a new user: one id twice in a JSON list or a JSONL file kept the last record silently."""
    d = tmp_path / "docs"
    write(d / name, text)
    with pytest.raises(MalformedSourceError, match=r"duplicate id 'q' \(twice in this file\)"):
        ingest(ws, [d])


def test_empty_and_missing_inputs(ws, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmptyInputError):
        ingest(ws, [tmp_path / "empty"])
    with pytest.raises(UserError, match="no such file"):
        ingest(ws, [tmp_path / "nope"])


def test_an_explicit_file_of_an_unsupported_type_is_a_user_error(ws, tmp_path):
    # regression: `skillrag ingest notes.docx` died on an AssertionError traceback
    (tmp_path / "notes.docx").write_text("zzz")
    with pytest.raises(UserError, match=r"unsupported file type '\.docx' \(readable: .*\.md"):
        ingest(ws, [tmp_path / "notes.docx"])
    assert ArticleStore(ws).list() == []


@pytest.mark.parametrize("bad", ["../../etc/passwd", "a/b", "", "..", "x y", "-lead"])
def test_bad_ids_are_rejected_before_lookup(ws, bad):
    with pytest.raises(InvalidIdError):
        ArticleStore(ws).get(bad)


@pytest.mark.shared
def test_tau2_documents_ingest_byte_identical_and_idempotent(tmp_path, tau2_dir):
    ws = Workspace.init(tmp_path / "ws")
    docs = tau2_dir / "documents"
    rep = ingest(ws, [docs])
    assert len(rep.added) == 698
    store = ArticleStore(ws)
    for f in sorted(docs.glob("*.json")):
        src = json.loads(f.read_text(encoding="utf-8"))
        assert store.get(src["id"]).body == src["content"]
    again = ingest(ws, [docs])
    assert again.counts() == {"added": 0, "changed": 0, "unchanged": 698, "removed": 0, "rejected": 0}


@pytest.mark.parametrize("name,content", [
    ("blank.md", "\n  \n"),
    ("fm_only.md", "---\ntitle: Placeholder\n---\n"),
    ("empty.json", json.dumps({"id": "e1", "title": "E", "content": " "})),
])
def test_an_article_without_text_is_rejected(ws, tmp_path, name, content):
    # regression: an empty .md became an article (and a wiki page) with no text to quote
    d = tmp_path / "kb"
    d.mkdir()
    (d / name).write_text(content)
    (d / "ok.md").write_text("# Ok\n\nSome text.\n")
    with pytest.raises(MalformedSourceError, match="has no text"):
        ingest(ws, [d])
    assert ArticleStore(ws).list() == []
    report = ingest(ws, [d], skip_bad=True)
    assert report.added == ["ok"] and len(report.rejected) == 1


def test_missing_field_error_names_the_expected_shape_and_the_unknown_keys(ws, tmp_path):
    # a first-time user writes "body" instead of "content"; the error says what was expected
    write(tmp_path / "kb" / "a.json", json.dumps([{"id": "a", "title": "A", "body": "text"}]))
    with pytest.raises(MalformedSourceError) as exc:
        ingest(ws, [tmp_path / "kb"])
    msg = str(exc.value)
    assert "item 0: missing field(s) content" in msg and '{"id", "title", "content"}' in msg and "'body'" in msg


def test_a_single_file_gets_its_folder_name_as_tag(ws, tmp_path):
    # regression: `skillrag ingest kb/a.md` tagged the article "a.md" (help: default is the folder name)
    d = tmp_path / "policies"
    d.mkdir()
    (d / "a.md").write_text("# A\n\nText.\n")
    ingest(ws, [d / "a.md"])
    assert ArticleStore(ws).get("a").source_tag == "policies"


def test_an_id_taken_by_another_source_is_rejected_not_overwritten(ws, tmp_path):
    # regression: ingesting folder b with an id already ingested from folder a silently replaced a's article
    write(tmp_path / "a" / "p.md", "---\nid: kb-1\n---\n# Original\n\nthe original text\n")
    write(tmp_path / "b" / "q.md", "---\nid: kb-1\n---\n# Impostor\n\nother text\n")
    write(tmp_path / "b" / "r.md", "# R\n\nfine\n")
    ingest(ws, [tmp_path / "a"])
    with pytest.raises(MalformedSourceError, match=r"duplicate id 'kb-1' \(already ingested from .*p\.md; rename"):
        ingest(ws, [tmp_path / "b"])
    store = ArticleStore(ws)
    assert store.get("kb-1").title == "Original" and store.count() == 1  # nothing written
    rep = ingest(ws, [tmp_path / "b"], skip_bad=True)
    assert rep.added == ["r"] and len(rep.rejected) == 1 and store.get("kb-1").title == "Original"
    # the same file ingested on its own (another root) is not a clash; neither is a moved folder
    assert ingest(ws, [tmp_path / "a" / "p.md"]).unchanged == ["kb-1"]
    (tmp_path / "a").rename(tmp_path / "a2")
    assert ingest(ws, [tmp_path / "a2"]).unchanged == ["kb-1"]


def test_an_id_from_a_file_name_turns_white_space_into_hyphens(ws, tmp_path):
    d = tmp_path / "docs"
    write(d / "pool hours.txt", "Open 6-22.\n")
    write(d / "sub" / "sauna  rules\u00a0v2.md", "# Sauna\nNo towels on the stove.\n")
    write(d / "sub" / "sauna.md", "# Sauna\nTen minutes at most.\n")
    write(d / "front matter.md", "---\nid: fm_id\n---\nBody.\n")
    write(d / "opening times.html", "<html><body><p>Nine to five.</p></body></html>")
    rep = ingest(ws, [d])
    assert sorted(rep.added) == ["fm_id", "opening-times", "pool-hours", "sub__sauna", "sub__sauna-rules-v2"]
    assert ArticleStore(ws).get("pool-hours").source_path == "pool hours.txt"


def test_an_id_given_in_json_or_front_matter_keeps_its_white_space_and_is_rejected(ws, tmp_path):
    write(tmp_path / "j" / "a.json", json.dumps({"id": "pool hours", "title": "P", "content": "c"}))
    with pytest.raises(MalformedSourceError) as exc:
        ingest(ws, [tmp_path / "j"])
    msg = str(exc.value)
    assert "a.json" in msg and "id 'pool hours' is not a plain identifier" in msg
    assert "letters, digits and _ . - + ( ) :" in msg and "section ids" not in msg
    write(tmp_path / "m" / "b.md", "---\nid: pool hours\n---\nBody.\n")
    with pytest.raises(MalformedSourceError, match="id 'pool hours' is not a plain identifier"):
        ingest(ws, [tmp_path / "m"])
    write(tmp_path / "h" / "sec.json", json.dumps({"id": "doc#part", "title": "P", "content": "c"}))
    with pytest.raises(MalformedSourceError, match="`#` is kept for section ids"):
        ingest(ws, [tmp_path / "h"])


def test_a_file_name_that_gives_no_valid_id_names_the_file_and_the_allowed_characters(ws, tmp_path):
    write(tmp_path / "docs" / "pool?hours.txt", "Open.\n")
    with pytest.raises(MalformedSourceError) as exc:
        ingest(ws, [tmp_path / "docs"])
    msg = str(exc.value)
    assert msg.startswith(str(tmp_path / "docs" / "pool?hours.txt") + ": ")
    assert "the id taken from the file name, 'pool?hours', is not a plain identifier" in msg
    assert "letters, digits and _ . - + ( ) :" in msg and "rename the file" in msg and "front matter" in msg
    assert "section ids" not in msg


def test_every_bad_file_is_named_in_one_error_and_nothing_is_written(ws, tmp_path):
    d = tmp_path / "docs"
    write(d / "a_good.json", json.dumps({"id": "good", "title": "G", "content": "fine"}))
    for name in ["b1.json", "b2.json", "b3.json", "b4.json", "b5.json"]:
        write(d / name, "{")
    with pytest.raises(MalformedSourcesError) as exc:
        ingest(ws, [d])
    msg = str(exc.value)
    assert msg.startswith("5 bad source files, nothing written (--skip-bad ingests the rest): ")
    assert all(f"b{i}.json: invalid JSON" in msg for i in (1, 2, 3)) and "b4.json" not in msg
    assert msg.endswith("; and 2 more") and "\n" not in msg
    assert [e.path for e in exc.value.errors] == [str(d / f"b{i}.json") for i in range(1, 6)]
    assert isinstance(exc.value, MalformedSourceError) and exc.value.path == str(d / "b1.json")
    assert ArticleStore(ws).count() == 0
    rep = ingest(ws, [d], skip_bad=True)  # the same files with --skip-bad: the good one goes in
    assert rep.added == ["good"] and len(rep.rejected) == 5


def test_a_parse_error_and_an_id_clash_are_named_together(ws, tmp_path):
    write(tmp_path / "a" / "p.md", "---\nid: kb-1\n---\n# Original\n")
    ingest(ws, [tmp_path / "a"])
    write(tmp_path / "b" / "q.md", "---\nid: kb-1\n---\n# Impostor\n")
    write(tmp_path / "b" / "bad.json", "{")
    write(tmp_path / "b" / "r.md", "# R\n\nfine\n")
    with pytest.raises(MalformedSourcesError) as exc:
        ingest(ws, [tmp_path / "b"])
    msg = str(exc.value)
    assert msg.startswith("2 bad source files") and "bad.json: invalid JSON" in msg and "duplicate id 'kb-1'" in msg
    store = ArticleStore(ws)
    assert store.count() == 1 and store.get("kb-1").title == "Original"  # nothing written, r.md neither


def test_a_single_bad_file_keeps_its_own_error(ws, tmp_path):
    write(tmp_path / "docs" / "bad.json", "{")
    with pytest.raises(MalformedSourceError) as exc:
        ingest(ws, [tmp_path / "docs"])
    assert type(exc.value) is MalformedSourceError and str(exc.value).startswith(str(tmp_path / "docs" / "bad.json"))


def test_a_workspace_inside_its_documents_folder_never_ingests_its_own_files(tmp_path):
    """Found by a new user: `skillrag init .` in the docs folder then `ingest .` stored the installed
    skills' SKILL.md as help-center articles, and after `wiki build` the next ingest failed on
    wiki/manifest.json. The workspace's own folders are never sources; a folder inside one, named on
    purpose, still is."""
    from skillrag.cli.main import main
    from skillrag.corpus import count_files

    docs = tmp_path / "docs"
    ws = Workspace.init(docs)
    (docs / "pool.md").write_text("# Pool hours\n\nThe pool opens at 6 am.\n", encoding="utf-8")
    (ws.skills_dir / "cs-guidance").mkdir()
    (ws.skills_dir / "cs-guidance" / "SKILL.md").write_text("# Manual\n\nCall load_case first.\n", encoding="utf-8")
    (ws.wiki_dir / "manifest.json").write_text(json.dumps({"pages": []}), encoding="utf-8")
    (ws.runs_dir / "c1").mkdir()
    (ws.runs_dir / "c1" / "output.json").write_text(json.dumps({"case_id": "c1"}), encoding="utf-8")
    assert count_files([docs], ws.owned_dirs) == 1 and count_files([docs]) == 4
    rep = ingest(ws, [docs])
    assert [a.id for a in ArticleStore(ws).list()] == ["pool"] and not rep.rejected
    assert ingest(ws, [docs]).unchanged == ["pool"]  # and again, after the layer wrote its files
    notes = ws.skills_dir / "cs-guidance" / "references"
    notes.mkdir()
    (notes / "tone.md").write_text("# Tone\n\nBe brief.\n", encoding="utf-8")
    assert main(["ingest", str(notes), "-w", str(docs)]) == 0  # named on purpose: read
    assert "tone" in {a.id for a in ArticleStore(ws).list()}


# regression (issue 21, class 6): ingest followed a file symlink out of the source folder, and a link to
# the system's password file became a readable article
def test_no_symbolic_link_out_of_the_source_folder_is_read(ws, tmp_path):
    outside = write(tmp_path / "elsewhere" / "passwd.md", "# Secrets\n\nroot:x:0:0:root:/root:/bin/bash\n")
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Card fees\n\nThe annual fee is $95.\n")
    (docs / "passwd.md").symlink_to(outside)
    (docs / "again.md").symlink_to(docs / "a.md")  # a link to a file inside the folder is read
    (docs / "more").symlink_to(outside.parent, target_is_directory=True)  # folder links are not followed
    with pytest.raises(MalformedSourceError) as ei:
        ingest(ws, [docs])
    msg = str(ei.value)
    assert "passwd.md" in msg and "symbolic link" in msg and "outside the source folder" in msg and "\n" not in msg
    assert ArticleStore(ws).count() == 0  # nothing written
    rep = ingest(ws, [docs], skip_bad=True)
    assert sorted(rep.added) == ["a", "again"] and len(rep.rejected) == 1
    assert not any("root:x:0:0" in a.body for a in ArticleStore(ws).list())
    assert ArticleStore(ws).get("again").body == ArticleStore(ws).get("a").body
    assert ingest(ws, [docs / "passwd.md"]).added == ["passwd"]  # a file named on the command line is read as named
