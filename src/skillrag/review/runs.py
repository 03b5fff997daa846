"""The runs of a workspace as a reviewer sees them: ``list_runs`` for the list page, ``load_run``
for one case (the case as the agent saw it, the guidance versions with steps linked to snippets,
each cited article with its snippets placed, and the evidence contract's verdict), ``add_evidence``
for a snippet a reviewer adds.

**Versions.** Version 0 is the output as saved; each later version has its own guidance and its
snippets: the output's, then every snippet a reviewer added up to it (``ReviewStore``). Each version
is read as an output of its own (``version_output``): its steps are linked to *its* snippets by the
one rule of ``skill.links``, each snippet's ``why`` read against the guidance it was written for (the
agent's for the agent's snippets, the version it was added to for a reviewer's), so an edit that
reorders steps never links a step to a snippet by number; its verdict is the evidence contract's on
that output (``SkillTools.check_output`` and ``check_audit``); its warnings are the save warnings
recomputed for it (``skill.gaps.evidence_gaps``, against the current corpus, the agent-facing case
and the articles the output cites or consulted; ``unfetched_citation`` is left out: a reviewer reads
the article on the page). An approval shows the latest version's warnings and asks the reviewer to
confirm them.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillrag.corpus import Article, check_id
from skillrag.errors import (
    CaseNotFound,
    ConfigError,
    ContractViolation,
    ReviewConflict,
    SkillNotFound,
    UserError,
)
from skillrag.review.markdown import Rendered, plain_inline, render_article
from skillrag.review.store import AddedSnippet, GuidanceVersion, ReviewAction, ReviewState, ReviewStore
from skillrag.review.view import GuidanceLine, Segment, Span, link_snippets, segments, split_guidance
from skillrag.skill import Case, CaseFile, SkillRegistry, SkillTools
from skillrag.skill.cases import CaseRecord
from skillrag.skill.contract import locate, locate_all, normalize, verify_audit
from skillrag.skill.gaps import Gap, case_text, evidence_gaps
from skillrag.skill.links import guidance_steps, strip_marker
from skillrag.workspace import RunFolder, Workspace

__all__ = [
    "SNIPPET_STATUSES",
    "SUMMARY_CHARS",
    "ArticleEvidence",
    "RunSummary",
    "RunView",
    "SnippetCheck",
    "VersionView",
    "VersionWarning",
    "add_evidence",
    "guidance_summary",
    "list_runs",
    "load_run",
    "run_folder",
    "version_output",
]

#: Longest one-line summary of a guidance on the list page, in characters (cut on a word, with "…").
SUMMARY_CHARS = 120

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
    say (an older record, a test double, an output saved outside a run). ``contact_reason``: the case's
    ("" when the case is not available). Of the latest guidance ``version``: ``summary`` (one line,
    ``guidance_summary``), ``n_steps``, ``n_snippets`` and the number of its ``warnings`` (module doc;
    None when there is no output to check)."""

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
    contact_reason: str = ""
    summary: str = ""
    n_steps: int = 0
    n_snippets: int = 0
    warnings: int | None = None
    version: int = 0


@dataclass
class SnippetCheck:
    """One snippet of the output: its fields, ``status`` (``SNIPPET_STATUSES``), a one-line
    ``message`` for anything but ``verified``, the ``stored`` offsets ``(start, end)`` of its audit
    record, and ``span``: where the page marks it in the current article body (None = not found);
    ``added_in``/``added_by``: the version and reviewer that added it (None for the agent's)."""

    index: int
    source_article: str
    source_title: str
    text: str
    why: str
    status: str
    message: str = ""
    stored: tuple[int, int] | None = None
    span: Span | None = None
    added_in: int | None = None
    added_by: str | None = None


@dataclass
class ArticleEvidence:
    """A cited article: ``found`` in the corpus or not, its title and body cut into ``segments``
    (snippets marked), ``rendered`` (its body as the page shows it: Markdown with the same marks,
    ``review.markdown``), the ``snippets`` citing it and the ones that could not be placed
    (``unplaced``)."""

    id: str
    title: str
    found: bool
    content_hash: str = ""
    segments: list[Segment] = field(default_factory=list)
    snippets: list[int] = field(default_factory=list)
    unplaced: list[int] = field(default_factory=list)
    changed: bool = False
    rendered: Rendered | None = None


