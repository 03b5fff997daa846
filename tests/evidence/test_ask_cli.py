"""`skillrag ask` through the CLI entry point, over a real workspace holding the fixture corpus."""

import json

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.workspace import Workspace

from .conftest import FIXTURE


@pytest.fixture
def ws(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for aid, title, body in FIXTURE:
        (src / f"{aid}.md").write_text(f"---\ntitle: {json.dumps(title)}\n---\n{body}", encoding="utf-8")
    w = Workspace.init(tmp_path / "ws")
    ingest(w, [src])
    return w


def test_json_answer_for_a_conflict(ws, capsys):
    rc = main(
        ["ask", "What is the late fee of Acme Bank's Gold Card?", "-w", str(ws.root), "--json", "--no-index"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    data = json.loads(out)
    assert data["final_state"] == "CONCLUDED" and data["risk_signal"] == "conflict"
    assert data["harness"] == "extractive" and "extractive fallback" in data["note"]
    assert [t["state"] for t in data["record"]["path"]][-1] == "CONCLUDED"
    assert all(t["at"] for t in data["record"]["path"])
    assert data["record"]["steps"][1]["detail"]["search_index"].startswith("not used (--no-index)")
    saved = list((ws.runs_dir / "ask").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["conflicts"] == data["conflicts"]


def test_readable_answer_for_an_absent_subject(ws, capsys, tmp_path):
    out_file = tmp_path / "answer.json"
    rc = main(
        ["ask", "Does Acme Bank offer a Titanium Card?", "-w", str(ws.root), "--out", str(out_file), "--no-index"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("Conclusion: Not found")
    assert "sufficient: false" in out and "risk: subject_not_found" in out
    assert "search index: not used (--no-index)" in out
    assert "path: INIT → SUBJECT_CLASS_IDENTIFIED → CANDIDATE_SUBJECT_DISCOVERED → SUBJECT_NOT_FOUND" in out
    assert json.loads(out_file.read_text())["final_state"] == "SUBJECT_NOT_FOUND"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "  "], "error: the question is empty"),
        (["ask", "What?", "--skill", "nope"], "error: no skill named 'nope'"),
        (["ask", "What?", "--harness", "llm"], "error: the llm harness needs a model"),
        (["ask", "What?", "--harness", "magic"], "error: unknown harness 'magic'"),
        (
            ["ask", "What?", "--harness", "extractive", "--model", "test"],
            "error: --model runs the llm harness",
        ),
    ],
)
def test_bad_input_is_one_error_line(ws, capsys, args, message):
    rc = main([*args, "-w", str(ws.root)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(message) and err.count("\n") == 1
    assert not (ws.runs_dir / "ask").exists()  # nothing written


def test_empty_workspace_is_an_error(tmp_path, capsys):
    w = Workspace.init(tmp_path / "empty")
    assert main(["ask", "What is the fee of Acme Bank's Gold Card?", "-w", str(w.root)]) == 2
    assert "holds no articles" in capsys.readouterr().err


def test_llm_harness_with_a_model_that_never_fits_the_question_fails_cleanly(ws, capsys):
    # pydantic-ai's TestModel fills the schema with placeholder text: the subject check refuses it
    rc = main(
        ["ask", "What is the late fee of Acme Bank's Gold Card?", "-w", str(ws.root), "--model", "test",
         "--no-index"]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("error: test: no valid SubjectClass after 3 tries")


def test_ask_with_the_real_search_index_and_a_scripted_model(ws):
    from pydantic_ai.messages import SystemPromptPart

    from skillrag.evidence import State, ask
    from skillrag.evidence.testing import scripted_llm_steps
    from skillrag.models.testing import ScriptedModel
    from skillrag.search import build_index, open_retriever
    from skillrag.search.testing import HashEmbedder

    build_index(ws, backend="direct", embedder=HashEmbedder())
    retriever = open_retriever(ws, backend="direct", mode="hybrid", embedder=HashEmbedder())
    model = ScriptedModel(
        scripted_llm_steps(
            {
                "type": "credit_card",
                "name": "Gold Card",
                "parent_entity": "Acme Bank",
                "attribute": "annual fee",
            },
            [
                {
                    "name": "Gold Card",
                    "article_id": "acme-gold-annual",
                    "name_quote": "Acme Bank bills the Gold Card annual fee of $95 once a year.",
                    "parent_quote": "Acme Bank bills the Gold Card",
                }
            ],
            [
                {
                    "article_id": "acme-gold-annual",
                    "text": "Acme Bank bills the Gold Card annual fee of $95 once a year.",
                    "subject": "Gold Card",
                }
            ],
            {
                "conclusion": "The annual fee is $95 [0].",
                "answered": True,
                "claims": [{"evidence_index": 0, "attribute": "annual fee", "value": "$95"}],
            },
        )
    )
    ans = ask(
        ws,
        "What is the annual fee of Acme Bank's Gold Card?",
        harness="llm",
        model=model,
        retriever=retriever,
    )
    assert ans.final_state == State.CONCLUDED and ans.harness == "llm"
    assert ans.model == "function:scripted"
    gate, retrieval = ans.record.steps[1], ans.record.steps[2]
    assert gate.queries == ["Gold Card Acme Bank"] and "acme-gold-annual" in gate.articles
    assert retrieval.queries == ["Gold Card annual fee"]  # every query names the candidate
    assert set(retrieval.articles) <= set(ans.candidates[0].article_ids)
    system = "".join(p.content for p in model.requests[0][0].parts if isinstance(p, SystemPromptPart))
    assert "Evidence-first answers" in system  # the evidence-qa SKILL.md is the model's manual
    # the model cited one article; code found the other one that states the fee (same value)
    found = [u for u in ans.evidence if u.why.startswith("found by code")]
    assert [u.article_id for u in found] == ["acme-gold-terms"]
    assert (ans.confidence, ans.sufficient) == ("high", True)


def test_readable_answer_lists_both_banks_for_an_implicit_parent(tmp_path, capsys):
    from .conftest import BANKS

    src = tmp_path / "banks"
    src.mkdir()
    for aid, title, body in BANKS:
        (src / f"{aid}.md").write_text(f"---\ntitle: {json.dumps(title)}\n---\n{body}", encoding="utf-8")
    w = Workspace.init(tmp_path / "bws")
    ingest(w, [src])
    rc = main(["ask", "What is the annual fee of the Gold Rewards Card?", "-w", str(w.root), "--no-index"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "sufficient: false" in out and "risk: ambiguous_subject" in out
    assert "Gold Rewards Card (Brightwater Bank) — 2 article(s)" in out
    assert "Gold Rewards Card (Harbor Bank) — 2 article(s)" in out
    assert "Conflicts (not arbitrated):" in out


def test_a_missing_index_is_the_usual_one_line_error_not_a_silent_name_scan(ws, capsys):
    # the default backend (wiki) has no navigation layer and no index here: `ask` used to answer
    # from an exact-name scan without saying so
    rc = main(["ask", "What is the annual fee of Acme Bank's Gold Card?", "-w", str(ws.root)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: ") and "no navigation layer" in err and "skillrag ask --no-index" in err
    assert not (ws.runs_dir / "ask").exists()


def test_an_index_built_with_other_settings_is_refused(ws):
    from skillrag.errors import IndexStateError
    from skillrag.evidence import ask
    from skillrag.search import build_index
    from skillrag.search.testing import HashEmbedder

    ws.config_path.write_text(ws.config_path.read_text().replace("backend: wiki", "backend: direct"))
    w = Workspace.open(ws.root)
    build_index(w, backend="direct", embedder=HashEmbedder())  # not the configured embedder
    with pytest.raises(IndexStateError, match=r"built with embedder .*skillrag ask --no-index"):
        ask(w, "What is the annual fee of Acme Bank's Gold Card?")
    named = ask(w, "What is the annual fee of Acme Bank's Gold Card?", use_index=False)
    assert named.record.steps[1].detail["search_index"].startswith("not used (--no-index)")
