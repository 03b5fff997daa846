"""`skillrag tool ...` as an agent uses it: each command is a separate call (a new SkillTools, as a new
process would be), so budgets live in the workspace store; case attribution, refusal lines, filters,
pages, the article header, --check and warnings."""

from __future__ import annotations

import json

import pytest

from skillrag.cli.main import main
from skillrag.skill import BudgetLedger
from skillrag.skill.budget import refusal
from skillrag.skill.testing import make_output
from skillrag.skill.views import BODY_RULE


def _out(capsys):
    cap = capsys.readouterr()
    return cap.out, cap.err


@pytest.fixture
def run(wiki_ws, cases_path, capsys, monkeypatch):
    monkeypatch.delenv("SKILLRAG_CASE", raising=False)

    def call(*args):
        code = main(["tool", *args, "-w", str(wiki_ws.root)])
        out, err = _out(capsys)
        return code, out, err

    call.cases = ["--cases", str(cases_path)]
    return call


def test_budgets_persist_across_calls_and_refuse_with_one_line(run, wiki_ws):
    code, out, _ = run("load-case", "case_1", *run.cases)
    assert code == 0 and json.loads(out)["budget"] == {"counted": "after this call", "queries_left": 5, "queries_used": 0,
                                                       "fetches_left": 12, "fetches_used": 0, "saves_left": 4, "saves_used": 0}
    for i in range(5):
        code, out, err = run("retrieve", f"gold card {i}", "--case", "case_1")
        assert code == 0, err
        assert json.loads(out)["budget"]["queries_left"] == 4 - i
    code, out, err = run("retrieve", "gold card again", "--case", "case_1")
    state = BudgetLedger(wiki_ws).current("case_1", "cs-guidance")
    assert code == 2 and out == "" and err == f"error: {refusal('query', state)}\n"
    code, out, err = run("retrieve", "--page", "cards-gold", "--case", "case_1")  # a page read is a query
    assert code == 2 and "query budget spent" in err
    # re-reading the case continues its session: nothing is reset
    code, out, _ = run("load-case", "case_1", *run.cases)
    assert json.loads(out)["budget"]["queries_left"] == 0
    # regression (issue 21, class 3): --new-session gave the spent case a fresh budget; it never resets one
    code, out, err = run("load-case", "case_1", "--new-session", *run.cases)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: case 'case_1' is still open (queries 5 of 5, fetches 0 of 12, saves 0 of 4 used)")
    assert BudgetLedger(wiki_ws).current("case_1", "cs-guidance").queries == 5


def test_calls_without_a_case_go_to_the_one_open_case(run, monkeypatch):
    code, _, err = run("retrieve", "gold card")
    assert code == 2 and "which case is this call for? call load_case CASE_ID first" in err
    run("load-case", "case_1", *run.cases)
    code, out, _ = run("retrieve", "gold card")
    assert code == 0 and json.loads(out)["case_id"] == "case_1"
    run("load-case", "case_2", *run.cases)
    code, _, err = run("get-article", "art_fees")
    assert code == 2 and "several cases are open" in err and "--case CASE_ID" in err
    monkeypatch.setenv("SKILLRAG_CASE", "case_2")
    code, out, _ = run("get-article", "art_fees", "--json")
    assert code == 0 and json.loads(out)["budget"]["fetches_left"] == 11
    code, out, _ = run("get-article", "art_fees", "--json", "--case", "case_1")  # the option wins
    assert json.loads(out)["budget"]["fetches_left"] == 11