@dataclass(frozen=True)
class VersionWarning:
    """A warning of one version (``gap``) and where the page shows it: the ``steps`` (numbers) whose
    text names its subject, or the ``snippet`` (0-based) it is about."""

    gap: Gap
    steps: tuple[int, ...] = ()
    snippet: int | None = None


@dataclass
class VersionView:
    """One guidance version with its ``lines`` (steps linked to its snippets), the snippets no step
    links to (``unlinked``), ``n_snippets`` (its snippets are the run's first ``n_snippets``), the
    evidence contract's ``reasons`` for it, and its ``warnings`` (module doc)."""

    version: GuidanceVersion
    lines: list[GuidanceLine]
    unlinked: list[int]
    n_snippets: int = 0
    reasons: list[str] = field(default_factory=list)
    warnings: list[VersionWarning] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.reasons

    def step_warnings(self, number: int | None) -> list[VersionWarning]:
        """The warnings shown beside step ``number``."""
        return [w for w in self.warnings if number is not None and number in w.steps]


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
    run = ws.run_folder(case_id)
    if not run.folder.is_dir() or not run.present:
        raise CaseNotFound(f"no run for case {case_id!r} in {ws.runs_dir}")
    return run.folder


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
    files = RunFolder.at(folder)
    record, _ = _read_json(files.record, files.record.name, probs)
    output, raw = _read_json(files.output, files.output.name, probs)
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


class _Readers:
    """What reading many runs shares: skill tools per skill name, case files per path, one analyser."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.tools: dict[str, tuple[SkillTools, list[str]]] = {}
        self.case_files: dict[Path, CaseFile | UserError] = {}
        self._terms: Any = None

    def skill_tools(self, name: str, problems: list[str]) -> SkillTools:
        if name not in self.tools:
            found: list[str] = []
            self.tools[name] = (_skill_tools(self.ws, name, found), found)
        tools, found = self.tools[name]
        problems += found
        return tools

    def case_file(self, path: Path) -> CaseFile:
        if path not in self.case_files:
            try:
                self.case_files[path] = CaseFile(path)
            except UserError as exc:
                self.case_files[path] = exc
        got = self.case_files[path]
        if isinstance(got, UserError):
            raise got
        return got

    @property
    def terms(self) -> Any:
        if self._terms is None:
            from skillrag.text import Analyzer  # the analyser skill.links uses by default

            self._terms = Analyzer().terms
        return self._terms


def list_runs(ws: Workspace, store: ReviewStore | None = None) -> list[RunSummary]:
    """Every run under ``runs/`` (folders with a plain case id and an output or a record), newest
    first, then by case id, each with its contact reason and its latest guidance version's summary,
    steps, snippets and warnings (module doc). Never raises for a damaged run."""
    store = store or ReviewStore(ws)
    states = store.states()
    readers = _Readers(ws)
    rows = []
    if ws.runs_dir.is_dir():
        for folder in ws.runs_dir.iterdir():
            try:
                run_folder(ws, folder.name)
            except UserError:
                continue
            summary, _, output = _summary(folder, states)
            rows.append(_with_digest(ws, folder, summary, output, store, readers))
    rows.sort(key=lambda r: r.case_id)
    rows.sort(key=lambda r: r.date, reverse=True)
    return rows


def _with_digest(ws: Workspace, folder: Path, summary: RunSummary, output: Any, store: ReviewStore,
                 readers: _Readers) -> RunSummary:
    """``summary`` with the list page's columns (``RunSummary`` doc) filled in."""
    problems: list[str] = []
    tools = readers.skill_tools(summary.skill, problems)
    case, _ = _load_case(ws, folder, tools.skill.config.cases, problems, readers)
    extra: dict[str, Any] = {"contact_reason": case.contact_reason if case is not None else ""}
    if isinstance(output, dict) and summary.output_sha256 is not None:
        original = output.get("guidance") if isinstance(output.get("guidance"), str) else ""
        versions = store.versions(summary.case_id, summary.output_sha256, original)
        out = version_output(output, versions)
        arts, bodies, titles = _articles(tools, out)
        latest = _version_view(tools, output, versions, len(versions) - 1, [], arts, bodies, titles,
                               case, readers.terms)
        text, n_steps = guidance_summary(latest.version.guidance)
        extra |= {"summary": text, "n_steps": n_steps, "n_snippets": latest.n_snippets,
                  "warnings": len(latest.warnings), "version": latest.version.version}
    return RunSummary(**{**summary.__dict__, **extra})


