"""The four deterministic tools of a skill: ``load_case``, ``retrieve``, ``get_article``, ``save_output``.

They are the trust boundary between an agent and the workspace: the agent reasons, the tools
read and write. The same ``SkillTools`` object backs the Python API, the ``skillrag tool ...``
commands (and so the exported scripts), the MCP server and the harnesses; ``skillrag.skill.views``
turns its results into the JSON every surface shows. Each call is timed and recorded in ``.calls``
(and appended as one JSON line to ``log_path`` when given, its arguments summarised to a bounded
size), success or failure, and traced as one ``skillrag.tool.<name>`` span (``skill._spans``).

Budgets: every call is charged to its case's session in the workspace store (``skill.budget``):
``retrieve`` (a page read included) spends a query, ``get_article`` a fetch the first time the case
reads that article (whole, ``section`` or ``summary``; re-reading it is free), ``save_output`` a save
(``check=True`` spends nothing, and neither does ``save_status``, which shows the case's last save result
again). An over-budget call
raises ``BudgetExceeded`` before it runs; a failed call is refunded. Results carry the session's
``BudgetState`` after the call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from skillrag._version import __version__
from skillrag.corpus import Article, ArticleStore, ScopedArticles, SourceScope, check_id, summarize
from skillrag.errors import (
    ArticleNotFound,
    CaseNotFound,
    ContractViolation,
    EmptyInputError,
    InvalidIdError,
    MalformedSourceError,
    UserError,
)
from skillrag.skill._spans import note_failure, note_result, tool_span
from skillrag.skill.budget import BudgetLedger, BudgetLimits, BudgetState, Charge
from skillrag.skill.cases import Case, CaseFile
from skillrag.skill.contract import ContractLimits, locate_all, validate_output, verify_audit
from skillrag.skill.gaps import Gap, case_text, evidence_gaps
from skillrag.skill.registry import Skill
from skillrag.text import tool_names
from skillrag.workspace import RunFolder, Workspace, atomic_write_text
from skillrag.workspace.config import MAX_K
from skillrag.workspace.runs import check_output_target

__all__ = [
    "ArticleView",
    "EvidenceRecord",
    "PageRead",
    "RetrieveResult",
    "Retriever",
    "SaveStatus",
    "SavedOutput",
    "SectionInfo",
    "SkillTools",
    "ToolCall",
    "hit_to_dict",
    "resolve_section",
    "summarize_args",
]

T = TypeVar("T")

#: Longest string kept whole in a logged argument; longer ones are cut and their length noted.
LOG_STRING_CHARS = 200
#: Most list items or mapping keys kept in a logged argument.
LOG_ITEMS = 20
#: Longest error message kept whole in a logged call (a contract rejection lists every reason).
LOG_ERROR_CHARS = 1000


class Retriever(Protocol):
    """What ``retrieve`` needs: ``skillrag.search``'s retriever (or a test double). ``search_pages``
    and ``read_page`` are optional (the ``wiki`` backend's navigation pages)."""

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[Any]: ...


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


def summarize_args(value: Any, depth: int = 0) -> Any:
    """``value`` cut to a bounded size for the tool-call log: strings over ``LOG_STRING_CHARS``
    characters are cut and end with ``… (N chars)``; lists keep ``LOG_ITEMS`` items and mappings
    ``LOG_ITEMS`` keys (plus a note of how many were left out); nesting below 3 levels becomes a
    type name."""
    if isinstance(value, str):
        return _cut(value, LOG_STRING_CHARS)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= 3:
        return f"<{type(value).__name__}>"
    if isinstance(value, Mapping):
        items = list(value.items())
        out = {str(k): summarize_args(v, depth + 1) for k, v in items[:LOG_ITEMS]}
        if len(items) > LOG_ITEMS:
            out["…"] = f"{len(items) - LOG_ITEMS} more keys"
        return out
    if isinstance(value, list | tuple):
        out_list = [summarize_args(v, depth + 1) for v in value[:LOG_ITEMS]]
        if len(value) > LOG_ITEMS:
            out_list.append(f"… {len(value) - LOG_ITEMS} more items")
        return out_list
    return summarize_args(str(value), depth)


@dataclass(frozen=True)
class ToolCall:
    """One tool call: ``tool`` name, its ``args`` (summarised to a bounded size, ``summarize_args``),
    wall time ``ms`` in milliseconds, ``ok``, the ``error`` message when it failed (cut at
    ``LOG_ERROR_CHARS``), and the ``case_id`` it was charged to (when known; cut as an argument is).
    Every field is bounded, so one call's log line is too (``SkillTools.log_path``)."""

    tool: str
    args: dict[str, Any]
    ms: float
    ok: bool
    error: str | None = None
    at: str = ""
    case_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "case_id": self.case_id, "args": self.args, "ms": round(self.ms, 3),
                "ok": self.ok, "error": self.error, "at": self.at}


@dataclass(frozen=True)
class SectionInfo:
    """One section of an article: its 1-based ``index`` in the article, ``heading``, ``level``,
    ``path`` (the headings from the outermost enclosing section down to this one) and character
    offsets ``body[start:end]`` in the article's raw body."""

    index: int
    heading: str
    level: int
    start: int
    end: int
    path: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "heading": self.heading, "path": " > ".join(self.path), "level": self.level,
                "start": self.start, "end": self.end}