def test_retrieve_filters_pages_and_page_read(run):
    run("load-case", "case_1", *run.cases)
    code, out, _ = run("retrieve", "card fee replacement", "--case", "case_1", "--id-prefix", "doc_cards_gold_")
    data = json.loads(out)
    assert {h["article_id"] for h in data["hits"]} == {"doc_cards_gold_001", "doc_cards_gold_002"}
    assert data["filters"] == {"id_prefixes": ["doc_cards_gold_"]}
    assert data["pages"][0]["page_id"] == "cards-gold" and data["hits"][0]["relevance"] == 1.0
    code, out, _ = run("retrieve", "disputes credit", "--case", "case_1", "--title-prefix", "Internal:")
    assert [h["article_id"] for h in json.loads(out)["hits"]] == ["doc_cards_(general)_010"]
    code, out, _ = run("retrieve", "approver payments", "--case", "case_1", "--title-contains", "WIRE transfers")
    data = json.loads(out)
    assert [h["article_id"] for h in data["hits"]] == ["art_other"]  # "Internal wire transfers"
    assert data["filters"] == {"title_contains": ["WIRE transfers"]}
    code, out, _ = run("retrieve", "card", "--case", "case_1", "--tag", "nope")
    assert code == 0 and json.loads(out)["hits"] == []
    code, out, _ = run("retrieve", "--page", "cards-gold", "--case", "case_1")
    page = json.loads(out)
    assert page["page"]["page_id"] == "cards-gold" and page["budget"]["queries_left"] == 0
    assert {"procedure", "articles", "intent", "kind"} <= set(page["page"])
    code, _, err = run("retrieve", "x", "--page", "cards-gold", "--case", "case_1")
    assert code == 2 and "either a QUERY or --page" in err


def test_get_article_header_json_and_quoted_ids(run, wiki_ws):
    run("load-case", "case_1", *run.cases)
    code, out, _ = run("get-article", "doc_cards_(general)_010", "--case", "case_1")
    head, body = out.split(BODY_RULE + "\n")
    assert head.startswith("id: doc_cards_(general)_010\ntitle: Internal: card disputes\n")
    assert "    2. Provisional credit" in head and body.startswith("# Disputes")
    code, out, _ = run("get-article", "doc_cards_gold_001", "--section", "2", "--json", "--case", "case_1")
    data = json.loads(out)
    assert data["part"] == "section:2" and "$40" in data["body"] and data["sections"][1]["start"] == data["offset"]
    code, _, err = run("get-article", "doc_cards_gold_001", "--section", "Fees", "--case", "case_1")
    assert code == 2 and "has 2 sections named 'Fees'" in err


def test_a_re_read_says_it_is_free_and_spends_nothing(run):
    run("load-case", "case_1", *run.cases)
    code, out, _ = run("get-article", "doc_cards_gold_001", "--section", "1", "--case", "case_1")
    assert "\ncost: 1 fetch (the first read of this article in this case; reading it again is free)\n" in out
    assert "fetches 1 used, 11 left" in out
    code, out, _ = run("get-article", "doc_cards_gold_001", "--case", "case_1")  # the whole, after a section
    assert code == 0 and "\ncost: free (this article was already read in this case)\n" in out
    assert "fetches 1 used, 11 left" in out
    code, out, _ = run("get-article", "doc_cards_gold_001", "--json", "--case", "case_1")
    data = json.loads(out)
    assert data["charged"] is False and data["budget"]["fetches_used"] == 1


