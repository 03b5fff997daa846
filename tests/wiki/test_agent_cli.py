"""The agent build through the CLI and the exported wiki-maintainer scripts: a scripted agent that
only runs the scripts builds the layer, which then searches, exports, audits and rebuilds like any."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.wiki import Layer, audit_structure, load_pages
from skillrag.wiki.testing import ScriptedPageModel


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def script(folder, name, *args):
    return subprocess.run([sys.executable, str(folder / "scripts" / f"{name}.py"), *args], capture_output=True, check=False,
                          text=True, timeout=300)


@pytest.mark.slow
def test_a_scripted_agent_builds_the_layer_with_the_exported_scripts(ws, tmp_path, capsys, corpus_dir,
                                                                     write_articles, articles):
    w = str(ws.root)
    ws.config_path.write_text(ws.config_path.read_text().replace("embedder: minilm-int8", "embedder: hash"))
    rc, out, _ = run(capsys, "wiki", "build", "--builder", "agent", "-w", w, "--export", str(tmp_path / "agents"))
    folder = tmp_path / "agents" / "wiki-maintainer"
    assert rc == 0 and "6 of 6 articles and 1 aspect pages to write" in out
    assert f"give each agent this folder: {folder}" in out
    rc, out, _ = run(capsys, "skill", "check", str(folder))
    assert rc == 0 and "conforms" in out
    manual = (folder / "SKILL.md").read_text()
    assert "scripts/write_page.py" in manual and "variant `full`; it covers every article" in manual
    # the agent: only the exported scripts; its first draft for each article is wrong once
    player = ScriptedPageModel(ws, invalid_first={"doc_cards_gold_002": "uncited"})
    written, rejected = [], []
    for _ in range(20):
        r = script(folder, "next", "--agent", "cli-1", "--json")
        assert r.returncode == 0, r.stderr
        task = json.loads(r.stdout)["task"]
        if task is None:
            break
        draft = tmp_path / "draft.json"
        draft.write_text(json.dumps(player.answer(task["prompt"])))
        r = script(folder, "write_page", str(draft), "--claim", task["claim"])
        if r.returncode == 1:
            rejected.append(r.stderr)
            continue
        assert r.returncode == 0, r.stderr
        written.append(task["key"])
    assert sorted(written) == sorted([*articles, "aspect:overview"])
    assert len(rejected) == 1
    lines = rejected[0].splitlines()
    assert lines[0].startswith("error: page rejected: 2 reasons (claim c-") and "is kept" in lines[0]
    assert "  - no step links to the article being processed (doc_cards_gold_002)" in lines
    r = script(folder, "status", "--json")
    st = json.loads(r.stdout)
    assert st["complete"] and st["rejected"] == 1 and st["agents"]["cli-1"]["articles"] == 6
    r = script(folder, "finish")
    assert r.returncode == 0 and "structural audit PASS" in r.stdout, r.stdout + r.stderr
    assert {p.builder for p in load_pages(ws)} == {"agent"}
    r = script(folder, "status", "--json")  # after finish: what the finished build recorded
    st = json.loads(r.stdout)
    assert r.returncode == 0 and st["state"] == "finished" and st["agents"]["cli-1"]["articles"] == 6
    # a normal layer: audit, index, search, skill export
    rc, out, _ = run(capsys, "wiki", "audit", "-w", w)
    assert rc == 0 and "PASS" in out and "6/6" in out
    rc, out, err = run(capsys, "index", "-w", w)
    assert rc == 0, err
    rc, out, _ = run(capsys, "search", "annual fee waived", "-w", w, "--backend", "wiki", "--json")
    res = json.loads(out)
    hits = res["hits"] if isinstance(res, dict) else res
    assert rc == 0 and any(h["article_id"] == "doc_cards_gold_001" for h in hits)
    assert any("gold-card" in h["page_ids"] for h in hits)
    rc, out, _ = run(capsys, "skill", "export", "cs-guidance", str(tmp_path / "cs"), "-w", w)
    assert rc == 0
    # an incremental rebuild after a re-ingest: only the changed article is handed out
    arts = dict(articles)
    arts["doc_disputes_001"] = (arts["doc_disputes_001"][0], arts["doc_disputes_001"][1] + "\nCall within a week.\n")
    write_articles(corpus_dir, arts)
    ingest(ws, [corpus_dir])
    rc, out, _ = run(capsys, "wiki", "build", "--builder", "agent", "-w", w, "--export", str(tmp_path / "agents"))
    assert rc == 0 and "incremental" in out and "1 of 6 articles and 0 aspect pages to write" in out
    rc, out, _ = run(capsys, "wiki", "agent", "next", "--agent", "cli-2", "--json", "-w", w)
    task = json.loads(out)["task"]
    assert task["key"] == "doc_disputes_001" and "disputes" in task["candidates"]
    draft = tmp_path / "d2.json"
    draft.write_text(json.dumps(ScriptedPageModel(ws).answer(task["prompt"])))
    rc, out, _ = run(capsys, "wiki", "agent", "write-page", str(draft), "--claim", task["claim"], "-w", w)
    assert rc == 0 and "accepted: doc_disputes_001 updated topic page disputes" in out
    rc, out, _ = run(capsys, "wiki", "agent", "finish", "-w", w)
    assert rc == 0 and audit_structure(ws).ok and not audit_structure(ws).stale
    assert Layer(ws).manifest().builder == "agent"


def test_next_prints_the_claim_the_commands_and_the_task(ws, capsys):
    w = str(ws.root)
    assert run(capsys, "wiki", "build", "--builder", "agent", "-w", w)[0] == 0
    rc, out, err = run(capsys, "wiki", "agent", "next", "-w", w)
    assert rc == 2 and "--agent NAME" in err
    rc, out, _ = run(capsys, "wiki", "agent", "next", "--agent", "a1", "-w", w)
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("claim: c-") and lines[2] == (
        "task: place article doc_cards_gold_001 on a page (update or create)")
    claim = lines[0].split()[1]
    assert f"  python scripts/write_page.py DRAFT.json --claim {claim}" in lines
    assert "Article to place:\nid: doc_cards_gold_001" in out and "More pages from index.md" in out
    rc, _, err = run(capsys, "wiki", "agent", "write-page", "-", "-w", w)
    assert rc == 2 and "--claim C is required" in err
    rc, out, _ = run(capsys, "wiki", "agent", "release", "--agent", "a1", "-w", w)
    assert rc == 0 and "released 1 claim: doc_cards_gold_001" in out
    rc, out, _ = run(capsys, "wiki", "agent", "finish", "-w", w)
    assert rc == 1 and "6 articles not yet written (0 claimed)" in out
    rc, _, err = run(capsys, "wiki", "build", "--scope", "doc_", "-w", w)
    assert rc == 2 and "only for agent builds" in err
