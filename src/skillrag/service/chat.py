"""One chat turn: pick the skill, condense against its own thread, retrieve, maybe read the web, answer.

A turn yields ``Event``s (streamed as server-sent events by the app; each ``data`` is the JSON of the
event's model in ``EVENT_MODELS``, which is also what the OpenAPI schema documents):

``start``      ``StartEvent``  ``{skill, thread_id, thread_key, question, condensed, mode}``
``retrieval``  ``RetrievalEvent``  ``{round, query, source_tags, hits: [{article_id, title, score}]}``
``tool_call``  ``ToolCallEvent``  ``{tool, args, ok, ms, error}`` for each article read and web lookup
``web``        ``WebEvent``  ``{status, queries, kept: [{url, requested_url, hops}], dropped: [{url, stage, reason}]}``
``text``       ``TextEvent``  ``{delta}`` – answer text, in order
``error``      ``ErrorEvent``  ``{kind, message}`` – the turn stopped (a budget or deadline ran out, a backend failed)
``done``       ``DoneEvent``  ``{status, skill, thread_id, thread_key, turn, mode, citations, rejected, unsupported,
               usage, trace_id}``

Every article the turn touches comes through ``Knowledge.scoped(view.scope())``: searches, reads and
quote checks see only the skill's ``allowed_sources`` and its own reference notes. A quote is accepted
only from an article (or web page) **read in this turn**, and only if it is verbatim (evidence
contract, ``locate``); an article citation carries the article's ``url`` (a reference note's canonical
page) when it has one. A model answer left with no verified citation is flagged: a closing note in its
text, ``done.status`` ``unsupported`` and ``done.unsupported`` true. ``usage`` counts the model tokens of
every request the turn made, also when a cap or the deadline stopped it.

Without a model the answer is **extractive**: the best passage of each retrieved article is quoted
verbatim and verified against the article body; the text says so. With a model (``models.default`` in
``skillrag.yaml``, or an allowed ``model`` in the request) a pydantic-ai agent answers with the skill's
SKILL.md as instructions and must back its answer with quotes, which are verified the same way.

Web fallback (``web_mode: fallback``) runs only when the knowledge base does not answer: code decides
that by searching the turn's question itself (``_kb_answers``), whatever the model searched first.

Per-turn caps (``service.max_retrieval_rounds``, ``max_tool_calls``, ``max_tokens``) and the turn's
wall-clock deadline (``service.turn_deadline_s``) are enforced here: past one, the turn ends with
status ``budget_exceeded``. The web step may use at most half of the turn's remaining time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai.exceptions import UsageLimitExceeded

from skillrag.errors import (
    BackendError,
    BudgetExceeded,
    ConfigError,
    ControlFlowError,
    SkillragError,
    UserError,
)
from skillrag.models import counted_usage, make_agent, model_errors
from skillrag.service._prompts import load_prompt
from skillrag.service.knowledge import (
    Knowledge,
    ScopedKnowledge,
    best_passages,
    key_terms,
    stems,
    verify_snippet,
)
from skillrag.service.skills import SkillCatalog, SkillView, SourcePolicy, select_skill
from skillrag.service.threads import THREAD_ID_PATTERN, ThreadStore, Turn, thread_key
from skillrag.service.web import WebFetcher, WebSearchProvider, plain_query, web_lookup
from skillrag.tracing import current_trace_id, set_attributes, span
from skillrag.workspace.config import ServiceSettings

__all__ = [
    "EVENT_MODELS",
    "ChatEngine",
    "ChatRequest",
    "Citation",
    "DoneEvent",
    "ErrorEvent",
    "Event",
    "ModelAnswer",
    "PreparedChat",
    "Quote",
    "RetrievalEvent",
    "StartEvent",
    "TextEvent",
    "ToolCallEvent",
    "WebEvent",
    "condense_terms",
]

log = logging.getLogger("skillrag.service.chat")

#: A retrieved passage is *relevant* when it holds at least this fraction of the question's key stems.
RELEVANCE_MIN_FRACTION = 0.5
#: Terms carried over from the previous question when condensing without a model.
CONDENSE_MAX_TERMS = 8
#: Shortest quote in an extractive answer, in characters (a skill may ask for longer ones).
EXTRACTIVE_MIN_CHARS = 40
#: Characters of an article or web page a model sees per read.
READ_MAX_CHARS = 8000
#: Articles (best hits) whose passages decide whether the knowledge base answers a question.
RELEVANCE_TOP_HITS = 3
#: Share of a turn's remaining time the web step may use, so the answer can still be written.
WEB_TIME_SHARE = 0.5
#: Appended to a model answer that no verified citation backs (``done`` then says ``unsupported``).
UNSUPPORTED_NOTE = "Unsupported: no source read in this turn backs this answer with a verified quote"


class ChatRequest(BaseModel):
    """Body of ``POST /chat``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=4000, description="The question; may start with `/skill-slug`.")
    thread_id: str = Field(pattern=THREAD_ID_PATTERN, description="Client thread id (no `::`).")
    skill: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$", description="Skill name; wins over a `/slug`."
    )
    web_search: bool = Field(False, description="Allow the web under the skill's web policy.")
    model: str | None = Field(None, max_length=200, description="Model id; must be in service.allowed_models.")