def test_save_check_then_save_with_offsets_and_warnings(run, wiki_ws, tmp_path):
    run("load-case", "case_1", *run.cases)
    run("get-article", "doc_cards_gold_002", "--case", "case_1")
    out = make_output("case_1", [("doc_cards_gold_002", ("Replace a Gold Rewards Card with "
                                                        "`order_replacement_card_2231` after the card is frozen."))],
                      titles={"doc_cards_gold_002": "Gold Rewards Card: replacement"},
                      guidance="1. Freeze the card, then replace it with `order_replacement_card_2231` ($0).")
    f = tmp_path / "out.json"
    f.write_text(json.dumps(out))
    code, o, _ = run("save-output", str(f), "--check")
    checked = json.loads(o)
    assert code == 0 and checked["checked_only"] and checked["path"] is None
    assert [w["kind"] for w in checked["warnings"]] == ["unquoted_identifier"] and checked["budget"]["saves_left"] == 4
    assert not (wiki_ws.runs_dir / "case_1" / "output.json").exists()
    code, o, _ = run("save-output", str(f))
    saved = json.loads(o)
    assert code == 0 and saved["path"].endswith("case_1/output.json") and saved["budget"]["saves_left"] == 3
    assert saved["evidence"][0]["end"] > saved["evidence"][0]["start"] and saved["warnings"] == checked["warnings"]
    out["snippets"][0]["text"] = "Replace it whenever you like."
    f.write_text(json.dumps(out))
    code, o, err = run("save-output", str(f), "--check")
    # regression: a rejected --check printed nothing on stdout, so an agent parsing JSON broke
    rejected = json.loads(o)
    assert code == 1 and rejected["accepted"] is False and rejected["checked_only"] is True
    assert rejected["case_id"] == "case_1" and "not a verbatim substring" in rejected["reasons"][0]
    assert BudgetLedger(wiki_ws).current("case_1", "cs-guidance").saves_left == 3  # --check spends nothing
    for left in (2, 1, 0):
        code, o, err = run("save-output", str(f))
        assert code == 1 and "not a verbatim substring" in err  # the stderr line stays as before
        assert json.loads(o)["accepted"] is False and json.loads(o)["checked_only"] is False
        assert BudgetLedger(wiki_ws).current("case_1", "cs-guidance").saves_left == left
    code, _, err = run("save-output", str(f))
    assert code == 2 and err.startswith("error: save budget spent (4 save_output attempts for case 'case_1')")


def test_skill_show_states_the_enforced_budgets(wiki_ws, capsys):
    assert main(["skill", "show", "cs-guidance", "-w", str(wiki_ws.root)]) == 0
    out = _out(capsys)[0]
    assert "**5 queries**" in out and "**12 fetches**" in out and "**4 saves**" in out and "${" not in out
    wiki_ws.config.harness.max_fetches = 7  # a skill budget left null falls back to the workspace's
    from skillrag.skill import BudgetLimits, SkillRegistry, render_manual

    skill = SkillRegistry(wiki_ws).get("cs-guidance")
    cfg = skill.config.model_copy(update={"budgets": skill.config.budgets.model_copy(update={"max_fetches": None})})
    limits = BudgetLimits.for_skill(wiki_ws, cfg.budgets)
    assert limits.max_fetches == 7 and "**7 fetches**" in render_manual(skill, limits)


def test_save_output_finds_the_case_file_and_leaves_the_cases_facts_alone(run, wiki_ws, tmp_path, monkeypatch):
    """The exported scripts pass the case file as $SKILLRAG_CASES: save-output reads it, so the
    customer's own figures are not flagged; without any case file the save still works."""
    from skillrag.skill import CaseRecord, write_cases

    cases = tmp_path / "c.jsonl"
    write_cases(cases, [CaseRecord(case_id="c7", contact_reason="fee", case_notes=["Customer paid $195 elsewhere."])])
    run("load-case", "c7", "--cases", str(cases))
    run("get-article", "doc_cards_gold_001", "--case", "c7")
    fee = "The Gold Rewards Card has an annual fee of $95, waived in the first year."
    out = make_output("c7", [("doc_cards_gold_001", fee)],
                      titles={"doc_cards_gold_001": "Gold Rewards Card: annual fee"},
                      guidance="1. The Gold Rewards Card fee is $95, not the $195 the customer paid elsewhere.")
    f = tmp_path / "out.json"
    f.write_text(json.dumps(out))
    monkeypatch.setenv("SKILLRAG_CASES", str(cases))
    code, o, _ = run("save-output", str(f), "--check")
    assert code == 0 and json.loads(o)["warnings"] == []
    monkeypatch.setenv("SKILLRAG_CASES", str(tmp_path / "moved.jsonl"))  # a stale path: the save still works
    code, o, _ = run("save-output", str(f), "--check")
    assert code == 0 and [w["subject"] for w in json.loads(o)["warnings"]] == ["$195"]


