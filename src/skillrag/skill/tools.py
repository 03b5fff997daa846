"""The four deterministic tools of a skill: ``load_case``, ``retrieve``, ``get_article``, ``save_output``.

They are the trust boundary between an agent and the workspace: the agent reasons, the tools
read and write. The same ``SkillTools`` object backs the Python API, the ``skillrag tool ...``
CLI commands and the MCP server. Each call is timed and recorded in ``.calls`` (and appended as
one JSON line to ``log_path`` when given), success or failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from skillrag import __version__
from skillrag.corpus import Article, ArticleStore, ScopedArticles, SourceScope, check_id, summarize
from skillrag.errors import ArticleNotFound, CaseNotFound, ContractViolation, EmptyInputError
from skillrag.skill.cases import Case, CaseFile
from skillrag.skill.contract import locate, validate_output, verify_audit
from skillrag.skill.registry import Skill
from skillrag.workspace import Workspace, atomic_write_text

__all__ = ["ArticleView", "EvidenceRecord", "Retriever", "SavedOutput", "SkillTools", "ToolCall", "hit_to_dict"]

T = TypeVar("T")


class Retriever(Protocol):
    """What ``retrieve`` needs: ``skillrag.search``'s retriever (or a test double)."""

    def search(self, query: str, k: int = 10, filters: Any = None) -> list[Any]: ...


@dataclass(frozen=True)
class ToolCall:
    """One tool call: ``tool`` name, its ``args`` (summarised for save_output), wall time ``ms``
    in milliseconds, ``ok``, and the ``error`` message when it failed."""

    tool: str
    args: dict[str, Any]
    ms: float
    ok: bool
    error: str | None = None
    at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args, "ms": round(self.ms, 3), "ok": self.ok,
                "error": self.error, "at": self.at}


@dataclass(frozen=True)
class ArticleView:
    """What ``get_article`` returns: the article ``id``, ``title`` and ``text`` (the raw body,
    one section of it, or a summary), plus the body's ``content_hash`` and ``source_tag``."""

    id: str
    title: str
    text: str
    content_hash: str = ""
    source_tag: str = ""
    part: str = "body"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "part": self.part, "content_hash": self.content_hash,
                "text": self.text}


@dataclass(frozen=True)
class EvidenceRecord:
    """Where an accepted snippet lies: ``article_body[start:end]`` (character offsets in the raw
    body) of the article whose body hashed to ``content_hash`` (sha256 hex) when it was saved."""

    index: int
    source_article: str
    start: int
    end: int
    content_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "source_article": self.source_article, "start": self.start,
                "end": self.end, "content_hash": self.content_hash}


@dataclass(frozen=True)
class SavedOutput:
    """An accepted, written output: its ``path``, the JSON object written (``output``, with an
    ``audit`` block added) and the ``evidence`` offsets of each snippet."""

    path: Path
    output: dict[str, Any]
    evidence: list[EvidenceRecord] = field(default_factory=list)

    @property
    def case_id(self) -> str:
        return str(self.output["case_id"])


def hit_to_dict(hit: Any) -> dict[str, Any]:
    """A search hit as a JSON-ready dict (``article_id, score, title, preview, page_ids``)."""
    return {
        "article_id": hit.article_id,
        "score": float(hit.score),
        "title": getattr(hit, "title", ""),
        "preview": getattr(hit, "preview", ""),
        "page_ids": list(getattr(hit, "page_ids", ()) or ()),
    }