class Citation(BaseModel):
    """A verified quote. ``source`` is an article id or the final URL of a web page."""

    n: int = Field(ge=1)
    kind: Literal["article", "web"]
    source: str
    title: str
    snippet: str
    start: int = Field(ge=0, description="Offset of the quote in the article body / page text, in characters.")
    end: int = Field(ge=0)
    url: str | None = Field(
        None, description="Deep link: the article's canonical URL (a reference note's front matter `url`), or the "
        "web page's final URL; none for an article without one."
    )


# --- the events of a turn (the SSE stream; the OpenAPI schema is built from these models) ---------------
class StartEvent(BaseModel):
    """``start``: the turn began."""

    skill: str | None
    thread_id: str
    thread_key: str
    question: str
    condensed: str = Field(description="The question rewritten against the thread's history.")
    mode: Literal["model", "extractive"]


class RetrievalHit(BaseModel):
    article_id: str
    title: str
    score: float


class RetrievalEvent(BaseModel):
    """``retrieval``: one knowledge-base search (a retrieval round)."""

    round: int = Field(ge=1)
    query: str
    source_tags: list[str] | None = Field(description="The skill's allowed sources; null = all.")
    hits: list[RetrievalHit]


class ToolCallEvent(BaseModel):
    """``tool_call``: an article read or a web lookup, with its wall time ``ms`` in milliseconds."""

    tool: Literal["read_article", "web_search"]
    args: dict[str, str]
    ok: bool
    ms: float = Field(ge=0)
    error: str | None = None


class WebKept(BaseModel):
    url: str = Field(description="Final URL after redirects (what a citation shows).")
    requested_url: str
    hops: list[str]


class WebDropped(BaseModel):
    url: str
    stage: Literal["result", "redirect", "final", "address", "fetch"] = Field(
        description="The check that dropped it: `address` = the host resolved to a private address.")
    reason: str


class WebEvent(BaseModel):
    """``web``: whether the web was read this turn, and what the allowlist kept and dropped."""

    status: Literal["searched", "off", "off_for_skill", "no_allowlist", "not_configured", "already_searched",
                    "not_needed", "no_query", "failed"]
    queries: list[str]
    kept: list[WebKept]
    dropped: list[WebDropped]
    error: str | None = Field(
        None, description="Why the web search failed (status `failed`), or why it stopped early (its deadline)."
    )


class TextEvent(BaseModel):
    """``text``: the next piece of the answer."""

    delta: str


class ErrorEvent(BaseModel):
    """``error``: the turn stopped early; ``kind`` is the skillrag error class (or ``InternalError``)."""

    kind: str
    message: str


class Rejected(BaseModel):
    """A quote that was not accepted as a citation, and why."""

    source: str
    snippet: str
    reason: str


class Usage(BaseModel):
    retrieval_rounds: int = Field(ge=0)
    tool_calls: int = Field(ge=0)
    tokens: int = Field(ge=0)