def guidance_summary(guidance: str, limit: int = SUMMARY_CHARS) -> tuple[str, int]:
    """A one-line summary of ``guidance`` and its number of steps (``skill.links``'s cut): the text of
    its first step's first line without its number (the first line when it has no step), Markdown
    markup removed, whitespace collapsed, cut at ``limit`` characters on a word with "…"."""
    lines = split_guidance(guidance)
    steps = guidance_steps(lines)
    head = steps[0].head if steps else (lines[0].text if lines else "")
    text = " ".join(plain_inline(strip_marker(head)).split())
    if len(text) > limit:
        room = text[: limit - 1]
        text = (room.rsplit(" ", 1)[0] if " " in room else room).rstrip(" ,;:") + "…"
    return text, len(steps)


def _load_case(ws: Workspace, folder: Path, skill_cases: str | None, problems: list[str],
               readers: _Readers | None = None) -> tuple[Case | None, str]:
    case_file = RunFolder.at(folder).case
    data, raw = _read_json(case_file, case_file.name, problems)
    if data is not None:
        try:
            case = CaseRecord.model_validate(data).case()
            if case.case_id == folder.name:
                return case, case_file.name
            problems.append(f"{case_file.name}: holds case {case.case_id!r}, not {folder.name!r}")
        except ValidationError as exc:
            err = exc.errors()[0]
            problems.append(f"case.json: {'.'.join(map(str, err['loc'])) or '(top)'}: {err['msg']}")
    candidates = [ws.root / skill_cases] if skill_cases else []
    candidates.append(ws.default_cases)
    for path in candidates:
        if not path.is_file():
            continue
        try:
            cf = readers.case_file(path) if readers is not None else CaseFile(path)
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


def version_output(output: dict[str, Any], versions: Sequence[GuidanceVersion]) -> dict[str, Any]:
    """The output as the last of ``versions`` (a version and every version before it, oldest first)
    stands: its guidance; the output's snippets, then those each version added; ``n_snippets``;
    ``articles_consulted`` with the added snippets' articles (the reviewer read them on the page); and
    ``audit.snippets`` with an audit record for each added snippet (``audit.warnings`` dropped: they were
    the saved guidance's). Parts of a damaged output that are not the right shape are left as they are."""
    out = dict(output)
    if versions:
        out["guidance"] = versions[-1].guidance
    added = [a for v in versions for a in v.added]
    if not added or not isinstance(output.get("snippets"), list):
        return out
    base = list(output["snippets"])
    out["snippets"] = base + [a.snippet() for a in added]
    out["n_snippets"] = len(out["snippets"])
    consulted = output.get("articles_consulted")
    if isinstance(consulted, list):
        out["articles_consulted"] = list(consulted) + list(dict.fromkeys(
            a.source_article for a in added if a.source_article not in consulted))
    audit = output.get("audit")
    if isinstance(audit, dict) and isinstance(audit.get("snippets"), list):
        out["audit"] = {k: v for k, v in audit.items() if k != "warnings"}
        out["audit"]["snippets"] = list(audit["snippets"]) + [a.record(len(base) + i) for i, a in enumerate(added)]
    return out


def _basis(output: dict[str, Any], versions: Sequence[GuidanceVersion]) -> list[str | None]:
    """For each snippet of ``version_output(output, versions)``, the guidance its ``why`` was written
    for: the output's own for the agent's, the guidance of the version that added it for a reviewer's."""
    original = output.get("guidance") if isinstance(output.get("guidance"), str) else ""
    base = output.get("snippets") if isinstance(output.get("snippets"), list) else []
    return [original] * len(base) + [v.guidance for v in versions for _ in v.added]