class SkillTools:
    """The four tools for one skill over one workspace.

    ``cases`` is the case file ``load_case`` reads (default: the skill's ``cases`` setting, a
    path relative to the workspace). ``retriever`` overrides the one ``retrieve`` opens lazily
    with ``skillrag.search.open_retriever(ws, backend=skill.config.backend, mode=skill.config.mode)``.
    ``log_path``, when given, receives one JSON line per call (the latency log).
    """

    def __init__(
        self,
        ws: Workspace,
        skill: Skill,
        cases: CaseFile | None = None,
        *,
        retriever: Retriever | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.workspace = ws
        self.skill = skill
        self._cases = cases
        self._retriever = retriever
        self.log_path = log_path
        self.calls: list[ToolCall] = []
        self._store: ArticleStore | None = None
        self._articles: ScopedArticles | None = None

    # -- plumbing ---------------------------------------------------------------------------
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

    def _timed(self, tool: str, args: dict[str, Any], fn: Callable[[], T]) -> T:
        t0 = time.perf_counter()
        at = datetime.now(UTC).isoformat(timespec="milliseconds")
        try:
            result = fn()
        except Exception as exc:
            self._record(ToolCall(tool, args, (time.perf_counter() - t0) * 1000, False, str(exc), at))
            raise
        self._record(ToolCall(tool, args, (time.perf_counter() - t0) * 1000, True, None, at))
        return result

    def _record(self, call: ToolCall) -> None:
        self.calls.append(call)
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"skill": self.skill.name, **call.to_dict()}, ensure_ascii=False) + "\n")

    # -- the four tools ---------------------------------------------------------------------
    def load_case(self, case_id: str) -> Case:
        """The agent-facing case (no ground truth). Raises ``CaseNotFound``."""
        return self._timed("load_case", {"case_id": case_id}, lambda: self.cases.load(case_id))

    def retrieve(self, query: str, k: int | None = None) -> list[Any]:
        """Ranked hits (``skillrag.search.Hit``: article_id, score, title, preview, page_ids) for
        ``query``; ``k`` defaults to the skill's ``k``. Restricted to the skill's scope (``articles``).
        Raises ``EmptyInputError`` for an empty query, ``IndexStateError`` when there is no index."""
        kk = k if k is not None else self.skill.config.k

        def run() -> list[Any]:
            if not query or not query.strip():
                raise EmptyInputError("empty query")
            return self.articles.search(self.retriever, query, kk)

        return self._timed("retrieve", {"query": query, "k": kk}, run)

    def get_article(self, article_id: str, section: str | None = None, summary: bool = False) -> ArticleView:
        """The article's raw body (or the section with heading ``section``, or a deterministic
        summary). Raises ``InvalidIdError``, ``ArticleNotFound`` (also for an article outside the
        skill's allowed sources or a section the article lacks)."""

        def run() -> ArticleView:
            art = self.articles.get(article_id)
            if section is not None:
                try:
                    text, part = art.section(section), f"section:{section}"
                except KeyError:
                    heads = "; ".join(s.heading for s in art.sections) or "none"
                    raise ArticleNotFound(
                        f"article {article_id!r} has no section {section!r} (sections: {heads})"
                    ) from None
            elif summary:
                text, part = summarize(art, self.workspace.config.corpus.summary_chars), "summary"
            else:
                text, part = art.body, "body"
            return ArticleView(art.id, art.title, text, art.content_hash, art.source_tag, part)

        args: dict[str, Any] = {"article_id": article_id}
        if section is not None:
            args["section"] = section
        if summary:
            args["summary"] = True
        return self._timed("get_article", args, run)

    def check_output(self, output: Any) -> list[str]:
        """Every reason the evidence contract rejects ``output`` against this workspace (empty =
        accepted). Does not write and is not logged."""
        reasons, _ = self._check(output)
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

    def _check(self, output: Any) -> tuple[list[str], dict[str, Article]]:
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
        reasons = validate_output(output, {a: art.body for a, art in arts.items()}, self.skill.config.limits())
        for i, s in enumerate(snippets):
            aid = s.get("source_article") if isinstance(s, dict) else None
            if isinstance(aid, str) and aid in outside:
                reasons.append(f"snippets[{i}].source_article: {aid!r} is outside this skill's allowed sources")
        consulted = output.get("articles_consulted") if isinstance(output, dict) else None
        for a in consulted if isinstance(consulted, list) else []:
            if isinstance(a, str) and a in outside:
                reasons.append(f"articles_consulted: {a!r} is outside this skill's allowed sources")
        return reasons, arts

    def save_output(self, output: dict[str, Any], path: Path | None = None) -> SavedOutput:
        """Validate ``output`` against the evidence contract and, only if accepted, write it
        atomically to ``path`` (default ``runs/<case_id>/output.json``) with an ``audit`` block:
        each snippet's offsets in its article's raw body and the article's content hash.
        Raises ``ContractViolation`` listing every reason; nothing is written then."""
        summary_args: dict[str, Any] = {"case_id": output.get("case_id") if isinstance(output, dict) else None}
        if isinstance(output, dict) and isinstance(output.get("snippets"), list):
            summary_args["n_snippets"] = len(output["snippets"])

        def run() -> SavedOutput:
            reasons, arts = self._check(output)
            if reasons:
                raise ContractViolation(reasons)
            evidence: list[EvidenceRecord] = []
            for i, s in enumerate(output["snippets"]):
                art = arts[s["source_article"]]
                span = locate(s["text"], art.body)
                if span is None:  # cannot happen: validate_output accepted this snippet
                    raise ContractViolation([f"snippets[{i}].text: not a verbatim substring of {art.id!r}"])
                evidence.append(EvidenceRecord(i, art.id, span[0], span[1], art.content_hash))
            record = {k: v for k, v in output.items() if k != "audit"}
            record["audit"] = {
                "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "skill": self.skill.name,
                "skillrag_version": __version__,
                "snippets": [e.to_dict() for e in evidence],
                "tool_calls": [c.to_dict() for c in self.calls if c.tool != "save_output"],
            }
            case_id = check_id(str(output["case_id"]), "case")
            dest = Path(path) if path is not None else self.workspace.runs_dir / case_id / "output.json"
            atomic_write_text(dest, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
            return SavedOutput(dest, record, evidence)

        return self._timed("save_output", summary_args, run)
