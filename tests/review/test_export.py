"""Approved outputs become reference cases that the evaluation reads and scores."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from skillrag import demo_data
from skillrag.cli.main import main
from skillrag.corpus import ArticleStore, content_hash
from skillrag.errors import EmptyInputError
from skillrag.evaluation.metrics import Reference, ScoredCase, compute_metrics
from skillrag.review import (
    ReviewStore,
    add_evidence,
    declared_tools,
    expected_tools,
    export_approved,
    load_run,
)
from skillrag.skill import CaseFile

from .conftest import read_output, sha_of

DEMO_TOOLS = {
    "apply_price_adjustment", "book_assembly", "cancel_order", "check_gift_card_balance", "create_return_label",
    "escalate_to_supervisor", "escalate_to_tier2", "flag_for_fraud_review", "issue_refund", "issue_store_credit",
    "lookup_order", "lookup_store_credit", "open_damage_claim", "open_warranty_claim", "schedule_replacement",
    "send_password_reset", "unlock_account", "update_delivery_address", "verify_identity",
}


def test_declared_tools_of_the_demo_corpus_are_its_tools_not_its_fields(ws):
    tools = declared_tools(a.body for a in ArticleStore(ws).list())
    assert tools == DEMO_TOOLS
    truth = CaseFile(demo_data.CASES)
    assert {t for cid in truth.ids() for t in truth.ground_truth(cid).expected_tools} <= tools


def test_declared_tools_patterns():
    bodies = ["## `open_claim`\nFields: `order_number`, `line_item_id`.",
              "### Tool: close_account_1234\nUse close_account_1234 to close it.",
              "- get_balance_9(user_id) returns the balance; set keep_active to true."]
    assert declared_tools(bodies) == {"open_claim", "close_account_1234", "get_balance_9"}


def test_expected_tools_are_the_declared_tools_the_guidance_names_in_its_order():
    tools = {"verify_identity", "lookup_order", "open_claim", "toggle_airplane_mode"}
    guidance = ("1. Call `lookup_order` with the `order_number`.\n2. Then `verify_identity`, then lookup_order again.\n"
                "3. If Airplane Mode is ON: toggle_airplane_mode().")
    # in the guidance's order, each once; a field name (`order_number`) is not a declared tool
    assert expected_tools(guidance, tools) == ["lookup_order", "verify_identity", "toggle_airplane_mode"]
    assert expected_tools("Nothing to call.", tools) == []


def test_nothing_approved_writes_nothing(ws, tmp_path):
    out = tmp_path / "approved.jsonl"
    ReviewStore(ws).reject("hp-001", sha_of(ws, "hp-001"), "Dana", "wrong policy", version=0)
    with pytest.raises(EmptyInputError, match="no approved run"):
        export_approved(ws, out)
    assert not out.exists()


def test_approved_runs_become_reference_cases_eval_reads(ws, tmp_path):
    store = ReviewStore(ws)
    store.approve("hp-002", sha_of(ws, "hp-002"), "Dana", version=0)
    edited = "1. Verify the customer with `verify_identity`.\n2. Over $1,000: `escalate_to_tier2`."
    store.edit("hp-001", sha_of(ws, "hp-001"), "Dana", edited, base_version=0)
    store.approve("hp-001", sha_of(ws, "hp-001"), "Lee", version=1)
    store.reject("hp-003", sha_of(ws, "hp-003"), "Lee", "misses the price window", version=0)
    out = tmp_path / "approved.jsonl"
    report = export_approved(ws, out)
    assert report.written == ["hp-001", "hp-002"] and report.skipped == {}
    cf = CaseFile(out)  # the case format `eval` reads
    assert cf.ids() == ["hp-001", "hp-002"]
    tools = declared_tools(a.body for a in ArticleStore(ws).list())
    for cid in cf.ids():
        output = read_output(ws, cid)
        gt = cf.ground_truth(cid)
        saved_case = json.loads((ws.runs_dir / cid / "case.json").read_text())
        assert cf.load(cid).model_dump(mode="json") == saved_case
        cited = list(dict.fromkeys(s["source_article"] for s in output["snippets"]))
        assert gt.required_documents and set(gt.required_documents) <= set(cited)
        assert gt.expected_tools and set(gt.expected_tools) <= tools
        assert gt.expected_tools == [t for t in dict.fromkeys(re.findall(r"`([a-z_0-9]+)", gt.reference_guidance))
                                     if t in tools]
        assert gt.expected_actions == []
        # the evaluation's own metrics agree: the approved output meets the reference it became
        m = compute_metrics(ScoredCase(cid, "accepted", output, Reference.from_ground_truth(gt)))
        assert m["docs_cited_recall"] == 1.0
    gt2 = cf.ground_truth("hp-002")
    assert gt2.reference_guidance == read_output(ws, "hp-002")["guidance"]
    gt1 = cf.ground_truth("hp-001")
    assert gt1.reference_guidance == edited  # the approved version, not the agent's
    assert gt1.expected_tools == ["verify_identity", "escalate_to_tier2"]  # the guidance's, in its order


def test_ground_truth_holds_what_the_approved_steps_rely_on_not_every_citation(ws, tmp_path):
    out = read_output(ws, "hp-001")
    cited = list(dict.fromkeys(s["source_article"] for s in out["snippets"]))
    assert len(cited) == 10
    # the reviewer keeps two of the fifteen steps, in the other order
    keep = [ln.strip() for ln in out["guidance"].split("\n") if ln.strip().startswith(("3. ", "12. "))]
    edited = "\n".join(f"{i}. {ln.split('. ', 1)[1]}" for i, ln in enumerate(reversed(keep), 1))
    store = ReviewStore(ws)
    store.edit("hp-001", sha_of(ws, "hp-001"), "Dana", edited, base_version=0)
    store.approve("hp-001", sha_of(ws, "hp-001"), "Dana", version=1)
    export_approved(ws, tmp_path / "a.jsonl")
    gt = CaseFile(tmp_path / "a.jsonl").ground_truth("hp-001")
    # the articles of the snippets linked to the approved steps (skill.links, as the page shows them), in
    # step order: step 1's snippet names it ("step 12" of version 0); step 2's names it ("step 3") and the
    # others share enough of its terms (look up the order, line item); six cited articles are left out
    view = load_run(ws, "hp-001")
    linked = [view.snippets[i].source_article for ln in view.latest.lines for i in ln.snippets]
    assert gt.required_documents == list(dict.fromkeys(linked)) == [
        "kb-assembly-service", "kb-damage-claim-steps", "kb-price-adjustment-steps", "kb-delivery-address-change"]
    assert set(cited) - set(gt.required_documents) == {
        "kb-damage-evidence-rules", "kb-faq-delivery", "kb-returns-eligibility", "kb-refund-timing",
        "kb-faq-returns-refunds", "kb-warranty-coverage"}
    # the tools the approved guidance names, in its order; tools only cited snippets name are not expected
    assert gt.expected_tools == ["open_damage_claim"]
    for tool in ("lookup_order", "schedule_replacement", "escalate_to_tier2"):
        assert tool in json.dumps(out["snippets"]) and tool not in gt.expected_tools


def test_a_snippet_the_reviewer_added_counts_as_evidence_the_approved_steps_rely_on(ws, tmp_path):
    out = read_output(ws, "hp-003")
    body = ArticleStore(ws).get("kb-what-not-to-promise").body
    assert all(s["source_article"] != "kb-what-not-to-promise" for s in out["snippets"])
    line = next(ln for ln in body.split("\n") if len(ln) > 40 and not ln.startswith("#"))
    start = body.index(line)
    guidance = "1. Tell the customer only what the policy allows; never promise more.\n2. " + line
    store = ReviewStore(ws)
    store.edit("hp-003", sha_of(ws, "hp-003"), "Dana", guidance, base_version=0)
    add_evidence(ws, "hp-003", "Dana", output_sha256=sha_of(ws, "hp-003"), base_version=1,
                 article_id="kb-what-not-to-promise", start=start, end=start + len(line), why="Backs step 2.")
    view = load_run(ws, "hp-003")
    assert view.latest.version.version == 2 and view.latest.accepted
    store.approve("hp-003", sha_of(ws, "hp-003"), "Dana", version=2)
    export_approved(ws, tmp_path / "a.jsonl")
    gt = CaseFile(tmp_path / "a.jsonl").ground_truth("hp-003")
    assert "kb-what-not-to-promise" in gt.required_documents


def test_an_approval_later_edited_or_no_longer_verbatim_is_not_exported(ws, tmp_path):
    store = ReviewStore(ws)
    for cid in ("hp-001", "hp-002", "hp-003"):
        store.approve(cid, sha_of(ws, cid), "Dana", version=0)
    store.edit("hp-003", sha_of(ws, "hp-003"), "Lee", "1. A new plan.", base_version=0)  # waits for a decision
    # an article hp-002 cites and hp-001 does not
    cited_1 = {sn["source_article"] for sn in read_output(ws, "hp-001")["snippets"]}
    art = next(sn["source_article"] for sn in read_output(ws, "hp-002")["snippets"]
               if sn["source_article"] not in cited_1)
    conn = sqlite3.connect(ws.store_path)
    with conn:
        conn.execute("UPDATE articles SET body = ?, content_hash = ? WHERE id = ?",
                     ("Rewritten.", content_hash("Rewritten."), art))
    conn.close()
    report = export_approved(ws, tmp_path / "a.jsonl")
    assert report.written == ["hp-001"]
    assert list(report.skipped) == ["hp-002"] and "fails the evidence contract" in report.skipped["hp-002"]


def test_cli_export_approved(ws, tmp_path, capsys):
    out = tmp_path / "approved.jsonl"
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: no approved run to export")
    assert not out.exists()
    ReviewStore(ws).approve("hp-001", sha_of(ws, "hp-001"), "Dana", version=0)
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(out)]) == 0
    assert "1 approved case(s) written" in capsys.readouterr().out
    assert CaseFile(out).ids() == ["hp-001"]
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == ["hp-001"]
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