def _articles(tools: SkillTools, out: dict[str, Any]) -> tuple[dict[str, Article], dict[str, str], dict[str, str]]:
    """The articles ``out`` cites and consulted that the corpus holds: by id, their bodies, their titles."""
    snippets = out.get("snippets") if isinstance(out.get("snippets"), list) else []
    consulted = out.get("articles_consulted") if isinstance(out.get("articles_consulted"), list) else []
    ids = [_text(s.get("source_article")) for s in snippets if isinstance(s, dict)] + [
        a for a in consulted if isinstance(a, str)]
    arts = tools.store.get_many([a for a in dict.fromkeys(ids) if a])
    return arts, {a: x.body for a, x in arts.items()}, {a: x.title for a, x in arts.items()}


def _contract(tools: SkillTools, out: dict[str, Any], n_added: int) -> list[str]:
    """The evidence contract's reasons for a version's output (``validate`` and the audit re-check, as
    ``skillrag validate`` gives them), under the run's skill's limits, except that the ``n_added``
    snippets a reviewer added do not count against ``max_snippets``: that limit is the agent's budget of
    evidence, and a full output must still take the passage a reviewer found missing."""
    limits = tools.skill.config.limits()
    if n_added:
        limits = limits.model_copy(update={"max_snippets": limits.max_snippets + n_added})
    return tools.check_output(out, limits=limits) + tools.check_audit(out)[0]


def _where(gap: Gap, steps: Sequence[Any]) -> VersionWarning:
    """Where the page shows ``gap`` (``VersionWarning``): a ``snippets[i]`` subject is that snippet; any
    other subject is shown beside the steps whose text names it (case-insensitively)."""
    if gap.subject.startswith("snippets[") and gap.subject.endswith("]") and gap.subject[9:-1].isdigit():
        return VersionWarning(gap, snippet=int(gap.subject[9:-1]))
    needle = normalize(gap.subject).casefold()
    return VersionWarning(gap, steps=tuple(st.number for st in steps if needle and needle in normalize(st.text).casefold()))


def _version_view(tools: SkillTools, output: dict[str, Any], versions: Sequence[GuidanceVersion], k: int,
                  saved_reasons: list[str] | None, arts: dict[str, Article], bodies: dict[str, str],
                  titles: dict[str, str], case: Case | None, terms: Any) -> VersionView:
    """Version ``k`` of ``versions`` as the page shows it (module doc). ``saved_reasons``: the contract's
    reasons for the output as saved (reused while the version adds no snippet), None to compute them."""
    upto = versions[: k + 1]
    out = version_output(output, upto)
    snippets = out.get("snippets") if isinstance(out.get("snippets"), list) else []
    basis = _basis(output, upto)
    lines = split_guidance(upto[-1].guidance)
    unlinked = link_snippets(lines, snippets, terms=terms, basis=basis)
    n_added = sum(len(v.added) for v in upto)
    reasons = list(saved_reasons) if saved_reasons is not None and not n_added else _contract(tools, out, n_added)
    warnings: list[VersionWarning] = []
    if isinstance(out.get("guidance"), str) and isinstance(out.get("snippets"), list):
        gaps = evidence_gaps(out, bodies, titles=titles, fetched=None, terms=terms, basis=basis,
                             case=case_text(case.model_dump(mode="json")) if case is not None else None)
        steps = guidance_steps(lines)
        warnings = [_where(g, steps) for g in gaps]
    return VersionView(upto[-1], lines, unlinked, len(snippets), reasons, warnings)


