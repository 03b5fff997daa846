"""External judges: blind packets out, verdicts in; model and external verdicts give the same report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.errors import MalformedSourceError, UserError
from skillrag.evaluation.config import JudgeSettings
from skillrag.evaluation.packets import load_mapping, read_votes, write_packets
from skillrag.evaluation.score import ArmRuns, packet_entries, score_runs
from skillrag.evaluation.testing import RuleJudge
from skillrag.skill.cases import CaseFile

from .conftest import kb_output, save_run

FREEZE = ("kb_card_lost", "Freeze the card with `freeze_card_4410` and confirm the freeze.")
REPLACE = ("kb_card_lost", "Order a replacement card with `order_replacement_card_2231`.")
WIRE = ("kb_wire", "Wire transfers above $5,000 need a second approver from the payments team.")


def rule(prompt: str) -> str:
    """A deterministic judge: accept when the graded part names the replacement tool or the approver."""
    graded = prompt.split("## Candidate answer")[-1].split("## Quoted passages")[-1]
    ok = "order_replacement_card_2231" in graded or "second approver" in graded
    return f"The candidate {'covers' if ok else 'misses'} the core step.\nVERDICT: {'accept' if ok else 'reject'}"


@pytest.fixture
def arms(kb, tmp_path: Path):
    ws, cases = kb
    good, bad = tmp_path / "good", tmp_path / "bad"
    save_run(good, "lost", kb_output("lost", [FREEZE, REPLACE], "Freeze, then order_replacement_card_2231."))
    save_run(good, "stolen", kb_output("stolen", [FREEZE], "Freeze with freeze_card_4410."))
    save_run(good, "wire", kb_output("wire", [WIRE], "Get a second approver, then submit_wire_9001."))
    save_run(bad, "lost", kb_output("lost", [FREEZE], "Freeze the card."))
    save_run(bad, "stolen", kb_output("stolen", [REPLACE], "Order a replacement with order_replacement_card_2231."))
    save_run(bad, "wire", kb_output("wire", [("kb_wire", "Wire transfers need nothing at all.")]))  # rejected
    return ws, CaseFile(cases), [ArmRuns("good", good), ArmRuns("bad", bad)]


JUDGES = ["guidance_match", "snippets_sufficient"]


def _external_votes(packets: Path, voters: int) -> list[dict]:
    """What independent external judges send back: each applies ``rule`` to each item's prompt.md."""
    votes = []
    for item in sorted(p for p in packets.iterdir() if p.is_dir()):
        verdict = rule((item / "prompt.md").read_text(encoding="utf-8")).rsplit("VERDICT: ", 1)[1]
        votes += [{"item": item.name, "verdict": verdict, "reason": "by rule", "voter": f"j{v}"}
                  for v in range(voters)]
    return votes


def test_model_and_external_verdicts_give_the_same_report(arms, tmp_path):
    ws, cf, arm_list = arms
    judge = RuleJudge(rule)
    by_model = score_runs(ws, cf, arm_list, only_ran=True, judge_model=judge.model,
                          judge_cfg=JudgeSettings(calls=3, judges=JUDGES))
    plain = score_runs(ws, cf, arm_list, only_ran=True)
    packets = tmp_path / "packets"
    mapping, mpath = write_packets(packets, packet_entries(plain, cf, JUDGES), seed=11)
    assert len(mapping.items) == 10  # 5 accepted outputs x 2 judges; the rejected one is not judged
    # an external judge reads exactly the prompt the model received
    assert sorted(judge.prompts) == sorted(
        [p.read_text(encoding="utf-8") for p in packets.glob("*/prompt.md") for _ in range(3)])
    votes_file = tmp_path / "votes.jsonl"
    votes_file.write_text("".join(json.dumps(v) + "\n" for v in _external_votes(packets, 3)), encoding="utf-8")
    by_people = score_runs(ws, cf, arm_list, only_ran=True, votes=read_votes(votes_file, load_mapping(mpath)))
    for arm in ("good", "bad"):
        for cid, r in by_model.results[arm].items():
            e = by_people.results[arm][cid]
            assert {j: (v.decision, [x.verdict for x in v.votes]) for j, v in r.judges.items()} == \
                   {j: (v.decision, [x.verdict for x in v.votes]) for j, v in e.judges.items()}, (arm, cid)
    rm = by_model.report(reference_arm="good").model_dump()
    re = by_people.report(reference_arm="good").model_dump()
    rm.pop("judge_model"), re.pop("judge_model")
    assert rm == re
    good = by_model.report(reference_arm="good").arms[0].judges
    assert good["guidance_match"].rate.k == 2 and good["guidance_match"].rate.n == 3
    assert by_model.results["bad"]["wire"].judges["guidance_match"].failure.startswith("no accepted output")


