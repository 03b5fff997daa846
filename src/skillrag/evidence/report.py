"""A readable, plain-text rendering of an ``EvidenceAnswer`` (what `skillrag ask` prints)."""

from __future__ import annotations

from skillrag.evidence.model import EvidenceAnswer
from skillrag.evidence.verify import FOUND_BY_CODE

__all__ = ["format_answer"]


def _cut(text: str, n: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def format_answer(a: EvidenceAnswer, *, show_record: bool = True) -> str:
    """Plain text: conclusion and signals first, then evidence, conflicts, candidates, the path."""
    s = a.subject
    lines = [f"Conclusion: {a.conclusion}", ""]
    lines.append(
        f"sufficient: {str(a.sufficient).lower()}   confidence: {a.confidence}   risk: {a.risk_signal}"
    )
    lines.append(f"  ({a.confidence_reason})")
    subj = f"{s.type} {s.name!r}"
    if s.parent_entity:
        subj += f" of {s.parent_entity!r}"
    if s.attribute:
        subj += f", asked: {s.attribute}"
    scope = ", ".join(f"{k}={v}" for k, v in s.scope.model_dump().items() if v)
    lines.append(f"subject: {subj}" + (f" [{scope}]" if scope else ""))
    if a.note:
        lines.append(f"note: {a.note}")
    index = a.record.steps[1].detail.get("search_index") if len(a.record.steps) > 1 else None
    if index:
        lines.append(f"search index: {index}")
    if a.evidence:
        lines += ["", "Evidence:"]
        for i, u in enumerate(a.evidence):
            where = f"{u.article_id} § {u.section}" if u.section else u.article_id
            found = " (found by code)" if u.why.startswith(FOUND_BY_CODE) else ""
            lines.append(f"  [{i}] {where} @{u.start}-{u.end}: \u201c{_cut(u.text)}\u201d{found}")
    if a.conflicts:
        lines += ["", "Conflicts (not arbitrated):"]
        for c in a.conflicts:
            vals = "; ".join(f"{cl.value} [{cl.evidence_index}] {cl.article_id}" for cl in c.claims)
            lines.append(f"  {c.subject} / {c.attribute}: {vals}")
    if a.candidates:
        lines += ["", "Candidate subjects:"]
        for cand in a.candidates:
            kinds = ", ".join(sorted({b.kind for b in cand.bindings}))
            lines.append(f"  {cand.label} — {len(cand.article_ids)} article(s), binding: {kinds}")
    if a.rejected_candidates:
        lines += ["", f"Rejected at the gate ({len(a.rejected_candidates)}):"]
        for r in a.rejected_candidates[:8]:
            lines.append(f"  {r.article_id}: {r.reason}")
        if len(a.rejected_candidates) > 8:
            lines.append(f"  … {len(a.rejected_candidates) - 8} more (see --json)")
    if a.dropped_evidence:
        lines += ["", f"Dropped evidence ({len(a.dropped_evidence)}):"]
        for d in a.dropped_evidence[:8]:
            lines.append(f"  {d.article_id}: {d.reason}")
    if a.suggested_next_actions:
        lines += ["", "Suggested next actions:"]
        lines += [f"  - {x}" for x in a.suggested_next_actions]
    if a.contract is not None:
        verdict = "accepted" if a.contract.accepted else "REJECTED: " + "; ".join(a.contract.reasons[:3])
        lines += ["", f"evidence contract: {verdict}"]
    if show_record:
        path = " → ".join(f"{t.state.value}" for t in a.record.path)
        lines += [f"path: {path}"]
        lines.append(f"harness: {a.harness}" + (f" ({a.model})" if a.model else ""))
    return "\n".join(lines) + "\n"