def section_infos(article: Article) -> tuple[SectionInfo, ...]:
    """The article's sections with their heading paths (levels nest as in Markdown)."""
    out: list[SectionInfo] = []
    stack: list[tuple[int, str]] = []
    for i, sec in enumerate(article.sections, 1):
        while stack and stack[-1][0] >= sec.level:
            stack.pop()
        stack.append((sec.level, sec.heading))
        out.append(SectionInfo(i, sec.heading, sec.level, sec.start, sec.end, tuple(h for _, h in stack)))
    return tuple(out)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def resolve_section(article: Article, spec: str) -> SectionInfo:
    """The section ``spec`` names: its number in the article (``"3"``), its heading path
    (``"Premium card > Fees"``, or any trailing part of the path) or its heading (any case).

    Raises ``ArticleNotFound`` when nothing matches and ``UserError`` when a heading names several
    sections (the message lists each with its number and path)."""
    infos = section_infos(article)
    want = _fold(spec)
    listing = "; ".join(f"{s.index} {' > '.join(s.path)}" for s in infos) or "none"
    by_heading = [s for s in infos if _fold(s.heading) == want]
    if not by_heading and spec.strip().isdigit() and 1 <= int(spec) <= len(infos):
        return infos[int(spec) - 1]
    if not by_heading and ">" in spec:
        parts = [_fold(p) for p in spec.split(">") if p.strip()]
        by_heading = [s for s in infos if [_fold(h) for h in s.path[-len(parts):]] == parts]
    if len(by_heading) == 1:
        return by_heading[0]
    if not by_heading:
        raise ArticleNotFound(f"article {article.id!r} has no section {spec!r} (sections: {listing})")
    options = ", ".join(f"{s.index} ({' > '.join(s.path)})" for s in by_heading)
    raise UserError(f"article {article.id!r} has {len(by_heading)} sections named {spec!r}: {options}; "
                    "name one by its number or its path (e.g. --section 'Parent > Heading')")


@dataclass(frozen=True)
class ArticleView:
    """What ``get_article`` returns: the article ``id``, ``title``, ``parent`` (the document a
    section-article was split from, else None), ``heading_path`` (its headings in the parent),
    its ``sections`` (with offsets in the raw body), and ``text``: the raw body, one section of it
    (``part`` ``section:N``) or a summary. ``offset`` is where ``text`` starts in the raw body (None
    for a summary), so ``body[offset + i]`` is ``text[i]``. ``budget``: the case's budget after the call;
    ``charged``: whether this read spent a fetch (False: a re-read of an article the case already read;
    None: no case session)."""

    id: str
    title: str
    text: str
    content_hash: str = ""
    source_tag: str = ""
    part: str = "body"
    parent: str | None = None
    heading_path: tuple[str, ...] = ()
    sections: tuple[SectionInfo, ...] = ()
    offset: int | None = 0
    budget: BudgetState | None = None
    charged: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The agent-facing JSON (``skillrag.skill.views.article_json``)."""
        from skillrag.skill.views import article_json

        return article_json(self)


@dataclass(frozen=True)
class EvidenceRecord:
    """Where an accepted snippet lies: ``article_body[start:end]`` (character offsets in the raw
    body) of the article whose body hashed to ``content_hash`` (sha256 hex) when it was saved.
    ``occurrences``: how many times the passage occurs in that body (``contract.locate_all``);
    ``matched``: which of them (1-based, in body order) the offsets point at: the first. When a passage
    occurs more than once the record says so, rather than silently standing for one copy."""

    index: int
    source_article: str
    start: int
    end: int
    content_hash: str
    occurrences: int = 1
    matched: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "source_article": self.source_article, "start": self.start,
                "end": self.end, "content_hash": self.content_hash, "occurrences": self.occurrences,
                "matched": self.matched}


@dataclass(frozen=True)
class SavedOutput:
    """An accepted output: its ``path`` (None for a ``check``, which writes nothing), the JSON
    object written (``output``, with an ``audit`` block added), the ``evidence`` offsets of each
    snippet, the ``warnings`` (evidence gaps, ``skillrag.skill.gaps``; they never reject) and the
    case's ``budget`` after the call."""

    path: Path | None
    output: dict[str, Any]
    evidence: list[EvidenceRecord] = field(default_factory=list)
    warnings: list[Gap] = field(default_factory=list)
    budget: BudgetState | None = None
    checked_only: bool = False
    replaced: dict[str, Any] | None = None

    @property
    def case_id(self) -> str:
        return str(self.output["case_id"])


@dataclass(frozen=True)
class SaveStatus:
    """``save_output --status``: the case's ``last`` save attempt as it was reported (``accepted``; for an
    accepted save ``path``, ``evidence``, ``warnings``, ``replaced``; for a rejected one ``reasons``; and
    ``at``, when), None when the session has made none; ``attempts``: save attempts recorded; the
    ``budget`` now (the status itself spends nothing)."""

    case_id: str
    last: dict[str, Any] | None
    attempts: int
    budget: BudgetState