class DoneEvent(BaseModel):
    """``done``: always the last event. ``turn`` is the stored turn number (null when not stored).

    ``status`` ``unsupported``: the turn ran to its end, but the model's answer has no verified citation
    (every quote it gave was rejected, or it gave none); ``unsupported`` says the same on every status."""

    status: Literal["ok", "unsupported", "budget_exceeded", "error"]
    skill: str | None
    thread_id: str
    thread_key: str
    turn: int | None
    mode: Literal["model", "extractive"]
    citations: list[Citation]
    rejected: list[Rejected]
    unsupported: bool = Field(
        description="True when a model answer was given that no verified citation backs: do not rely on it."
    )
    usage: Usage
    trace_id: str | None = Field(
        None, description="The turn's OpenTelemetry trace id (32 hex digits) when the service traces (`OTEL_*`).")


#: Event name -> the model of its ``data``.
EVENT_MODELS: dict[str, type[BaseModel]] = {
    "start": StartEvent,
    "retrieval": RetrievalEvent,
    "tool_call": ToolCallEvent,
    "web": WebEvent,
    "text": TextEvent,
    "error": ErrorEvent,
    "done": DoneEvent,
}


class Quote(BaseModel):
    """A passage the model says supports its answer (verified before it is shown)."""

    source: str = Field(description="Article id, or the URL of a web page read this turn.")
    snippet: str = Field(description="Copied verbatim from that source.")


class ModelAnswer(BaseModel):
    """What the model must return."""

    answer: str
    quotes: list[Quote] = Field(default_factory=list)


@dataclass(frozen=True)
class Event:
    """One server-sent event: ``name`` and a JSON-serialisable ``data`` dict."""

    name: str
    data: dict[str, Any]


@dataclass(frozen=True)
class PreparedChat:
    """A validated request: the skill (None = plain chat), question without slug, thread key, model."""

    request: ChatRequest
    skill: SkillView | None
    question: str
    key: str
    model: Any | None


@dataclass
class _Turn:
    prepared: PreparedChat
    view: SkillView
    kb: ScopedKnowledge
    queue: asyncio.Queue[Event | None]
    deadline: float = math.inf  # time.monotonic() past which the turn ends
    rounds: int = 0
    tool_calls: int = 0
    tokens: int = 0
    web_searched: bool = False
    answers: bool | None = None  # does the knowledge base answer the question? (None = not decided yet)
    condensed: str = ""
    read: dict[str, Any] = field(default_factory=dict)  # articles read in this turn, by id
    evidence: list[Citation] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    web_docs: dict[str, Any] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    unsupported: bool = False  # a model answer with no verified citation
    trace_id: str | None = None  # the turn's trace (tracing on)

    async def emit(self, name: str, data: dict[str, Any]) -> None:
        """Queue event ``name``; ``data`` is validated by its model, so the stream always matches the schema."""
        await self.queue.put(Event(name, EVENT_MODELS[name].model_validate(data).model_dump(mode="json")))


def condense_terms(question: str, history: list[Turn], *, max_terms: int = CONDENSE_MAX_TERMS) -> str:
    """Deterministic condensation: the previous question's key terms that the new question lacks,
    prepended to it (``"<terms> <question>"``); the question unchanged when there is no history."""
    if not history:
        return question
    have = set(key_terms(question))
    extra = [t for t in key_terms(history[-1].question) if t not in have][:max_terms]
    return f"{' '.join(extra)} {question}" if extra else question