def load_run(ws: Workspace, case_id: str, store: ReviewStore | None = None) -> RunView:
    """The review view of ``runs/<case_id>``. Raises ``InvalidIdError`` for a non-plain id and
    ``CaseNotFound`` when the workspace has no run for it; a damaged run is returned with its
    problems, never raised."""
    folder = run_folder(ws, case_id)
    store = store or ReviewStore(ws)
    readers = _Readers(ws)
    problems: list[str] = []
    summary, record, output = _summary(folder, {}, problems)
    view = RunView(summary=summary, record=record, problems=problems)
    tools = readers.skill_tools(summary.skill, problems)
    view.case, view.case_source = _load_case(ws, folder, tools.skill.config.cases, problems, readers)
    view.summary = RunSummary(**{**view.summary.__dict__,
                                 "contact_reason": view.case.contact_reason if view.case else ""})
    view.history = store.actions(case_id)
    if not summary.has_output:
        return view
    if summary.status not in ("accepted", "unknown"):
        problems.append(f"the latest run ended {summary.status}; the output shown was saved by an earlier run")
    sha = summary.output_sha256 or ""
    view.state = store.state(case_id, sha)
    if output is None:  # not JSON: the contract cannot even parse it
        view.accepted, view.reasons = False, [p for p in problems if p.startswith(RunFolder.at(folder).output.name)]
        view.summary = _reviewed(view.summary, view.state)
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
        view.summary = _reviewed(view.summary, view.state)
        return view
    out = view.output
    original = out.get("guidance") if isinstance(out.get("guidance"), str) else ""
    versions = store.versions(case_id, sha, original)
    full = version_output(out, versions)  # every snippet: the output's and all a reviewer added
    arts, bodies, titles = _articles(tools, full)
    view.snippets = _check_snippets(full, arts)
    n_agent = len(out["snippets"]) if isinstance(out.get("snippets"), list) else 0
    added_by = [(v.version, v.reviewer) for v in versions for _ in v.added]
    for c in view.snippets[n_agent:]:
        c.added_in, c.added_by = added_by[c.index - n_agent]
    snippets = full.get("snippets") if isinstance(full.get("snippets"), list) else []
    cited = list(dict.fromkeys(_text(s.get("source_article")) for s in snippets
                               if isinstance(s, dict) and _text(s.get("source_article"))))
    for aid in cited:
        art = arts.get(aid)
        mine = [c for c in view.snippets if c.source_article == aid]
        title = art.title if art is not None else next((c.source_title for c in mine if c.source_title), aid)
        ev = ArticleEvidence(aid, title, art is not None, art.content_hash if art else "",
                             snippets=[c.index for c in mine],
                             unplaced=[c.index for c in mine if c.span is None],
                             changed=any(c.status == "changed" for c in mine))
        if art is not None:
            spans = [c.span for c in mine if c.span is not None]
            ev.segments = segments(art.body, spans)
            ev.rendered = render_article(art.body, spans)
        view.articles.append(ev)
    view.versions = [_version_view(tools, out, versions, k, view.reasons, arts, bodies, titles, view.case,
                                   readers.terms) for k in range(len(versions))]
    latest = view.versions[-1]
    text, n_steps = guidance_summary(latest.version.guidance)
    view.summary = RunSummary(**{**_reviewed(view.summary, view.state).__dict__, "summary": text,
                                 "n_steps": n_steps, "n_snippets": latest.n_snippets,
                                 "warnings": len(latest.warnings), "version": latest.version.version})
    return view


def _reviewed(summary: RunSummary, state: ReviewState) -> RunSummary:
    return RunSummary(**{**summary.__dict__, "review": state.state,
                         "reviewer": state.last.reviewer if state.last else None})


def _passage(art: Article, start: int | None, end: int | None, text: str | None) -> tuple[int, int, int] | None:
    """Where the passage a reviewer gave stands in ``art``: ``(start, end, occurrences)``; None when
    the pasted ``text`` does not occur (the evidence contract then says so). Raises ``UserError`` for
    offsets outside the article, only one offset, offsets that hold other text than ``text``, or
    neither offsets nor text."""
    body = art.body
    pasted = text if text is not None and text.strip() else None
    if (start is None) != (end is None):
        raise UserError("offsets: give both start and end (character offsets in the article), or neither")
    if start is not None and end is not None:
        if not 0 <= start < end <= len(body):
            raise UserError(f"offsets: {start}..{end} are not a passage of {art.id!r} (its text has "
                            f"{len(body)} characters: 0 <= start < end <= {len(body)})")
        if pasted is not None and normalize(pasted) != normalize(body[start:end]):
            raise UserError(f"offsets: characters {start}..{end} of {art.id!r} do not hold the passage you pasted; "
                            "give the offsets or the passage, or make them agree")
        return start, end, max(1, len(locate_all(body[start:end], body)))
    if pasted is None:
        raise UserError("passage: give its start and end offsets in the article, or paste it word for word")
    spans = locate_all(pasted, body)
    if not spans:
        return None
    return spans[0][0], spans[0][1], len(spans)