class RetrieveResult(list[Any]):
    """What ``retrieve`` returns: a ``list`` of hits (``skillrag.search.Hit``: article_id, score,
    relevance, bm25_rank, dense_rank, title, section, preview, page_ids, category, customer_type), best
    first, which also carries the ranked navigation ``pages`` (``PageHit``; ``wiki`` backend only), the
    ``query``, the ``filters`` applied, the case's ``budget`` after the call, and how its JSON shows the
    pages (``skillrag.skill.views.retrieve_json``): ``detail`` (None = compact, ``"pages"`` = whole) and
    ``page_articles`` (the most articles a compact page lists; None = all). ``tools``: article id → the
    tool names its body writes (``skillrag.text.tool_names``), for the hits whose article names any."""

    def __init__(self, hits: list[Any], *, query: str, pages: list[Any] | None = None,
                 filters: Any = None, budget: BudgetState | None = None, detail: str | None = None,
                 page_articles: int | None = None, tools: Mapping[str, tuple[str, ...]] | None = None) -> None:
        super().__init__(hits)
        self.query = query
        self.pages = list(pages or [])
        self.filters = filters
        self.budget = budget
        self.detail = detail
        self.page_articles = page_articles
        self.tools = dict(tools or {})


@dataclass(frozen=True)
class PageRead:
    """``retrieve --page``: one navigation page (``skillrag.search.PageView``) and the budget after the call."""

    page: Any
    budget: BudgetState | None = None


def hit_to_dict(hit: Any) -> dict[str, Any]:
    """A search hit as the agent sees it: ``article_id, title, relevance, bm25_rank, dense_rank,
    section, preview, page_ids, category, customer_type`` (the raw ``score`` is left out: only its order
    means something, and ``relevance`` says it on a 0–1 scale; an unknown facet is None)."""
    return {
        "article_id": hit.article_id,
        "title": getattr(hit, "title", ""),
        "relevance": float(getattr(hit, "relevance", 1.0)),
        "bm25_rank": getattr(hit, "bm25_rank", None),
        "dense_rank": getattr(hit, "dense_rank", None),
        "section": getattr(hit, "section", ""),
        "preview": getattr(hit, "preview", ""),
        "page_ids": list(getattr(hit, "page_ids", ()) or ()),
        "category": getattr(hit, "category", "") or None,
        "customer_type": getattr(hit, "customer_type", "") or None,
    }