class ChatEngine:
    """Runs chat turns for the app. Everything it touches is passed in (no globals).

    ``catalog``: the registered skills; ``knowledge``: search + article lookup; ``threads``: the
    thread store; ``settings``: ``ServiceSettings`` (caps, web); ``search_k``/``search_backend``/
    ``search_mode``: defaults for a plain chat; ``web_provider``/``fetcher``: the web (None = off);
    ``model``: the default model (id or pydantic-ai ``Model``; None = extractive);
    ``resolve_model``: id -> ``Model`` (default ``skillrag.models.resolve_model``).
    """

    def __init__(
        self,
        *,
        catalog: SkillCatalog,
        knowledge: Knowledge,
        threads: ThreadStore,
        settings: ServiceSettings | None = None,
        search_k: int = 8,
        search_backend: str | None = None,
        search_mode: str | None = None,
        web_provider: WebSearchProvider | None = None,
        fetcher: WebFetcher | None = None,
        model: Any | None = None,
        resolve_model: Callable[[Any], Any] | None = None,
    ) -> None:
        self.catalog = catalog
        self.knowledge = knowledge
        self.threads = threads
        self.settings = settings or ServiceSettings()
        self.web_provider = web_provider
        self.fetcher = fetcher
        self.default_model = model
        self._resolve = resolve_model
        try:
            plain_policy = SourcePolicy(
                web_mode="always" if self.settings.web_allowlist else "off",
                allow_private=self.settings.web_allow_private,
                web_allowlist=list(self.settings.web_allowlist),
            )
        except ConfigError as exc:
            raise ConfigError(f"service.{exc}") from None  # "service.web_allowlist: ..."
        self.plain = SkillView(name="", k=search_k, backend=search_backend, mode=search_mode, policy=plain_policy)

    # --- request validation (errors here become HTTP 400 before any streaming) -------------
    def prepare(self, request: ChatRequest) -> PreparedChat:
        """Validate ``request``: skill (``SkillNotFound``), question (``EmptyInputError``), model (``UserError``),
        search index (``IndexStateError``). Blocking: call it from a worker thread in async code."""
        view, question = select_skill(self.catalog, request.question, request.skill)
        key = thread_key(request.thread_id, view.name if view else None)
        spec = request.model
        if spec is not None and spec not in self.settings.allowed_models and spec != self.default_model:
            raise UserError(f"model {spec!r} is not allowed here (service.allowed_models)")
        model = spec if spec is not None else self.default_model
        if isinstance(model, str):
            model = self._model(model)
        ready = getattr(self.knowledge, "ready", None)
        if ready is not None:
            v = view or self.plain
            ready(v.backend, v.mode)
        return PreparedChat(request=request, skill=view, question=question, key=key, model=model)

    def _model(self, spec: str) -> Any:
        if self._resolve is not None:
            return self._resolve(spec)
        from skillrag.models import resolve_model

        return resolve_model(spec)

    # --- one turn -------------------------------------------------------------------------
    async def stream(self, prepared: PreparedChat) -> AsyncIterator[Event]:
        """Run the turn, yielding events as they happen; always ends with ``done``."""
        view = prepared.skill or self.plain
        turn = _Turn(prepared=prepared, view=view, kb=self.knowledge.scoped(view.scope()), queue=asyncio.Queue(),
                     deadline=time.monotonic() + self.settings.turn_deadline_s)
        task = asyncio.create_task(self._run(turn))
        try:
            while True:
                ev = await turn.queue.get()
                if ev is None:
                    break
                yield ev
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _run(self, turn: _Turn) -> None:
        p = turn.prepared
        attrs = {"skillrag.skill": p.skill.name if p.skill else None, "skillrag.thread_key": p.key,
                 "skillrag.chat.mode": "model" if p.model is not None else "extractive",
                 "skillrag.chat.web_search": p.request.web_search}
        with span("skillrag.chat.turn", attrs) as current:  # retrieval, reads, the web step, model calls
            turn.trace_id = current_trace_id()
            status, seq = await self._answer(turn)
            set_attributes(current, {
                "skillrag.chat.status": status, "skillrag.chat.turn": seq, "skillrag.chat.rounds": turn.rounds,
                "skillrag.chat.tool_calls": turn.tool_calls, "gen_ai.usage.total_tokens": turn.tokens,
                "skillrag.chat.citations": len(turn.evidence), "skillrag.chat.rejected": len(turn.rejected),
                "skillrag.chat.unsupported": turn.unsupported})
            if status in ("budget_exceeded", "error") and current.is_recording():
                current.set_status(Status(StatusCode.ERROR, status))
            await turn.emit("done", {
                "status": status,
                "skill": p.skill.name if p.skill else None,
                "thread_id": p.request.thread_id,
                "thread_key": p.key,
                "turn": seq,
                "mode": "model" if p.model is not None else "extractive",
                "citations": [c.model_dump() for c in turn.evidence],
                "rejected": turn.rejected,
                "unsupported": turn.unsupported,
                "usage": {"retrieval_rounds": turn.rounds, "tool_calls": turn.tool_calls, "tokens": turn.tokens},
                "trace_id": turn.trace_id,
            })
        await turn.queue.put(None)

    async def _answer(self, turn: _Turn) -> tuple[str, int | None]:
        """The turn up to its ``done`` event: ``(status, stored turn number or None)``; every failure is
        reported as an ``error`` event here, never raised."""
        status = "ok"
        limit = self.settings.turn_deadline_s
        try:
            with anyio.move_on_after(limit) as deadline:
                await self._turn(turn)
            if deadline.cancelled_caught:
                raise BudgetExceeded(f"turn deadline reached ({limit:g} s, service.turn_deadline_s)")
            seq: int | None = await self._store(turn)  # outside the deadline: stored means reported stored
            if turn.unsupported:
                status = "unsupported"
        except (BudgetExceeded, ControlFlowError) as exc:
            status, seq = "budget_exceeded", None
            await turn.emit("error", {"kind": type(exc).__name__, "message": str(exc)})
        except UsageLimitExceeded as exc:  # pydantic-ai's token / request / tool-call limits
            status, seq = "budget_exceeded", None
            await turn.emit("error", {"kind": "BudgetExceeded", "message": str(exc)})
        except SkillragError as exc:
            status, seq = "error", None
            await turn.emit("error", {"kind": type(exc).__name__, "message": str(exc)})
        except Exception as exc:  # a stream cannot turn into an HTTP 500 any more: report and end
            log.exception("chat turn failed")
            status, seq = "error", None
            await turn.emit("error", {"kind": "InternalError", "message": f"{type(exc).__name__}: {exc}"})
        return status, seq

    async def _turn(self, turn: _Turn) -> None:
        """The turn's work up to the answer (under the turn deadline); storing it comes after."""
        p = turn.prepared
        history = await anyio.to_thread.run_sync(self.threads.history, p.key, self.settings.history_turns)
        turn.condensed = await self._condense(turn, history)
        await turn.emit("start", {
            "skill": p.skill.name if p.skill else None,
            "thread_id": p.request.thread_id,
            "thread_key": p.key,
            "question": p.question,
            "condensed": turn.condensed,
            "mode": "model" if p.model is not None else "extractive",
        })
        if p.model is None:
            await self._extractive(turn)
        else:
            await self._with_model(turn)

    async def _store(self, turn: _Turn) -> int:
        p = turn.prepared
        answer = "".join(turn.texts)
        stored = await anyio.to_thread.run_sync(lambda: self.threads.append(
            p.key, question=p.question, condensed=turn.condensed, answer=answer,
            skill=p.skill.name if p.skill else None,
            citations=[c.model_dump() for c in turn.evidence],
        ))
        return stored.seq

    async def _condense(self, turn: _Turn, history: list[Turn]) -> str:
        q = turn.prepared.question
        if not history:
            return q
        if turn.prepared.model is None:
            return condense_terms(q, history)
        from pydantic_ai.usage import UsageLimits

        lines = "\n".join(f"user: {t.question}\nassistant: {t.answer[:500]}" for t in history)
        prompt = load_prompt("condense").render(history=lines, question=q)
        agent = make_agent(turn.prepared.model, str)
        with model_errors(_model_name(turn.prepared.model)), _counted(turn) as usage:
            res = await agent.run(prompt, usage=usage,
                                  usage_limits=UsageLimits(total_tokens_limit=self.settings.max_tokens))
        text = " ".join(str(res.output).split())
        return text or q

    # --- caps -----------------------------------------------------------------------------
    def _charge(self, turn: _Turn, *, retrieval: bool = False) -> None:
        s = self.settings
        if turn.tool_calls >= s.max_tool_calls:
            raise BudgetExceeded(f"tool-call cap reached ({s.max_tool_calls} per turn)")
        if retrieval and turn.rounds >= s.max_retrieval_rounds:
            raise BudgetExceeded(f"retrieval cap reached ({s.max_retrieval_rounds} rounds per turn)")
        turn.tool_calls += 1
        if retrieval:
            turn.rounds += 1

    # --- tools shared by both answer paths (every article access goes through turn.kb) -----
    async def _retrieve(self, turn: _Turn, query: str) -> list[Any]:
        self._charge(turn, retrieval=True)
        v = turn.view
        with span("skillrag.chat.retrieve", {"skillrag.chat.round": turn.rounds, "skillrag.retrieve.k": v.k,
                                             "skillrag.retrieve.backend": v.backend, "skillrag.retrieve.mode": v.mode,
                                             "skillrag.retrieve.query_chars": len(query)}) as current:
            hits = await anyio.to_thread.run_sync(
                lambda: turn.kb.search(query, k=v.k, backend=v.backend, mode=v.mode))
            set_attributes(current, {"skillrag.retrieve.hits": len(hits)})
        await turn.emit("retrieval", {
            "round": turn.rounds,
            "query": query,
            "source_tags": v.policy.allowed_sources,
            "hits": [{"article_id": h.article_id, "title": h.title, "score": float(h.score)} for h in hits],
        })
        return hits

    async def _read(self, turn: _Turn, article_id: str) -> Any:
        """Read one in-scope article (a tool call); it becomes citable in this turn."""
        self._charge(turn)
        t0 = time.perf_counter()
        try:
            with span("skillrag.chat.read_article", {"skillrag.article_id": article_id}):
                art = await anyio.to_thread.run_sync(turn.kb.article, article_id)
        except UserError as exc:
            await turn.emit("tool_call", {"tool": "read_article", "args": {"article_id": article_id}, "ok": False,
                                          "ms": _ms(t0), "error": str(exc)})
            raise
        await turn.emit("tool_call", {"tool": "read_article", "args": {"article_id": article_id}, "ok": True,
                                      "ms": _ms(t0)})
        turn.read[art.id] = art
        return art

    def _cite(self, turn: _Turn, kind: str, source: str, title: str, body: str, snippet: str,
              url: str | None = None) -> Citation | None:
        span = verify_snippet(snippet, body)
        if span is None:
            turn.rejected.append({"source": source, "snippet": snippet[:200], "reason": "not a verbatim quote"})
            return None
        for c in turn.evidence:
            if c.source == source and c.start == span[0] and c.end == span[1]:
                return c
        c = Citation(n=len(turn.evidence) + 1, kind=kind, source=source, title=title, snippet=snippet,
                     start=span[0], end=span[1], url=url)
        turn.evidence.append(c)
        return c

    def _cite_article(self, turn: _Turn, art: Any, snippet: str) -> Citation | None:
        return self._cite(turn, "article", art.id, art.title, art.body, snippet, getattr(art, "url", None))

    def _web_policy(self, turn: _Turn) -> str | None:
        """None when the web may be read now as far as the policy goes, else the reason it may not
        (the fallback's relevance test is ``_kb_answers``, checked by ``_web``)."""
        pol = turn.view.policy
        if not turn.prepared.request.web_search:
            return "off"
        if pol.web_mode == "off":
            return "off_for_skill"
        if not pol.web_allowlist:
            return "no_allowlist"
        if self.web_provider is None or self.fetcher is None:
            return "not_configured"
        if turn.web_searched:
            return "already_searched"
        if pol.web_mode == "fallback" and turn.answers:
            return "not_needed"
        return None

    async def _kb_answers(self, turn: _Turn, hits: list[Any] | None = None) -> bool:
        """Whether the knowledge base answers this turn's question, decided in code once per turn.

        The question (condensed) is searched in the turn's scope (unless ``hits`` of that search are
        given) and the best ``RELEVANCE_TOP_HITS`` articles are read internally (not tool calls); it
        answers when one passage holds at least ``RELEVANCE_MIN_FRACTION`` of the question's key stems.
        """
        if turn.answers is not None:
            return turn.answers
        q, v = turn.condensed, turn.view
        if hits is None:
            hits = await anyio.to_thread.run_sync(lambda: turn.kb.search(q, k=v.k, backend=v.backend, mode=v.mode))
        answers = False
        for h in hits[:RELEVANCE_TOP_HITS]:
            try:
                art = await anyio.to_thread.run_sync(turn.kb.article, h.article_id)
            except UserError:
                continue
            if any(self._relevant(q, p.overlap) for p in best_passages(art.body, q)):
                answers = True
                break
        turn.answers = answers
        return answers

    async def _web(self, turn: _Turn, query: str) -> list[Any]:
        with span("skillrag.chat.web", {"skillrag.web.mode": turn.view.policy.web_mode}) as current:
            docs = await self._web_step(turn, query, current)
            set_attributes(current, {"skillrag.web.kept": len(docs)})
            return docs

    async def _web_step(self, turn: _Turn, query: str, current: Any) -> list[Any]:
        why = self._web_policy(turn)
        if why is None and turn.view.policy.web_mode == "fallback" and await self._kb_answers(turn):
            why = "not_needed"
        if why is None and not plain_query(query):
            why = "no_query"
        if why is not None:
            set_attributes(current, {"skillrag.web.status": why})
            await turn.emit("web", {"status": why, "queries": [], "kept": [], "dropped": []})
            return []
        self._charge(turn)
        turn.web_searched = True  # one-shot guard: at most one web lookup per turn
        t0 = time.perf_counter()
        assert self.web_provider is not None and self.fetcher is not None
        budget = max(0.0, (turn.deadline - time.monotonic()) * WEB_TIME_SHARE)
        try:
            found = await web_lookup(query, turn.view.policy.allowlist(), self.web_provider, self.fetcher,
                                     max_results=self.settings.web_max_results, deadline_s=budget)
        except BackendError as exc:  # the search endpoint failed: the knowledge-base answer still stands
            set_attributes(current, {"skillrag.web.status": "failed", "skillrag.error.kind": type(exc).__name__})
            await turn.emit("tool_call", {"tool": "web_search", "args": {"query": query}, "ok": False,
                                          "ms": _ms(t0), "error": str(exc)})
            await turn.emit("web", {"status": "failed", "queries": [], "kept": [], "dropped": [], "error": str(exc)})
            return []
        await turn.emit("tool_call", {"tool": "web_search", "args": {"query": query}, "ok": True, "ms": _ms(t0)})
        set_attributes(current, {"skillrag.web.status": "searched", "skillrag.web.queries": len(found.queries),
                                 "skillrag.web.dropped": len(found.dropped),
                                 "skillrag.web.dropped_stages": sorted({d.stage for d in found.dropped}),
                                 "skillrag.web.stopped": found.stopped})
        await turn.emit("web", {
            "status": "searched",
            "queries": found.queries,
            "kept": [{"url": d.url, "requested_url": d.requested_url, "hops": list(d.hops)} for d in found.documents],
            "dropped": [{"url": d.url, "stage": d.stage, "reason": d.reason} for d in found.dropped],
            "error": found.stopped,
        })
        for d in found.documents:
            turn.web_docs[d.url] = d
        return found.documents

    def _relevant(self, query: str, overlap: int) -> bool:
        want = len(stems(query))
        return want > 0 and overlap >= max(1, math.ceil(RELEVANCE_MIN_FRACTION * want))

    # --- extractive path (no model) -------------------------------------------------------
    async def _extractive(self, turn: _Turn) -> None:
        v, q = turn.view, turn.condensed
        hits = await self._retrieve(turn, q)
        # keep one tool call for the web when this turn may read it
        reserve = 1 if self._web_policy(turn) is None else 0
        for hit in hits:
            if len(turn.evidence) >= v.max_snippets or turn.tool_calls >= self.settings.max_tool_calls - reserve:
                break
            art = await self._read(turn, hit.article_id)
            for p in best_passages(art.body, q, min_chars=max(v.min_snippet_chars, EXTRACTIVE_MIN_CHARS)):
                self._cite_article(turn, art, p.text)
        if turn.prepared.request.web_search:
            if v.policy.web_mode == "fallback":
                await self._kb_answers(turn, hits)  # the same search decides; no second one
            for doc in await self._web(turn, q):
                for p in best_passages(doc.text, q, min_chars=max(v.min_snippet_chars, EXTRACTIVE_MIN_CHARS)):
                    self._cite(turn, "web", doc.url, doc.title, doc.text, p.text, doc.url)
        await self._say(turn, "No model is configured, so this answer is extractive: it quotes the "
                              "sources verbatim and every quote was checked against its source.\n")
        if not turn.evidence:
            await self._say(turn, "\nNo passage in the allowed sources matches the question.")
        for c in turn.evidence:
            where = c.source if c.kind == "web" else f"article {c.source}" + (f", {c.url}" if c.url else "")
            await self._say(turn, f"\n[{c.n}] {c.title} ({where}): \u201c{c.snippet}\u201d\n")

    async def _say(self, turn: _Turn, text: str) -> None:
        turn.texts.append(text)
        await turn.emit("text", {"delta": text})

    # --- model path ------------------------------------------------------------------------
    async def _with_model(self, turn: _Turn) -> None:
        from pydantic_ai.usage import UsageLimits

        v, s = turn.view, self.settings
        web_ok = turn.prepared.request.web_search and v.policy.web_mode != "off" and bool(v.policy.web_allowlist)
        instructions = [load_prompt("chat").render(
            web_note=" and, when allowed, a few allowlisted web pages" if web_ok else "",
            max_rounds=s.max_retrieval_rounds, max_tool_calls=s.max_tool_calls)]
        if v.manual:
            instructions.insert(0, v.manual)

        async def search_articles(query: str) -> list[dict[str, Any]]:
            """Search the articles; returns [{article_id, title, score}] best first."""
            hits = await self._retrieve(turn, query)
            return [{"article_id": h.article_id, "title": h.title, "score": round(float(h.score), 4)} for h in hits]

        async def read_article(article_id: str) -> str:
            """The title and body of one article (first 8000 characters)."""
            try:
                art = await self._read(turn, article_id)
            except UserError as exc:
                return f"error: {exc}"
            return f"# {art.title}\n\n{art.body[:READ_MAX_CHARS]}"

        async def web_search(query: str) -> list[dict[str, str]]:
            """Read allowlisted web pages for the query (at most once per turn); [{url, title, text}]."""
            docs = await self._web(turn, query)
            if not docs and not turn.web_searched:
                why = self._web_policy(turn) or ("not_needed" if turn.answers else "no_query")
                return [{"url": "", "title": "web not available", "text": why}]
            return [{"url": d.url, "title": d.title, "text": d.text[:READ_MAX_CHARS]} for d in docs]

        tools: list[Any] = [search_articles, read_article] + ([web_search] if web_ok else [])
        agent = make_agent(turn.prepared.model, ModelAnswer, instructions=instructions, tools=tools)
        left = max(1, s.max_tokens - turn.tokens)
        with model_errors(_model_name(turn.prepared.model)), _counted(turn) as usage:
            res = await agent.run(turn.condensed, usage=usage, usage_limits=UsageLimits(
                total_tokens_limit=left, tool_calls_limit=s.max_tool_calls, request_limit=s.max_tool_calls + 3))
        out: ModelAnswer = res.output
        await self._say(turn, out.answer)
        for quote in out.quotes:
            # only what this turn read can back the answer: an article the model never opened (or could
            # not open: outside the skill's sources) or a page not fetched now is not a citation
            if quote.source in turn.web_docs:
                d = turn.web_docs[quote.source]
                self._cite(turn, "web", d.url, d.title, d.text, quote.snippet, d.url)
            elif quote.source in turn.read:
                self._cite_article(turn, turn.read[quote.source], quote.snippet)
            else:
                turn.rejected.append({"source": quote.source, "snippet": quote.snippet[:200],
                                      "reason": "not read in this turn"})
        if not turn.evidence:
            turn.unsupported = True
            why = "every quote given for it was rejected" if out.quotes else "it quotes no source"
            await self._say(turn, f"\n\n{UNSUPPORTED_NOTE} ({why}).")


def _counted(turn: _Turn) -> contextlib.AbstractContextManager[Any]:
    """A fresh pydantic-ai ``RunUsage`` for one agent run, added to ``turn.tokens`` however the run ends
    (a budget or deadline stopping it too): ``models.counted_usage``, the one rule of every agent run."""

    def add(usage: Any) -> None:
        turn.tokens += usage.total_tokens or 0

    return counted_usage(add)


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", None) or model)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)

