"""The runs of a workspace as a reviewer sees them: ``list_runs`` for the list page, ``load_run``
for one case (the case as the agent saw it, the guidance versions with steps linked to snippets,
each cited article with its snippets placed, and the evidence contract's verdict).

A run is a folder ``runs/<case_id>/`` holding ``record.json`` (from a harness run; none when the
output was saved through the tools outside a run, ``SkillTools.save_output``),
``output.json`` (only when the evidence contract accepted a save) and ``case.json`` (the
agent-facing case; older runs fall back to the workspace case file). Damaged files (not JSON, wrong
shapes, a tampered snippet) never raise: they are reported on the view as problems and contract
reasons. The contract check is the one ``skillrag validate`` runs (``SkillTools.check_output`` and
``check_audit``, which calls ``skill.contract.verify_audit``); each snippet's own status comes from
``verify_audit`` on its audit record alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillrag.corpus import Article, check_id
from skillrag.errors import CaseNotFound, ConfigError, SkillNotFound, UserError
from skillrag.review.store import GuidanceVersion, ReviewAction, ReviewState, ReviewStore
from skillrag.review.view import GuidanceLine, Segment, Span, link_snippets, segments, split_guidance
from skillrag.skill import Case, CaseFile, SkillRegistry, SkillTools
from skillrag.skill.cases import CaseRecord
from skillrag.skill.contract import locate, verify_audit
from skillrag.workspace import Workspace

__all__ = [
    "SNIPPET_STATUSES",
    "ArticleEvidence",
    "RunSummary",
    "RunView",
    "SnippetCheck",
    "VersionView",
    "list_runs",
    "load_run",
    "run_folder",
]

#: What the page says about each snippet: ``verified`` (article unchanged, stored offsets hold the
#: text), ``changed`` (its article changed since the save), ``gone`` (its article left the corpus),
#: ``offsets`` (article unchanged but the stored offsets do not hold the text: tampered),
#: ``unaudited`` (no stored offsets), ``malformed`` (not a snippet object).
SNIPPET_STATUSES = ("verified", "changed", "gone", "offsets", "unaudited", "malformed")


@dataclass(frozen=True)
class RunSummary:
    """One row of the list page. ``harness``, ``model`` and ``search``: what ``record.json`` (written by
    the harness run) says, never the output's agent-writable ``meta`` ("" / None without a record).
    ``date``: ISO 8601 (the record's start, else the save time, else the
    folder's modification time); ``status``: the run record's (``accepted``/``failed``/
    ``budget_exceeded``; ``unknown`` without a readable record); ``review``: a ``ReviewStore`` state, or
    ``no output`` when nothing was saved; ``output_sha256``: hash of the ``output.json`` bytes;
    ``search``: the backend and mode ``retrieve`` used (``"wiki / hybrid"``), None when the record does not
    say (an older record, a test double, an output saved outside a run)."""

    case_id: str
    skill: str
    harness: str
    model: str | None
    status: str
    date: str
    has_output: bool
    output_sha256: str | None
    review: str
    reviewer: str | None = None
    search: str | None = None


@dataclass
class SnippetCheck:
    """One snippet of the output: its fields, ``status`` (``SNIPPET_STATUSES``), a one-line
    ``message`` for anything but ``verified``, the ``stored`` offsets ``(start, end)`` of its audit
    record, and ``span``: where the page marks it in the current article body (None = not found)."""

    index: int
    source_article: str
    source_title: str
    text: str
    why: str
    status: str
    message: str = ""
    stored: tuple[int, int] | None = None
    span: Span | None = None


@dataclass
class ArticleEvidence:
    """A cited article: ``found`` in the corpus or not, its title and body cut into ``segments``
    (snippets marked), the ``snippets`` citing it and the ones that could not be placed (``unplaced``)."""

    id: str
    title: str
    found: bool
    content_hash: str = ""
    segments: list[Segment] = field(default_factory=list)
    snippets: list[int] = field(default_factory=list)
    unplaced: list[int] = field(default_factory=list)
    changed: bool = False


@dataclass
class VersionView:
    """One guidance version with its ``lines`` (steps linked to snippets) and the snippets no step
    links to (``unlinked``)."""

    version: GuidanceVersion
    lines: list[GuidanceLine]
    unlinked: list[int]


@dataclass
class RunView:
    """Everything the case page shows. ``problems``: damaged files and fallbacks, one line each;
    ``reasons``/``notes``: the evidence contract's verdict, as ``skillrag validate`` gives it
    (``accepted`` is None when there is no output to check)."""

    summary: RunSummary
    case: Case | None = None
    case_source: str = ""
    output: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    accepted: bool | None = None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    snippets: list[SnippetCheck] = field(default_factory=list)
    articles: list[ArticleEvidence] = field(default_factory=list)
    versions: list[VersionView] = field(default_factory=list)
    history: list[ReviewAction] = field(default_factory=list)
    state: ReviewState = field(default_factory=ReviewState)

    @property
    def latest(self) -> VersionView | None:
        return self.versions[-1] if self.versions else None

    def version(self, number: int) -> VersionView | None:
        return next((v for v in self.versions if v.version.version == number), None)


def run_folder(ws: Workspace, case_id: str) -> Path:
    """``runs/<case_id>``; ``InvalidIdError`` for a non-plain id, ``CaseNotFound`` when there is no run."""
    folder = ws.runs_dir / check_id(case_id, "case")
    if not folder.is_dir() or not ((folder / "output.json").is_file() or (folder / "record.json").is_file()):
        raise CaseNotFound(f"no run for case {case_id!r} in {ws.runs_dir}")
    return folder


def _read_json(path: Path, what: str, problems: list[str]) -> tuple[Any, bytes | None]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        problems.append(f"{what}: cannot read ({exc.strerror})")
        return None, None
    try:
        return json.loads(raw.decode("utf-8")), raw
    except UnicodeDecodeError as exc:
        problems.append(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except json.JSONDecodeError as exc:
        problems.append(f"{what}: not JSON ({exc.msg} at line {exc.lineno})")
    return None, raw


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _summary(folder: Path, states: dict[tuple[str, str], ReviewState],
             problems: list[str] | None = None) -> tuple[RunSummary, Any, Any]:
    probs: list[str] = [] if problems is None else problems
    record, _ = _read_json(folder / "record.json", "record.json", probs)
    output, raw = _read_json(folder / "output.json", "output.json", probs)
    if record is not None and not isinstance(record, dict):
        probs.append("record.json: not a JSON object")
        record = None
    rec = record or {}
    out = output if isinstance(output, dict) else {}
    audit = out.get("audit") if isinstance(out.get("audit"), dict) else {}
    sha = hashlib.sha256(raw).hexdigest() if raw is not None else None
    mtime = datetime.fromtimestamp(folder.stat().st_mtime, UTC).isoformat(timespec="seconds")
    date = _text(rec.get("started_at")) or _text(audit.get("saved_at")) or mtime
    status = _text(rec.get("status")) or ("accepted" if raw is not None else "unknown")
    if sha is None:
        review, who = "no output", None
    else:
        st = states.get((folder.name, sha), ReviewState())
        review, who = st.state, (st.last.reviewer if st.last is not None else None)
    summary = RunSummary(
        case_id=folder.name,
        skill=_text(rec.get("skill")) or _text(audit.get("skill")),
        harness=_text(rec.get("harness")),  # provenance from the run record only: output.meta is the agent's
        model=_text(rec.get("model")) or None,
        status=status,
        date=date,
        has_output=raw is not None,
        output_sha256=sha,
        review=review,
        reviewer=who,
        search=" / ".join(x for x in (_text(rec.get("search_backend")), _text(rec.get("search_mode"))) if x) or None,
    )
    return summary, record, output


def list_runs(ws: Workspace, store: ReviewStore | None = None) -> list[RunSummary]:
    """Every run under ``runs/`` (folders with a plain case id and an output or a record), newest
    first, then by case id. Never raises for a damaged run."""
    store = store or ReviewStore(ws)
    states = store.states()
    rows = []
    if ws.runs_dir.is_dir():
        for folder in ws.runs_dir.iterdir():
            try:
                run_folder(ws, folder.name)
            except UserError:
                continue
            rows.append(_summary(folder, states)[0])
    rows.sort(key=lambda r: r.case_id)
    rows.sort(key=lambda r: r.date, reverse=True)
    return rows


def _load_case(ws: Workspace, folder: Path, skill_cases: str | None, problems: list[str]) -> tuple[Case | None, str]:
    data, raw = _read_json(folder / "case.json", "case.json", problems)
    if data is not None:
        try:
            case = CaseRecord.model_validate(data).case()
            if case.case_id == folder.name:
                return case, "case.json"
            problems.append(f"case.json: holds case {case.case_id!r}, not {folder.name!r}")
        except ValidationError as exc:
            err = exc.errors()[0]
            problems.append(f"case.json: {'.'.join(map(str, err['loc'])) or '(top)'}: {err['msg']}")
    candidates = [ws.root / skill_cases] if skill_cases else []
    candidates.append(ws.root / "cases.jsonl")
    for path in candidates:
        if not path.is_file():
            continue
        try:
            cf = CaseFile(path)
        except UserError as exc:
            problems.append(f"case file: {exc}")
            continue
        if folder.name in cf:
            return cf.load(folder.name), str(path.relative_to(ws.root) if path.is_relative_to(ws.root) else path)
    if raw is None:
        problems.append("the case is not available (no case.json in the run folder and no case file holds it)")
    return None, ""


def _skill_tools(ws: Workspace, name: str, problems: list[str]) -> SkillTools:
    reg = SkillRegistry(ws)
    fallback = ws.config.harness.skill
    try:
        return SkillTools(ws, reg.get(name or fallback))
    except (SkillNotFound, ConfigError) as exc:
        problems.append(f"skill {name!r} cannot be loaded ({exc}); checked with {fallback!r}'s limits")
        return SkillTools(ws, reg.get(fallback))


def _check_snippets(output: dict[str, Any], arts: dict[str, Article]) -> list[SnippetCheck]:
    snippets = output.get("snippets") if isinstance(output.get("snippets"), list) else []
    audit = output.get("audit") if isinstance(output.get("audit"), dict) else {}
    records = audit.get("snippets") if isinstance(audit.get("snippets"), list) else []
    by_index: dict[int, dict[str, Any]] = {}
    for rec in records:
        if isinstance(rec, dict) and isinstance(rec.get("index"), int) and rec["index"] not in by_index:
            by_index[rec["index"]] = rec
    bodies = {a: x.body for a, x in arts.items()}
    hashes = {a: x.content_hash for a, x in arts.items()}
    out: list[SnippetCheck] = []
    for i, snip in enumerate(snippets):
        if not isinstance(snip, dict):
            out.append(SnippetCheck(i, "", "", "", "", "malformed", "not a snippet object"))
            continue
        aid, text = _text(snip.get("source_article")), _text(snip.get("text"))
        check = SnippetCheck(i, aid, _text(snip.get("source_title")), text, _text(snip.get("why")), "verified")
        rec = by_index.get(i)
        art = arts.get(aid)
        if rec is not None and isinstance(rec.get("start"), int) and isinstance(rec.get("end"), int):
            check.stored = (rec["start"], rec["end"])
        if rec is None:
            check.status, check.message = "unaudited", "no stored offsets for this snippet (no audit record)"
        else:
            reasons, notes = verify_audit({"snippets": snippets, "audit": {"snippets": [rec]}}, bodies, hashes)
            if reasons:
                check.status, check.message = "offsets", reasons[0]
            elif notes:
                check.status, check.message = ("changed" if aid in hashes else "gone"), notes[0]
        if check.status == "verified" and check.stored is not None:
            check.span = Span(i, check.stored[0], check.stored[1], "stored")
        elif art is not None and text:
            where = locate(text, art.body)
            if where is not None:
                check.span = Span(i, where[0], where[1], "located")
        out.append(check)
    return out


def load_run(ws: Workspace, case_id: str, store: ReviewStore | None = None) -> RunView:
    """The review view of ``runs/<case_id>``. Raises ``InvalidIdError`` for a non-plain id and
    ``CaseNotFound`` when the workspace has no run for it; a damaged run is returned with its
    problems, never raised."""
    folder = run_folder(ws, case_id)
    store = store or ReviewStore(ws)
    problems: list[str] = []
    summary, record, output = _summary(folder, {}, problems)
    view = RunView(summary=summary, record=record, problems=problems)
    tools = _skill_tools(ws, summary.skill, problems)
    view.case, view.case_source = _load_case(ws, folder, tools.skill.config.cases, problems)
    view.history = store.actions(case_id)
    if not summary.has_output:
        return view
    if summary.status not in ("accepted", "unknown"):
        problems.append(f"the latest run ended {summary.status}; the output shown was saved by an earlier run")
    sha = summary.output_sha256 or ""
    view.state = store.state(case_id, sha)
    view.summary = RunSummary(**{**summary.__dict__, "review": view.state.state,
                                 "reviewer": view.state.last.reviewer if view.state.last else None})
    if output is None:  # not JSON: the contract cannot even parse it
        view.accepted, view.reasons = False, [p for p in problems if p.startswith("output.json")]
        return view
    view.reasons = tools.check_output(output)
    if isinstance(output, dict):
        view.output = output
        if not isinstance(output.get("audit"), dict):
            view.notes.append("no audit block: the output was not written by save_output, so there are no "
                              "stored offsets to re-check")
        audit_reasons, notes = tools.check_audit(output)
        view.reasons += audit_reasons
        view.notes += notes
    view.accepted = not view.reasons
    if view.output is None:
        return view
    out = view.output
    snippets = out.get("snippets") if isinstance(out.get("snippets"), list) else []
    cited = list(dict.fromkeys(_text(s.get("source_article")) for s in snippets
                               if isinstance(s, dict) and _text(s.get("source_article"))))
    arts = tools.store.get_many(cited)
    view.snippets = _check_snippets(out, arts)
    for aid in cited:
        art = arts.get(aid)
        mine = [c for c in view.snippets if c.source_article == aid]
        title = art.title if art is not None else next((c.source_title for c in mine if c.source_title), aid)
        ev = ArticleEvidence(aid, title, art is not None, art.content_hash if art else "",
                             snippets=[c.index for c in mine],
                             unplaced=[c.index for c in mine if c.span is None],
                             changed=any(c.status == "changed" for c in mine))
        if art is not None:
            ev.segments = segments(art.body, [c.span for c in mine if c.span is not None])
        view.articles.append(ev)
    original = out.get("guidance") if isinstance(out.get("guidance"), str) else ""
    for v in store.versions(case_id, sha, original):
        lines = split_guidance(v.guidance)
        view.versions.append(VersionView(v, lines, link_snippets(lines, snippets)))
    return view