class SkillTools:
    """The four tools for one skill over one workspace.

    ``cases`` is the case file ``load_case`` reads (default: the skill's ``cases`` setting, a
    path relative to the workspace). ``retriever`` overrides the one ``retrieve`` opens lazily
    with ``skillrag.search.open_retriever(ws, backend=skill.config.backend, mode=skill.config.mode)``.
    ``log_path``, when given, receives one JSON line per call (the latency log). ``limits`` are the
    per-case budgets of sessions this object starts (default: the skill's, else the workspace's);
    ``surface`` names who calls (``cli``, ``mcp``, ``harness``, ``python``) in the account.
    ``session`` is the case session calls go to when they name no case (set by ``load_case``). On the
    agent surfaces a call must belong to a case session (``use_case``); on the Python API (the
    default ``surface``) a call outside any case session runs uncharged, with ``budget`` None.
    """

    def __init__(
        self,
        ws: Workspace,
        skill: Skill,
        cases: CaseFile | None = None,
        *,
        retriever: Retriever | None = None,
        log_path: Path | None = None,
        limits: BudgetLimits | None = None,
        surface: str = "python",
    ) -> None:
        self.workspace = ws
        self.skill = skill
        self._cases = cases
        self._retriever = retriever
        self.log_path = log_path
        self.calls: list[ToolCall] = []
        self._store: ArticleStore | None = None
        self.limits = limits or BudgetLimits.for_skill(ws, skill.config.budgets)
        self.surface = surface
        self._ledger: BudgetLedger | None = None
        self.session: BudgetState | None = None
        self._articles: ScopedArticles | None = None

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def ledger(self) -> BudgetLedger:
        """The workspace's per-case budget account (opened on first use)."""
        if self._ledger is None:
            self._ledger = BudgetLedger(self.workspace)
        return self._ledger

    @property
    def store(self) -> ArticleStore:
        if self._store is None:
            self._store = ArticleStore(self.workspace)
        return self._store

    @property
    def articles(self) -> ScopedArticles:
        """The articles this skill may search, read and cite (``corpus.ScopedArticles``): its
        ``allowed_sources`` of the shared corpus plus its own reference notes."""
        if self._articles is None:
            self._articles = self.store.scoped(SourceScope.of(self.skill.name, self.skill.config.allowed_sources))
        return self._articles

    @property
    def cases(self) -> CaseFile:
        if self._cases is None:
            rel = self.skill.config.cases
            if not rel:
                raise CaseNotFound("no case file: pass one (--cases FILE or $SKILLRAG_CASES)")
            self._cases = CaseFile(self.workspace.root / rel)
        return self._cases

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from skillrag.search import open_retriever  # lazy: heavy, and owned by the search package

            self._retriever = open_retriever(
                self.workspace, backend=self.skill.config.backend, mode=self.skill.config.mode
            )
        return self._retriever

    def _timed(self, tool: str, args: dict[str, Any], fn: Callable[[], T], case: Callable[[], str | None]) -> T:
        t0 = time.perf_counter()
        at = datetime.now(UTC).isoformat(timespec="milliseconds")
        logged = summarize_args(args)

        def case_id() -> str | None:
            c = case()
            return summarize_args(c) if isinstance(c, str) else None

        with tool_span(self, tool, logged) as current:  # the one tool span of every surface
            try:
                result = fn()
            except Exception as exc:
                self._record(ToolCall(tool, logged, (time.perf_counter() - t0) * 1000, False,
                                      _cut(str(exc), LOG_ERROR_CHARS), at, case_id()))
                note_failure(current, self, tool, exc, case_id())
                raise
            self._record(ToolCall(tool, logged, (time.perf_counter() - t0) * 1000, True, None, at, case_id()))
            note_result(current, self, tool, result, case_id())
            return result

    def _record(self, call: ToolCall) -> None:
        self.calls.append(call)
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"skill": self.skill.name, **call.to_dict()}, ensure_ascii=False) + "\n")

    # -- case sessions ------------------------------------------------------------------------
    def start_session(self, case_id: str, *, new: bool = False, private: bool = False,
                      limits: BudgetLimits | None = None, as_of: Any = None) -> BudgetState:
        """Start (or continue, unless ``new``) the case's session and make it this object's default.
        ``private``: a session of its own (a harness run; see ``skill.budget``)."""
        check_id(case_id, "case")
        state, _ = self.ledger.start(case_id, self.skill.name, limits or self.limits, as_of=as_of,
                                     surface=self.surface, new=new, private=private)
        self.session = state
        return state

    def _check_new_session(self, case_id: str) -> None:
        """Refuse ``load_case(new_session=True)`` for a case whose current session is unfinished (no
        accepted save) and has spent something: a fresh session would be a fresh budget."""
        cur = self.ledger.current(case_id, self.skill.name)
        if cur is None or cur.accepted or not (cur.queries or cur.fetches or cur.saves):
            return
        lim = cur.limits
        spent = (f"queries {cur.queries} of {lim.max_queries}, fetches {cur.fetches} of {lim.max_fetches}, "
                 f"saves {cur.saves} of {lim.max_saves} used")
        raise UserError(f"case {case_id!r} is still open ({spent}): a new session starts "
                        "a case afresh only after an accepted save, never to reset a budget; go on with this "
                        f"session, or run the case again with `skillrag run --case-id {case_id}` (a run has its own session)")

    def use_case(self, case_id: str | None) -> BudgetState:
        """The session a call for ``case_id`` goes to: this object's session when it is that case's
        (or when ``case_id`` is None), else the case's current session in the workspace; with no case
        named and no session here, the one open session of the skill. Raises ``UserError`` when the
        named case has no session (only ``load_case`` starts one, so an id that is not a loaded case
        never gets a budget of its own) or when no case is named and none or several are open."""
        if case_id is not None:
            check_id(case_id, "case")
            if self.session is not None and self.session.case_id == case_id:
                return self.session
            state = self.ledger.current(case_id, self.skill.name)
            if state is None:
                # only load_case opens a case's account: a made-up case id never gets a fresh budget
                raise UserError(f"case {case_id!r} has no session: call load_case {case_id} first "
                                "(its budgets start there)")
            return state
        if self.session is not None:
            return self.session
        found = self.ledger.open_sessions(self.skill.name)
        if len(found) == 1:
            return found[0]
        if not found:
            raise UserError("which case is this call for? call load_case CASE_ID first, or name the case "
                            "(--case CASE_ID on the command line or $SKILLRAG_CASE; case_id over MCP)")
        names = ", ".join(s.case_id for s in found[:8]) + (" …" if len(found) > 8 else "")
        raise UserError(f"several cases are open ({names}): name the case this call is for "
                        "(--case CASE_ID on the command line or $SKILLRAG_CASE; case_id over MCP)")

    def _find_session(self, case_id: str | None) -> BudgetState | None:
        """The session ``use_case`` would pick, without starting one (None when there is none)."""
        if case_id is not None and not (self.session is not None and self.session.case_id == case_id):
            check_id(case_id, "case")
            return self.ledger.current(case_id, self.skill.name)
        return self._account(case_id)

    def budget(self, case_id: str | None = None) -> BudgetState:
        """The current account of the case's session (see ``use_case``)."""
        return self.ledger.get(self.use_case(case_id).session_id)

    def _account(self, case_id: str | None) -> BudgetState | None:
        """The session a tool call is charged to (``use_case``), except on the Python API (``surface
        "python"``, the operator's own code): there a call for a case that has no session (none named
        and none of its own, or a named case never loaded) is not charged (None), and never goes to
        another process's open case. On the agents' surfaces such a call is refused."""
        if self.surface == "python":
            if case_id is None and self.session is None:
                return None
            if case_id is not None and not (self.session is not None and self.session.case_id == case_id):
                check_id(case_id, "case")
                return self.ledger.current(case_id, self.skill.name)  # None: a case never loaded
        return self.use_case(case_id)

    def _charged(self, kind: Charge, tool: str, target: str, state: BudgetState | None,
                 fn: Callable[[], T], paid: dict[str, bool] | None = None) -> tuple[T, BudgetState | None]:
        """``(fn(), the budget after the charge)``: one unit of ``kind`` charged to ``state``'s session
        before ``fn`` runs (refunded when it fails). ``paid["charged"]`` tells whether the call spent
        anything (a re-read is free: ``budget.ONCE_PER_TARGET``)."""
        if state is None:
            return fn(), None
        after, seq = self.ledger.charge(state.session_id, kind, tool, target)
        if paid is not None:
            paid["charged"] = self.ledger.charged(state.session_id, seq)
        try:
            return fn(), after
        except Exception:
            self.ledger.refund(state.session_id, seq)
            raise

    # -- the four tools ---------------------------------------------------------------------
    def load_case(self, case_id: str, *, new_session: bool = False) -> Case:
        """The agent-facing case (no ground truth), with ``as_of`` filled in (the case's own date, else
        the day its session started). Starts the case's session, or continues the one it has (a
        re-read never resets budgets).

        ``new_session`` starts the case's next session, and never gives a case more budget than its
        run has: only when the current session is *finished* (an accepted save: the case is being run
        again) or has spent nothing. An unfinished session that has spent something is refused with
        ``UserError`` naming what it spent, on every surface (this method backs the CLI, MCP, the
        exported scripts and the harnesses). To run such a case again from the start, run it
        (``skillrag run``, ``POST /runs``: each run has a private session) or, from the operator's own
        code, ``start_session(case_id, new=True)``. Raises ``CaseNotFound``."""
        def run() -> Case:
            case = self.cases.load(case_id)
            if self.session is not None and self.session.private and self.session.case_id == case.case_id:
                state = self.session  # a harness run: its own session is already open
            else:
                if new_session:
                    self._check_new_session(case.case_id)
                state = self.start_session(case.case_id, new=new_session, as_of=case.as_of)
            self.ledger.note(state.session_id, "load_case", case.case_id)
            return case.model_copy(update={"as_of": case.as_of or _date(state.as_of)})

        args: dict[str, Any] = {"case_id": case_id} | ({"new_session": True} if new_session else {})
        return self._timed("load_case", args, run, lambda: case_id)

    def retrieve(self, query: str, k: int | None = None, *, filters: Any = None, case_id: str | None = None,
                 pages: int | None = None, detail: str | None = None) -> RetrieveResult:
        """Ranked hits for ``query`` (a ``RetrieveResult``: a list of ``skillrag.search.Hit`` that also
        carries ``pages``, the ranked navigation pages of the ``wiki`` backend, and ``budget``).

        ``k`` defaults to the skill's ``k`` and ``pages`` to its ``pages``; ``filters`` is a
        ``SearchFilters`` or a mapping of its fields (``source_tags``, ``title_prefixes``, ``title_contains``,
        ``id_prefixes``, ``path_prefixes``, ``categories``, ``customer_types``), always restricted to the
        skill's ``allowed_sources``. ``detail``: None for the compact result (each page with at most the
        skill's ``page_articles`` articles), ``"pages"`` for every hit and page whole, ``"tools"`` for a
        tool search: the tool names the ``TOOL_SEARCH_ARTICLES`` (or ``k``, if more) best-matching
        articles give, best article first, each with the article that gives it (``views.tool_list``);
        the same query cost each way. Spends one query of the case. Raises ``EmptyInputError`` for an empty
        query, ``UserError`` for a ``k`` outside 1..``MAX_K`` (``workspace.config``: the one cap of every
        surface), an unknown ``detail`` or a tag outside the skill's sources, ``IndexStateError`` when
        there is no index, ``BudgetExceeded`` when the query budget is spent."""
        from skillrag.skill.views import DETAILS, TOOL_SEARCH_ARTICLES

        kk = k if k is not None else self.skill.config.k
        n_pages = self.skill.config.pages if pages is None else pages
        state_box: dict[str, BudgetState] = {}

        def run() -> RetrieveResult:
            if not isinstance(query, str) or not query.strip():
                raise EmptyInputError("empty query: give some words to search for")
            if isinstance(kk, bool) or not isinstance(kk, int) or not 1 <= kk <= MAX_K:
                raise UserError(f"k must be a whole number from 1 to {MAX_K}, got {summarize_args(kk)!r}")
            if detail is not None and detail not in DETAILS:
                raise UserError(f"detail must be one of {', '.join(DETAILS)} (or none for the compact result), "
                                f"got {summarize_args(detail)!r}")
            flt = self._filters(filters)
            state = self._account(case_id)
            if state is not None:
                state_box["s"] = state

            def search() -> tuple[list[Any], list[Any]]:
                if detail == "tools":  # a tool search: the tools the best-matching articles give
                    return self.articles.search(self.retriever, query, max(kk, TOOL_SEARCH_ARTICLES), filters=flt), []
                hits = self.articles.search(self.retriever, query, kk, filters=flt)
                finder = getattr(self.retriever, "search_pages", None)
                found = self._scoped_pages(finder, query, n_pages, flt) if callable(finder) and n_pages > 0 else []
                return hits, found

            (hits, found), after = self._charged("query", "retrieve", query, state, search)
            return RetrieveResult(hits, query=query, pages=found, filters=flt, budget=after, detail=detail,
                                  page_articles=self.skill.config.page_articles, tools=self._tools_named(hits))

        args = ({"query": query, "k": kk} | self._filter_args(filters) | ({"detail": detail} if detail else {})
                | ({"case_id": case_id} if case_id else {}))
        return self._timed("retrieve", args, run, lambda: _case_of(state_box, case_id))

    def _tools_named(self, hits: list[Any]) -> dict[str, tuple[str, ...]]:
        """Article id → the tool names its body writes (``skillrag.text.tool_names``: the one rule), for
        the hits whose article names any: an agent sees which articles give a tool, the customer's
        included, before spending a fetch on them."""
        ids = [str(h.article_id) for h in hits]
        arts = self.articles.get_many(ids)
        named = {i: tool_names(arts[i].body) for i in ids if i in arts}
        return {i: t for i, t in named.items() if t}

    def read_page(self, page_id: str, *, case_id: str | None = None) -> PageRead:
        """One navigation page whole (``retrieve --page``): what it solves, its procedure with typed
        links and every article it cites with its title, as far as the skill's scope allows
        (``corpus.ScopedArticles.page``). Spends one query of the case. Raises ``InvalidIdError`` /
        ``UserError`` for a malformed or unknown page id, or a page the scope hides (refunded)."""
        state_box: dict[str, BudgetState] = {}

        def run() -> PageRead:
            from skillrag.wiki.page import check_page_id

            if not isinstance(page_id, str):
                raise InvalidIdError(f"{page_id!r} is not a valid page id")
            check_page_id(page_id)
            state = self._account(case_id)
            if state is not None:
                state_box["s"] = state

            def read() -> Any:
                # the page as the skill's scope may see it (corpus.ScopedArticles.page): whole, reduced to
                # the parts its in-scope articles alone give, or refused
                reader = getattr(self._retriever, "read_page", None)
                if callable(reader):
                    return reader(page_id, scope=self.articles)
                from skillrag.search import read_page

                return read_page(self.workspace, page_id, store=self.store, scope=self.articles)

            view, after = self._charged("query", "retrieve", f"page:{page_id}", state, read)
            return PageRead(view, after)

        args = {"page": page_id} | ({"case_id": case_id} if case_id else {})
        return self._timed("retrieve", args, run, lambda: _case_of(state_box, case_id))

    def get_article(self, article_id: str, section: str | None = None, summary: bool = False, *,
                    case_id: str | None = None) -> ArticleView:
        """The article's raw body, or one section (``section``: its number, heading path or heading;
        see ``resolve_section``), or a deterministic summary, with its header fields (title, parent,
        heading path, sections with offsets). Spends one fetch of the case the first time the case reads
        the article (any part); a re-read of it is free (``charged`` False), also once the fetch budget is
        spent (``skill.budget``). Raises ``InvalidIdError``,
        ``ArticleNotFound`` (also for an article outside the skill's allowed sources or a section the
        article lacks), ``UserError`` for an ambiguous section, ``BudgetExceeded``."""
        state_box: dict[str, BudgetState] = {}

        def run() -> ArticleView:
            check_id(article_id)
            state = self._account(case_id)
            if state is not None:
                state_box["s"] = state

            def read() -> ArticleView:
                art = self.articles.get(article_id)
                infos = section_infos(art)
                offset: int | None = 0
                if section is not None:
                    sec = resolve_section(art, section)
                    text, part, offset = art.body[sec.start : sec.end], f"section:{sec.index}", sec.start
                elif summary:
                    text, part, offset = summarize(art, self.workspace.config.corpus.summary_chars), "summary", None
                else:
                    text, part = art.body, "body"
                return ArticleView(art.id, art.title, text, art.content_hash, art.source_tag, part,
                                   parent=getattr(art, "parent", None),
                                   heading_path=tuple(getattr(art, "heading_path", ()) or ()),
                                   sections=infos, offset=offset)

            paid: dict[str, bool] = {}
            view, after = self._charged("fetch", "get_article", article_id, state, read, paid)
            return replace(view, budget=after, charged=paid.get("charged"))

        args: dict[str, Any] = {"article_id": article_id}
        if section is not None:
            args["section"] = section
        if summary:
            args["summary"] = True
        if case_id:
            args["case_id"] = case_id
        return self._timed("get_article", args, run, lambda: _case_of(state_box, case_id))

    def check_output(self, output: Any, *, limits: ContractLimits | None = None) -> list[str]:
        """Every reason the evidence contract rejects ``output`` against this workspace (empty =
        accepted), under the skill's ``limits`` (or the ones given). Does not write, is not logged and
        spends nothing."""
        reasons, _ = self._check(output, limits)
        return reasons

    def check_audit(self, output: Any) -> tuple[list[str], list[str]]:
        """``verify_audit`` of a saved output against the current corpus: ``(reasons, notes)``."""
        audit = output.get("audit") if isinstance(output, dict) else None
        recs = audit.get("snippets") if isinstance(audit, dict) else None
        ids = {r["source_article"] for r in (recs if isinstance(recs, list) else [])
               if isinstance(r, dict) and isinstance(r.get("source_article"), str)}
        arts = self.store.get_many(ids)
        return verify_audit(output, {a: x.body for a, x in arts.items()},
                            {a: x.content_hash for a, x in arts.items()})

    def _check(self, output: Any, limits: ContractLimits | None = None) -> tuple[list[str], dict[str, Article]]:
        ids: set[str] = set()
        snippets = output.get("snippets") if isinstance(output, dict) else None
        snippets = snippets if isinstance(snippets, list) else []
        if isinstance(output, dict):
            for s in snippets:
                if isinstance(s, dict) and isinstance(s.get("source_article"), str):
                    ids.add(s["source_article"])
            consulted = output.get("articles_consulted")
            if isinstance(consulted, list):
                ids.update(a for a in consulted if isinstance(a, str))
        inside, outside = self.articles.resolve(ids) if ids else ({}, {})
        arts = {**inside, **outside}  # the contract checks every cited body; the reasons below reject `outside`
        reasons = validate_output(output, {a: art.body for a, art in arts.items()}, limits or self.skill.config.limits())
        for i, s in enumerate(snippets):
            aid = s.get("source_article") if isinstance(s, dict) else None
            if isinstance(aid, str) and aid in outside:
                reasons.append(f"snippets[{i}].source_article: {aid!r} is outside this skill's allowed sources")
        consulted = output.get("articles_consulted") if isinstance(output, dict) else None
        for a in consulted if isinstance(consulted, list) else []:
            if isinstance(a, str) and a in outside:
                reasons.append(f"articles_consulted: {a!r} is outside this skill's allowed sources")
        return reasons, arts

    def save_output(self, output: dict[str, Any], path: Path | None = None, *, check: bool = False) -> SavedOutput:
        """Validate ``output`` against the evidence contract and, only if accepted, write it
        atomically to ``path`` (default ``runs/<case_id>/output.json``) with an ``audit`` block:
        each snippet's offsets in its article's raw body, the article's content hash, the warnings
        and the case session's calls. The run record beside ``path`` (``RunFolder.record``: an earlier
        harness run's ``record.json``) is removed: it described the output this save replaces; a
        harness run writes its own record after its save, and a save from another surface leaves none
        (its costs come from the tool log or ``audit.tool_calls``). Returns the ``SavedOutput`` with the evidence offsets and the
        warnings (``skillrag.skill.gaps``: they never reject).

        ``check``: validate and report exactly as a save would, but write nothing and spend nothing.
        A save spends one save attempt of the case named by ``output["case_id"]`` (accepted or not), and
        its result is kept for ``save_status``. A save after an accepted one is allowed while the case
        has saves left: it replaces the saved output, and its ``SavedOutput.replaced`` (the receipt's
        ``replaced``) names the output it overwrote; a rejected one leaves the saved output as it was.
        Raises ``ContractViolation`` listing every reason (nothing is written then),
        ``BudgetExceeded`` when the case's saves are spent, and ``UserError`` (nothing spent) for a
        ``path`` that is a folder or an existing file that is not a saved output
        (``workspace.runs.check_output_target``)."""
        summary_args: dict[str, Any] = {"case_id": output.get("case_id") if isinstance(output, dict) else None}
        if isinstance(output, dict) and isinstance(output.get("snippets"), list):
            summary_args["n_snippets"] = len(output["snippets"])
            summary_args["guidance_chars"] = len(str(output.get("guidance") or ""))
        if check:
            summary_args["check"] = True
        state_box: dict[str, BudgetState] = {}

        def run() -> SavedOutput:
            if path is not None:  # before anything is spent: an explicit path must not destroy a file
                check_output_target(Path(path), "--to")
            case = output.get("case_id") if isinstance(output, dict) else None
            case = case if isinstance(case, str) and case else None
            state: BudgetState | None
            try:
                # a check spends nothing and starts nothing: it reads the case's session if there is one
                state = self._find_session(case) if check else self._account(case)
            except InvalidIdError:
                state = None  # no case to charge: the contract names what is wrong with case_id
            except UserError:
                if case is not None:
                    raise  # a case that was never loaded: the refusal says to load it
                state = None
            if state is not None:
                state_box["s"] = state
            if check:
                return self._save(output, path, state, check=True)
            if state is None:
                if case is not None and self.surface == "python":
                    return self._save(output, path, None, check=False)  # the operator's API: uncharged
                return self._reject(output)
            saved, after = self._charged_save(state, lambda: self._save(output, path, state, check=False))
            return replace(saved, budget=after)

        return self._timed("save_output", summary_args, run, lambda: _case_of(state_box, None))

    def _reject(self, output: Any) -> SavedOutput:
        reasons, _ = self._check(output)
        raise ContractViolation(reasons or ["case_id: missing or not a plain id"])

    def _charged_save(self, state: BudgetState, fn: Callable[[], SavedOutput]) -> tuple[SavedOutput, BudgetState]:
        """A save attempt spends a save whether the contract accepts it or not (no refund on a
        rejection); any other failure is refunded. Its result is kept in the account (``save_status``)."""
        from skillrag.skill.views import save_json

        after, seq = self.ledger.charge(state.session_id, "save", "save_output", str(state.case_id))
        try:
            saved = fn()
        except ContractViolation as exc:
            self.ledger.record_save(state.session_id, seq, {"accepted": False, "case_id": state.case_id,
                                                           "reasons": exc.reasons})
            raise
        except Exception:
            self.ledger.refund(state.session_id, seq)
            raise
        receipt = save_json(saved)
        receipt.pop("budget", None)
        self.ledger.record_save(state.session_id, seq, receipt)
        return saved, after

    def save_status(self, case_id: str | None = None) -> SaveStatus:
        """The case's last save attempt, as it was reported, and its budget now: a free, uncharged way to
        see a receipt again (``save_output --status``). The case is found as for any call (``use_case``;
        on the Python API a case that has no session of its own is refused too). Raises ``UserError``
        when the case has no session (it was never loaded, so nothing was saved for it)."""
        status_box: dict[str, BudgetState] = {}

        def run() -> SaveStatus:
            state = self._find_session(case_id)
            if state is not None:
                status_box["s"] = state
            if state is None:
                who = f"case {case_id!r}" if case_id else "this call"
                raise UserError(f"{who} has no session, so nothing was saved for it: call load_case "
                                f"{case_id or 'CASE_ID'} first")
            last, attempts = self.ledger.last_save(state.session_id)
            return SaveStatus(state.case_id, last, attempts, self.ledger.get(state.session_id))

        return self._timed("save_status", {"case_id": case_id} if case_id else {}, run,
                           lambda: _case_of(status_box, case_id))

    def _save(self, output: dict[str, Any], path: Path | None, state: BudgetState | None, *,
              check: bool) -> SavedOutput:
        reasons, arts = self._check(output)
        if reasons:
            raise ContractViolation(reasons)
        evidence: list[EvidenceRecord] = []
        for i, s in enumerate(output["snippets"]):
            art = arts[s["source_article"]]
            spans = locate_all(s["text"], art.body)
            if not spans:  # cannot happen: validate_output accepted this snippet
                raise ContractViolation([f"snippets[{i}].text: not a verbatim substring of {art.id!r}"])
            evidence.append(EvidenceRecord(i, art.id, spans[0][0], spans[0][1], art.content_hash,
                                           occurrences=len(spans), matched=1))
        fetched = self.ledger.fetched(state.session_id) if state is not None else None
        read = self.store.get_many(sorted(fetched - set(arts))) if fetched else {}
        pool = {**read, **arts}
        gaps = evidence_gaps(output, {a: x.body for a, x in pool.items()},
                             titles={a: x.title for a, x in pool.items()}, fetched=fetched,
                             case=self._case_text(str(output["case_id"])))
        record = {k: v for k, v in output.items() if k != "audit"}
        record["audit"] = {
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "skill": self.skill.name,
            "skillrag_version": __version__,
            "snippets": [e.to_dict() for e in evidence],
            "warnings": [g.to_dict() for g in gaps],
        }
        if state is not None:
            record["audit"]["session"] = {"id": state.session_id, "as_of": state.as_of}
            record["audit"]["tool_calls"] = [c for c in self.ledger.calls(state.session_id)
                                             if c["tool"] != "save_output"]
        if check:
            if state is not None:
                self.ledger.note(state.session_id, "save_output", "check")
            return SavedOutput(None, record, evidence, gaps,
                               self.ledger.get(state.session_id) if state else None, checked_only=True)
        case_id = check_id(str(output["case_id"]), "case")
        run = RunFolder(Path(path)) if path is not None else self.workspace.run_folder(case_id)
        dest = run.output
        replaced = _replaced(dest)
        # the run record beside an output describes the run that wrote that output; this save replaces
        # it, so an earlier run's record goes first (a harness run writes its own after this save)
        run.record.unlink(missing_ok=True)
        atomic_write_text(dest, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        if state is not None:
            self.ledger.accepted(state.session_id)
        return SavedOutput(dest, record, evidence, gaps, replaced=replaced)

    def _case_text(self, case_id: str) -> str | None:
        """The agent-facing case ``case_id`` as text (``gaps.case_text``), for the warnings: what the
        case states is not a policy claim. None when no case file is set or it lacks the case (the
        warnings then treat every identifier as a claim)."""
        try:
            case = self.cases.load(case_id)
        except (CaseNotFound, MalformedSourceError, EmptyInputError):
            return None
        return case_text(case.model_dump(mode="json"))

    # -- filters ------------------------------------------------------------------------------
    def _filters(self, filters: Any) -> Any:
        """``SearchFilters`` from ``filters`` (a ``SearchFilters``, a mapping of its fields, or None);
        None when nothing restricts. The skill's scope is applied on top by ``articles.search``; a tag
        the scope holds no article of is refused with a line naming the tags in scope."""
        from skillrag.search import SearchFilters

        if filters is None:
            flt = SearchFilters()
        elif isinstance(filters, SearchFilters):
            flt = filters
        else:
            flt = SearchFilters(**{k: (list(v) if v else None) for k, v in dict(filters).items()})
        tags = self.articles.source_tags()
        if flt.source_tags and tags is not None:
            outside = [t for t in flt.source_tags if t not in tags]
            if outside:
                raise UserError(f"source tag(s) {', '.join(outside)} are outside this skill's sources "
                                f"({', '.join(tags) or 'none'})")
        return None if flt.is_empty() else flt

    def _scoped_pages(self, finder: Callable[..., Any], query: str, k: int, filters: Any) -> list[Any]:
        """``search_pages`` seen through the skill's scope (``corpus.ScopedArticles.page``): a page
        derived from out-of-scope articles is reduced to its in-scope parts or not listed at all."""
        if self.articles.source_tags() == []:
            return []  # no article in scope: no page either
        return list(finder(query, k=k, filters=filters, scope=self.articles))

    @staticmethod
    def _filter_args(filters: Any) -> dict[str, Any]:
        if filters is None:
            return {}
        data = filters.model_dump() if hasattr(filters, "model_dump") else dict(filters)
        return {k: v for k, v in data.items() if v}


def _replaced(dest: Path) -> dict[str, Any] | None:
    """What an accepted save at ``dest`` replaces: ``{path, saved_at, case_id}`` of the output already
    there (``saved_at``/``case_id`` None when it is not a readable saved output), else None."""
    if not dest.is_file():
        return None
    try:
        old = json.loads(dest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        old = None
    audit = old.get("audit") if isinstance(old, dict) else None
    saved_at = audit.get("saved_at") if isinstance(audit, dict) else None
    case = old.get("case_id") if isinstance(old, dict) else None
    return {"path": str(dest), "saved_at": saved_at if isinstance(saved_at, str) else None,
            "case_id": case if isinstance(case, str) else None}


def _case_of(box: Mapping[str, BudgetState], case_id: str | None) -> str | None:
    state = box.get("s")
    return state.case_id if state is not None else case_id


def _date(value: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(value)
    except ValueError:
        return None