def test_save_status_shows_the_last_save_again_and_a_resave_says_what_it_replaced(run, wiki_ws, tmp_path):
    run("load-case", "case_1", *run.cases)
    code, o, _ = run("save-output", "--status", "case_1")
    assert code == 0 and json.loads(o)["last_save"] is None and json.loads(o)["save_attempts"] == 0
    run("get-article", "doc_cards_gold_001", "--case", "case_1")
    fee = "The Gold Rewards Card has an annual fee of $95, waived in the first year."
    out = make_output("case_1", [("doc_cards_gold_001", fee)], titles={"doc_cards_gold_001": "Gold Rewards Card: "
                                                                      "annual fee"}, guidance="1. The fee is $95.")
    f = tmp_path / "out.json"
    f.write_text(json.dumps({**out, "snippets": [{**out["snippets"][0], "text": "not in the article at all"}]}))
    code, _, err = run("save-output", str(f))
    assert code == 1
    code, o, _ = run("save-output", "--status", "case_1")
    rejected = json.loads(o)["last_save"]
    assert rejected["accepted"] is False and any("not a verbatim substring" in r for r in rejected["reasons"])
    f.write_text(json.dumps(out))
    code, o, _ = run("save-output", str(f))
    first = json.loads(o)
    assert code == 0 and first["replaced"] is None and first["budget"]["saves_left"] == 2
    code, o, _ = run("save-output", "--status", "case_1")
    status = json.loads(o)
    assert status["save_attempts"] == 2 and status["budget"] == first["budget"]  # the status spent nothing
    assert {k: v for k, v in status["last_save"].items() if k != "at"} == {k: v for k, v in first.items()
                                                                          if k != "budget"}
    # a save after an accepted one is allowed while saves are left: it replaces the output and says so
    saved_at = json.loads((wiki_ws.runs_dir / "case_1" / "output.json").read_text())["audit"]["saved_at"]
    code, o, _ = run("save-output", str(f))
    second = json.loads(o)
    assert code == 0 and second["budget"]["saves_left"] == 1
    assert second["replaced"] == {"path": first["path"], "saved_at": saved_at, "case_id": "case_1"}
    code, _, err = run("save-output", str(f), "--status", "case_1")
    assert code == 2 and "give it alone" in err
    code, _, err = run("save-output")
    assert code == 2 and "--status CASE_ID" in err
    code, _, err = run("save-output", "--status", "case_2")
    assert code == 2 and "case 'case_2' has no session" in err


def test_save_output_to_an_existing_file_that_is_not_an_output_is_refused_and_spends_nothing(run, wiki_ws, tmp_path):
    """Found by a new user: `save-output --to skillrag.yaml` (or the store, a case file, a source article)
    overwrote it and wrecked the workspace. Such a path is refused before anything is spent; a saved output
    may be replaced, and a new path is written."""
    run("load-case", "case_1", *run.cases)
    run("get-article", "doc_cards_gold_002", "--case", "case_1")
    out = make_output("case_1", [("doc_cards_gold_002", ("Replace a Gold Rewards Card with "
                                                        "`order_replacement_card_2231` after the card is frozen."))],
                      titles={"doc_cards_gold_002": "Gold Rewards Card: replacement"},
                      guidance="1. Replace the card with `order_replacement_card_2231`.")
    f = tmp_path / "out.json"
    f.write_text(json.dumps(out))
    config = wiki_ws.root / "skillrag.yaml"
    before = config.read_bytes()
    for target in (config, wiki_ws.store_path, tmp_path):
        code, o, err = run("save-output", str(f), "--to", str(target))
        assert code == 2 and o == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert config.read_bytes() == before and wiki_ws.store_path.read_bytes()[:15] == b"SQLite format 3"
    assert BudgetLedger(wiki_ws).current("case_1", "cs-guidance").saves_left == 4  # nothing spent
    dest = tmp_path / "saved.json"
    assert run("save-output", str(f), "--to", str(dest))[0] == 0 and json.loads(dest.read_text())["case_id"] == "case_1"
    assert run("save-output", str(f), "--to", str(dest))[0] == 0  # an earlier output may be replaced