def test_blind_packets_hide_the_arm_and_keep_the_mapping_apart(arms, tmp_path):
    ws, cf, arm_list = arms
    plain = score_runs(ws, cf, arm_list, only_ran=True)
    packets = tmp_path / "packets"
    entries = packet_entries(plain, cf, ["guidance_match", "snippets_sufficient", "correctness"])
    docs = {"kb_card_lost": ("Lost or stolen debit cards", "BODY-OF-LOST"), "kb_wire": ("Wire", "BODY-OF-WIRE")}
    mapping, mpath = write_packets(packets, entries, seed=3, documents=docs)
    assert mpath == tmp_path / "packets.mapping.json" and mpath.is_file()
    folders = sorted(p for p in packets.iterdir() if p.is_dir())
    assert len(folders) == 15 and all(p.name.startswith("item-") for p in folders)
    for folder in folders:
        ref = mapping.items[folder.name]
        text = " ".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())
        assert "good" not in text and "bad" not in text and "audit" not in text
        assert json.loads((folder / "verdict.json").read_text()) == {
            "item": folder.name, "judge": ref.judge, "verdict": None, "reason": "", "voter": ""}
        cand = json.loads((folder / "candidate.json").read_text())
        case = json.loads((folder / "case.json").read_text())
        assert case["case_id"] == ref.case_id and "ground_truth" not in case
        if ref.judge == "snippets_sufficient":
            assert list(cand) == ["snippets"] and set(cand["snippets"][0]) == {"source_article", "text"}
        else:
            assert list(cand) == ["guidance"]
        if ref.judge == "correctness":
            assert not (folder / "reference.json").exists() and not (folder / "documents").exists()
        else:
            assert json.loads((folder / "reference.json").read_text())["required_documents"]
            assert (folder / "documents").is_dir()
    readme = (packets / "README.md").read_text()
    assert all(f.name in readme for f in folders) and "good" not in readme
    # same seed, same items; and the mapping may not go inside the folder the judge reads
    again, _ = write_packets(tmp_path / "p2", entries, seed=3, mapping_path=tmp_path / "m2.json")
    assert list(again.items) == list(mapping.items)
    with pytest.raises(UserError, match="must not be inside"):
        write_packets(tmp_path / "p3", entries, mapping_path=tmp_path / "p3" / "map.json")
    with pytest.raises(UserError, match="not an empty folder"):
        write_packets(packets, entries)
    open_, _ = write_packets(tmp_path / "p4", entries, blind=False)
    assert "good__lost__guidance_match" in open_.items


def test_votes_majority_split_missing_and_failed(arms, tmp_path):
    ws, cf, arm_list = arms
    votes = [
        {"arm": "good", "case_id": "lost", "judge": "guidance_match", "verdict": v}
        for v in ("accept", "yes", "VERDICT: reject")
    ] + [
        {"arm": "good", "case_id": "stolen", "judge": "guidance_match", "verdict": "accept"},
        {"arm": "good", "case_id": "stolen", "judge": "guidance_match", "verdict": "maybe", "voter": "j2"},
        {"arm": "good", "case_id": "wire", "judge": "guidance_match", "verdict": None},  # untouched: no vote
        {"arm": "bad", "case_id": "lost", "judge": "guidance_match", "votes": [
            {"verdict": False}, {"verdict": "no"}]},
    ]
    path = tmp_path / "votes.json"
    path.write_text(json.dumps(votes), encoding="utf-8")
    vs = read_votes(path)
    out = score_runs(ws, cf, arm_list, only_ran=True, votes=vs, votes_per_item=3)
    good, bad = out.results["good"], out.results["bad"]
    lost = good["lost"].judges["guidance_match"]
    assert lost.decision is True and lost.split and [v.verdict for v in lost.votes] == ["accept", "accept", "reject"]
    stolen = good["stolen"].judges["guidance_match"]
    assert stolen.decision is None and stolen.failure == "no majority of 3: 1 accept, 0 reject, 2 failed"
    assert "unparseable verdict 'maybe'" in stolen.votes[1].error and stolen.votes[1].voter == "j2"
    assert stolen.votes[2].error == "missing vote"
    assert "guidance_match" not in good["wire"].judges  # no vote at all: left out of the rate, listed
    assert ("good", "wire", "guidance_match") in out.missing_votes
    assert bad["lost"].judges["guidance_match"].decision is False
    assert bad["wire"].judges["guidance_match"].decision is False  # rejected output: not judged, a reject
    summary = out.report(reference_arm="good").arms[0].judges["guidance_match"]
    assert (summary.rate.k, summary.rate.n, summary.failed_decisions, summary.split_cases) == (1, 2, 1, 1)


