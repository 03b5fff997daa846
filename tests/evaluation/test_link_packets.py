"""The navigation layer's link audit judged by external judges: packets out, verdicts back in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ingest
from skillrag.errors import MalformedSourceError
from skillrag.evaluation.link_packets import link_key, read_link_verdicts, write_link_packets
from skillrag.evaluation.packets import load_mapping
from skillrag.wiki import Layer, audit_links, build_wiki, load_pages
from skillrag.wiki.page import Link, LinkType, SourceRef, Step
from skillrag.wiki.testing import OverlapJudge
from skillrag.workspace import Workspace

ARTICLES = {
    "doc_cards_gold_001": ("Gold Card: Annual Fee", "## Fees\n\nThe annual fee is $95, billed each January.\n"),
    "doc_cards_gold_002": ("Gold Card: Lost Card", "## Procedure\n\n1. Verify the customer.\n2. Freeze the card.\n"),
    "doc_disputes_001": ("Disputing a Charge", "## Overview\n\nCustomers can dispute a charge within sixty days.\n"),
}


@pytest.fixture
def layer_ws(tmp_path: Path) -> tuple[Workspace, str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for aid, (title, body) in ARTICLES.items():
        (docs / f"{aid}.json").write_text(json.dumps({"id": aid, "title": title, "content": body}))
    ws = Workspace.init(tmp_path / "ws")
    ingest(ws, [docs])
    build_wiki(ws)
    layer = Layer(ws)  # plant a link the disputes article does not support
    gold = next(p for p in load_pages(ws) if "doc_cards_gold_001" in p.source_ids())
    wrong = Step(text="Quarterly platinum surcharge applies abroad.",
                 links=(Link(type=LinkType.fee, article_id="doc_disputes_001"),))
    layer.write(gold.model_copy(update={"steps": (*gold.steps, wrong),
                                        "sources": (*gold.sources, SourceRef(id="doc_disputes_001"))}))
    return ws, gold.id


def _fill(packets: Path, mapping, decide) -> None:
    """Fill every verdict.json with ``decide(page_id, article_id) -> bool``."""
    for item, ref in mapping.items.items():
        page_id, article_id = ref.case_id.split(" -> ")
        path = packets / item / "verdict.json"
        v = json.loads(path.read_text())
        ok = decide(page_id, article_id)
        v.update(verdict="accept" if ok else "reject", reason="checked by hand", voter="judge-1")
        path.write_text(json.dumps(v))


def test_external_verdicts_give_the_audit_the_model_judge_gives(layer_ws, tmp_path):
    ws, gold = layer_ws
    model_rep = audit_links(ws, OverlapJudge().model)
    decided = {(j.page_id, j.article_id): j.supported for j in model_rep.judgements}
    packets = tmp_path / "packets"
    mp, mpath = write_link_packets(ws, packets, seed=3, layer="agent-written")
    assert mpath == tmp_path / "packets.mapping.json" and len(mp.items) == len(decided)
    assert all(name.startswith("item-") for name in mp.items)  # blind: no page or article in the names
    item = next(iter(mp.items))
    prompt = (packets / item / "prompt.md").read_text()
    assert "Claims the page attributes to" in prompt and "Link-audit packets" in (packets / "README.md").read_text()
    _fill(packets, mp, lambda p, a: decided[(p, a)])
    rep = read_link_verdicts(ws, packets, load_mapping(mpath))  # the layer's name comes from the mapping
    assert {(j.page_id, j.article_id): j.supported for j in rep.judgements} == decided
    assert (gold, "doc_disputes_001") in {(j.page_id, j.article_id) for j in rep.flagged}
    assert rep.pass_rate == model_rep.pass_rate < 1.0 and rep.errors == []
    assert rep.model == "external verdicts (packets)" and all(j.reason == "checked by hand" for j in rep.judgements)


def test_majority_missing_and_stale_votes(layer_ws, tmp_path):
    ws, gold = layer_ws
    mp, mpath = write_link_packets(ws, tmp_path / "p", blind=False)
    keys = [ref.case_id for ref in mp.items.values()]
    wrong = link_key(gold, "doc_disputes_001")
    other = next(k for k in keys if k != wrong and k.startswith(gold))
    votes = tmp_path / "votes.jsonl"
    lines = [{"arm": "wiki", "case_id": wrong, "judge": "link", "verdict": v, "voter": f"j{i}"}
             for i, v in enumerate(["reject", "reject", "accept"])]
    lines += [{"arm": "wiki", "case_id": other, "judge": "link", "verdict": v} for v in ["accept", "reject"]]
    votes.write_text("".join(json.dumps(x) + "\n" for x in lines))
    rep = read_link_verdicts(ws, votes)
    assert [(j.page_id, j.article_id, j.supported) for j in rep.judgements] == [(gold, "doc_disputes_001", False)]
    assert any(e.startswith(f"{other}: no majority of 2") for e in rep.errors)
    assert f"{len(keys) - 2} of {len(keys)} links have no vote (not judged)" in rep.errors
    # what the page says of one link changed after its packets were written: that link's votes are not
    # counted; the links whose prompt is unchanged keep theirs
    _fill(tmp_path / "p", mp, lambda p, a: True)
    page = Layer(ws).read(gold)
    steps = tuple(s.model_copy(update={"text": "A different claim."}) if s.links[0].article_id == "doc_disputes_001"
                  else s for s in page.steps)
    Layer(ws).write(page.model_copy(update={"steps": steps}))
    rep = read_link_verdicts(ws, tmp_path / "p", load_mapping(mpath))
    judged = {(j.page_id, j.article_id) for j in rep.judgements}
    assert (gold, "doc_disputes_001") not in judged and len(judged) == len(keys) - 1
    assert rep.errors == [(f"{wrong}: the page or article changed since its packet was written; its votes are not "
                          "counted")]
    with pytest.raises(MalformedSourceError, match="judge 'guidance_match' unknown"):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"arm": "wiki", "case_id": wrong, "judge": "guidance_match", "verdict": "accept"}))
        read_link_verdicts(ws, bad)


def test_cli_link_packets_then_verdicts_fix(layer_ws, tmp_path, capsys):
    ws, gold = layer_ws
    w, packets = str(ws.root), tmp_path / "links"
    assert main(["wiki", "audit", "--links", "--judge-packets", str(packets), "--seed", "1", "-w", w]) == 0
    out = capsys.readouterr().out
    assert "link packets to" in out and "--verdicts" in out
    mp = load_mapping(tmp_path / "links.mapping.json")
    _fill(packets, mp, lambda p, a: (p, a) != (gold, "doc_disputes_001"))
    assert main(["wiki", "audit", "--links", "--verdicts", str(packets), "--fix", "--json", "-w", w]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["links"]["flagged"][0]["article_id"] == "doc_disputes_001" and data["fix"]["links_removed"] == 1
    assert "doc_disputes_001" not in Layer(ws).read(gold).article_ids()
    assert main(["wiki", "audit", "--links", "--judge-packets", str(tmp_path / "x"), "--fix", "-w", w]) == 2
    assert "--fix needs verdicts" in capsys.readouterr().err
