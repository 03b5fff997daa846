"""The navigation layer's link audit worked by external judges: packets out, verdicts back in.

``write_link_packets`` writes one packet item per page -> article link (``wiki.audit.link_jobs``: the
prompt a judge model receives, ``prompts/judge_link.md``) with the one packet writer
(``packets.write_items``): blind by default, the mapping beside the folder. ``read_link_verdicts`` reads
the votes back with ``packets.read_votes`` and decides each link by ``judges.decide`` (a strict majority,
of ``votes_per_item`` when given), into the same ``LinkAudit`` the model judge returns, so ``wiki audit
--fix`` removes the links it flags. A vote on a link whose page or article changed since its packet
was written is refused (the prompt's sha256 is in the mapping).

Items stand for ``(layer, "PAGE_ID -> ARTICLE_ID", "link")``: ``layer`` names the layer judged
(``wiki`` unless given, e.g. ``agent-written``).
"""

from __future__ import annotations

import re
from pathlib import Path

from skillrag.evaluation.judges import decide
from skillrag.evaluation.packets import PacketItem, PacketMapping, prompt_sha256, read_votes, write_items
from skillrag.wiki.audit import LinkAudit, LinkJudgement, link_jobs
from skillrag.workspace import Workspace

__all__ = ["LINK_JUDGE", "link_key", "read_link_verdicts", "write_link_packets"]

#: The judge name link items carry.
LINK_JUDGE = "link"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def link_key(page_id: str, article_id: str) -> str:
    """What a link item stands for in the mapping's ``case_id``: ``"PAGE_ID -> ARTICLE_ID"``."""
    return f"{page_id} -> {article_id}"


def write_link_packets(ws: Workspace, dest: str | Path, *, layer: str = "wiki", blind: bool = True,
                       seed: int | None = None, mapping_path: str | Path | None = None,
                       max_article_chars: int = 12000) -> tuple[PacketMapping, Path]:
    """One packet item per link of the workspace's layer under ``dest``; returns ``(mapping, mapping path)``.

    Raises ``UserError`` when ``dest`` holds files, the mapping would land inside it, or the layer has
    no link to judge."""
    from skillrag.evaluation.report import render_template

    items = [PacketItem(arm=layer, case_id=link_key(j.page_id, j.article_id), judge=LINK_JUDGE,
                        name=f"{j.page_id}__{_UNSAFE.sub('_', j.article_id)}", prompt=j.prompt)
             for j in link_jobs(ws, max_article_chars=max_article_chars)]
    return write_items(dest, items, blind=blind, seed=seed, mapping_path=mapping_path,
                       readme=lambda names: render_template("link_packets.md.j2", items=names))


def read_link_verdicts(ws: Workspace, source: str | Path, mapping: PacketMapping | None = None, *,
                       layer: str | None = None, votes_per_item: int | None = None,
                       max_article_chars: int = 12000) -> LinkAudit:
    """The link audit from external votes on the layer as it is now (``wiki.audit.LinkAudit``).

    ``layer``: the name the packets gave the layer (default: the one the mapping's items name, else
    ``wiki``).

    ``errors`` lists, one line each, the links with votes but no majority, the links whose packet is
    older than the page or article, the links with no vote, and votes on links the layer no longer has.
    Raises ``MalformedSourceError`` for an unreadable verdict record (``packets.read_votes``)."""
    if layer is None:
        arms = {ref.arm for ref in mapping.items.values()} if mapping is not None else set()
        layer = arms.pop() if len(arms) == 1 else "wiki"
    votes = read_votes(source, mapping, judges=(LINK_JUDGE,))
    report = LinkAudit(model=f"external verdicts ({Path(source).name})")
    jobs = link_jobs(ws, max_article_chars=max_article_chars)
    wanted = set()
    unvoted = 0
    for job in jobs:
        key = (layer, link_key(job.page_id, job.article_id), LINK_JUDGE)
        wanted.add(key)
        if key not in votes.votes:
            unvoted += 1
            continue
        want = votes.hashes.get(key)
        if want is not None and want != prompt_sha256(job.prompt):
            report.errors.append(f"{key[1]}: the page or article changed since its packet was written; "
                                 "its votes are not counted")
            continue
        res = decide(LINK_JUDGE, votes.votes[key], votes_per_item)
        if res.decision is None:
            report.errors.append(f"{key[1]}: {res.failure}")
            continue
        verdict = "accept" if res.decision else "reject"
        reason = next((v.tail for v in res.votes if v.verdict == verdict and v.tail), "")
        report.judgements.append(LinkJudgement(page_id=job.page_id, article_id=job.article_id,
                                               link_type=job.link_type, supported=res.decision, reason=reason))
    if unvoted:
        report.errors.append(f"{unvoted} of {len(jobs)} links have no vote (not judged)")
    stray = sorted(k for k in votes.votes if k not in wanted)
    if stray:
        report.errors.append(f"{len(stray)} voted links are not in the layer (or not of layer {layer!r}): "
                             + ", ".join(k[1] for k in stray[:5]))
    return report