def test_votes_on_a_changed_candidate_are_refused(arms, tmp_path):
    ws, cf, arm_list = arms
    plain = score_runs(ws, cf, arm_list[:1], only_ran=True)
    packets = tmp_path / "packets"
    _, mpath = write_packets(packets, packet_entries(plain, cf, ["guidance_match"]), seed=1)
    for item in packets.glob("item-*"):
        v = json.loads((item / "verdict.json").read_text())
        (item / "verdict.json").write_text(json.dumps({**v, "verdict": "accept"}))
    # the harness re-ran "lost" after the packets were written
    save_run(arm_list[0].runs_dir, "lost", kb_output("lost", [FREEZE], "Just freeze it."))
    out = score_runs(ws, cf, arm_list[:1], only_ran=True, votes=read_votes(packets, load_mapping(mpath)))
    assert "guidance_match" not in out.results["good"]["lost"].judges
    assert out.results["good"]["stolen"].judges["guidance_match"].decision is True
    assert ("good", "lost", "guidance_match") in out.missing_votes
    assert any("changed since its packet was written" in n for n in out.notes)


@pytest.mark.parametrize(("lines", "message"), [
    (['{"arm": "good", "case_id": "lost", "judge": "guidance_match", "verdict": "accept"}', "{oops"],
     "line 2: not JSON"),
    (['{"arm": "good", "case_id": "lost", "verdict": "accept"}'], "line 1: needs 'item'"),
    (['{"arm": "good", "case_id": "lost", "judge": "vibes", "verdict": "accept"}'], "judge 'vibes' unknown"),
    (['{"item": "item-1", "verdict": "accept"}'], "pass the mapping file"),
    (['["accept"]'], "line 1: expected a JSON object"),
])
def test_bad_verdict_files_name_the_record(tmp_path, lines, message):
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(MalformedSourceError, match=message):
        read_votes(path)


def test_cli_packets_then_verdicts_round_trip(arms, tmp_path, capsys):
    ws, cf, arm_list = arms
    base = ["eval", "score", "--arm", f"good={arm_list[0].runs_dir}", "--arm", f"bad={arm_list[1].runs_dir}",
            "--cases", str(cf.path), "-w", str(ws.root), "--only-ran", "--judge", "snippets_sufficient"]
    packets = tmp_path / "pk"
    assert main([*base, "--judge-packets", str(packets), "--seed", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["packets"]["items"] == 5 and data["packets"]["blind"] is True
    assert Path(data["packets"]["mapping"]) == tmp_path / "pk.mapping.json"
    for item in packets.glob("item-*"):
        v = json.loads((item / "verdict.json").read_text())
        verdict = rule((item / "prompt.md").read_text()).rsplit("VERDICT: ", 1)[1]
        (item / "verdict.json").write_text(json.dumps({**v, "verdict": verdict, "voter": "p1"}))
    assert main([*base, "--verdicts", str(packets), "--json", "--report", str(tmp_path / "rep")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["judge"] == "external verdicts (pk)"
    assert data["arms"]["good"]["metrics"]["judge:snippets_sufficient"]["k"] == 2
    assert data["arms"]["bad"]["metrics"]["judge:snippets_sufficient"]["k"] == 1
    assert "Snippets-Sufficient" in (tmp_path / "rep" / "report.md").read_text()
    assert main([*base, "--verdicts", str(tmp_path / "nothing.jsonl")]) == 2
    assert "no such verdicts file" in capsys.readouterr().err


def test_a_filled_folder_may_hold_several_votes_per_item(arms, tmp_path):
    ws, cf, arm_list = arms
    plain = score_runs(ws, cf, arm_list[:1], only_ran=True)
    packets = tmp_path / "packets"
    _, mpath = write_packets(packets, packet_entries(plain, cf, ["guidance_match"]), seed=2)
    for item in packets.glob("item-*"):
        (item / "verdict.json").write_text(json.dumps({"item": item.name, "votes": [
            {"verdict": "accept", "voter": "j1"}, {"verdict": "reject", "voter": "j2"},
            {"verdict": "accept", "voter": "j3"}]}))
    vs = read_votes(packets, load_mapping(mpath))
    out = score_runs(ws, cf, arm_list[:1], only_ran=True, votes=vs)
    j = out.results["good"]["lost"].judges["guidance_match"]
    assert j.decision is True and j.split and [v.voter for v in j.votes] == ["j1", "j2", "j3"]