def add_evidence(ws: Workspace, case_id: str, reviewer: str, *, output_sha256: str, base_version: int,
                 article_id: str, why: str, start: int | None = None, end: int | None = None,
                 text: str | None = None, comment: str | None = None,
                 store: ReviewStore | None = None) -> ReviewAction:
    """Add a passage of an article to the latest guidance version's snippets, as version
    ``base_version + 1`` (the guidance unchanged; the output file and version 0 never change).

    The passage is ``body[start:end]`` of article ``article_id`` (character offsets in its stored
    text), or the pasted ``text`` found in it by the evidence contract's ``locate`` (its first
    occurrence). The new version is then checked as an output by the evidence contract, exactly as
    ``save_output`` checks one (``SkillTools.check_output`` with the run's skill: verbatim, length, not a
    duplicate of a snippet of the same article, at most ``max_snippets``, an article in the skill's
    sources; a reviewer's snippets do not count against ``max_snippets``, ``_contract``), and stored only
    if it passes. Raises ``ContractViolation`` with every reason,
    ``UserError`` for bad input (no ``why``, bad offsets, an unknown article), ``ReviewConflict`` when
    ``output_sha256`` is not the run's output or ``base_version`` not its latest version."""
    store = store or ReviewStore(ws)
    view = load_run(ws, case_id, store)
    if view.summary.output_sha256 is None or view.output is None:
        raise UserError(f"case {case_id!r} has no saved output to add evidence to")
    if output_sha256 != view.summary.output_sha256:
        raise ReviewConflict(f"case {case_id!r} was run again after you opened the page, so its output is not the one "
                             "you reviewed; nothing was recorded")
    latest = view.latest
    if latest is None or not latest.accepted:
        raise UserError("the latest version fails the evidence contract, so evidence cannot be added to it; "
                        "reject it or run the case again")
    if base_version != latest.version.version:
        raise ReviewConflict(f"case {case_id!r}: you added evidence to version {base_version}, but the latest is "
                             f"version {latest.version.version} (someone edited it meanwhile); reload the page")
    why = why.strip() if isinstance(why, str) else ""
    if not why:
        raise UserError("why: say which step the passage backs and why (e.g. \"step 2: the fee rule\")")
    tools = _skill_tools(ws, view.summary.skill, [])
    art = tools.articles.get(check_id(article_id))  # ArticleNotFound outside the skill's sources too
    where = _passage(art, start, end, text)
    versions = [v.version for v in view.versions]
    number = latest.version.version + 1
    n_added = sum(len(v.added) for v in versions) + 1
    if where is None:  # let the contract say what is wrong with the pasted text
        trial = {"source_article": art.id, "source_title": art.title, "text": text or "", "why": why}
        out = version_output(view.output, versions)
        consulted = [a for a in out.get("articles_consulted") or [] if isinstance(a, str)]
        out = {**out, "snippets": [*out["snippets"], trial], "n_snippets": len(out["snippets"]) + 1,
               "articles_consulted": consulted + ([] if art.id in consulted else [art.id])}
        out.pop("audit", None)
        raise ContractViolation(_contract(tools, out, n_added) or [f"text: not a verbatim passage of {art.id!r}"])
    a, b, occurrences = where
    added = AddedSnippet(art.id, art.title, art.body[a:b], why, a, b, art.content_hash, occurrences)
    candidate = version_output(view.output, [*versions, GuidanceVersion(number, latest.version.guidance,
                                                                         added=(added,))])
    reasons = _contract(tools, candidate, n_added)
    if reasons:
        raise ContractViolation(reasons)
    return store.add_evidence(case_id, view.summary.output_sha256, reviewer, latest.version.guidance, added,
                              base_version=base_version, comment=comment)
