"""The FastAPI app of ``skillrag serve``.

Routes (OpenAPI at ``/openapi.json``, docs at ``/docs``):

``GET  /healthz``         liveness, no token needed
``GET  /skills``          the registered skills (name, description, sources, web mode)
``POST /chat``            one chat turn, streamed as server-sent events (see ``skillrag.service.chat``)
``POST /runs``            run one case through the harness in the background (HTTP 202)
``GET  /runs/{run_id}``   the state of a run: ``running``, ``accepted``, ``failed``, ``budget_exceeded``, ``error``
``GET  /articles/{id}``   one source article

Errors are JSON ``{"error": "...", "kind": "SkillNotFound"}``: bad input 400 (unknown skill or slug
included), unknown article/case/run 404, missing or wrong bearer token 401, backend failure 503.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, is_dataclass
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from skillrag.errors import (
    ArticleNotFound,
    BackendError,
    CaseNotFound,
    ContractViolation,
    SkillNotFound,
    SkillragError,
    UserError,
)
from skillrag.service.chat import ChatEngine, ChatRequest
from skillrag.service.knowledge import Knowledge
from skillrag.service.skills import SkillCatalog
from skillrag.service.threads import ThreadStore
from skillrag.service.web import WebFetcher, WebSearchProvider
from skillrag.workspace.config import ServiceSettings

__all__ = ["ErrorBody", "RunRequest", "RunRunner", "create_app", "workspace_app"]

log = logging.getLogger("skillrag.service")

#: ``(case, harness, skill) -> result dict`` with at least ``status``; runs in a worker thread.
RunRunner = Callable[[dict[str, Any], str, str | None], dict[str, Any]]

_BEARER = HTTPBearer(auto_error=False, description="Set with `skillrag serve --token`.")
_ID = r"^[A-Za-z0-9][A-Za-z0-9_.()+\-:#]{0,199}$"


class ErrorBody(BaseModel):
    error: str = Field(description="One-line message.")
    kind: str = Field(description="The skillrag error class, e.g. `SkillNotFound`.")


class SkillInfo(BaseModel):
    name: str
    description: str
    web_mode: str
    allowed_sources: list[str] | None
    web_allowlist: list[str]


class Health(BaseModel):
    status: Literal["ok"]
    skills: int


class RunRequest(BaseModel):
    """Body of ``POST /runs``: one agent-facing case (``skillrag.skill.Case`` fields)."""

    model_config = ConfigDict(extra="forbid")

    case: dict[str, Any] = Field(description="The case: case_id, contact_reason, case_notes, case_messages, ...")
    harness: Literal["extractive", "llm"] = Field("extractive", description="Who reasons.")
    skill: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$", description="Skill name.")


class RunState(BaseModel):
    id: str
    status: str
    case_id: str
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: str | None = None
    finished_at: str | None = None


class ArticleOut(BaseModel):
    id: str
    title: str
    body: str
    source_tag: str = ""
    source_path: str = ""
    content_hash: str = ""


def _status_of(exc: SkillragError) -> int:
    if isinstance(exc, ArticleNotFound | CaseNotFound):
        return 404
    if isinstance(exc, SkillNotFound | UserError):
        return 400
    if isinstance(exc, ContractViolation):
        return 422
    if isinstance(exc, BackendError):
        return 503
    return 500


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON data (pydantic models, dataclasses, paths)."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if is_dataclass(obj) and not isinstance(obj, type):
        return json.loads(json.dumps(asdict(obj), default=str))
    return json.loads(json.dumps(obj, default=str))


def create_app(
    *,
    catalog: SkillCatalog,
    knowledge: Knowledge,
    threads: ThreadStore,
    settings: ServiceSettings | None = None,
    run_runner: RunRunner | None = None,
    web_provider: WebSearchProvider | None = None,
    fetcher: WebFetcher | None = None,
    model: Any | None = None,
    resolve_model: Callable[[Any], Any] | None = None,
    search_k: int = 8,
    search_backend: str | None = None,
    search_mode: str | None = None,
    token: str | None = None,
    run_workers: int = 2,
    case_validator: Callable[[dict[str, Any]], None] | None = None,
) -> FastAPI:
    """The app over explicit parts (tests pass doubles from ``skillrag.service.testing``).

    ``token``: when set, every route but ``/healthz`` needs ``Authorization: Bearer <token>``.
    ``run_runner``: runs ``POST /runs`` jobs (None = the route answers 503); ``case_validator`` checks a
    case before the job starts (raise ``UserError`` -> HTTP 400).
    """
    settings = settings or ServiceSettings()
    engine = ChatEngine(
        catalog=catalog, knowledge=knowledge, threads=threads, settings=settings, search_k=search_k,
        search_backend=search_backend, search_mode=search_mode, web_provider=web_provider, fetcher=fetcher,
        model=model, resolve_model=resolve_model,
    )
    pool = ThreadPoolExecutor(max_workers=run_workers, thread_name_prefix="skillrag-run")

    @asynccontextmanager
    async def lifespan(_: FastAPI):  # type: ignore[no-untyped-def]
        yield
        pool.shutdown(wait=False, cancel_futures=True)
        for closer in (fetcher, web_provider):
            aclose = getattr(closer, "aclose", None)
            if aclose is not None:
                await aclose()

    app = FastAPI(
        title="skillrag",
        summary="Grounded answers from source articles, one skill per thread, allowlisted web fallback.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.engine = engine
    def auth(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> None:
        if token is None:
            return
        if creds is None or not secrets.compare_digest(creds.credentials.encode(), token.encode()):
            raise _Unauthorized()

    errors = {400: {"model": ErrorBody}, 401: {"model": ErrorBody}}

    @app.exception_handler(SkillragError)
    async def _skillrag_error(_: Request, exc: SkillragError) -> JSONResponse:
        return JSONResponse({"error": str(exc), "kind": type(exc).__name__}, status_code=_status_of(exc))

    @app.exception_handler(_Unauthorized)
    async def _unauthorized(_: Request, exc: _Unauthorized) -> JSONResponse:
        return JSONResponse({"error": "missing or wrong bearer token", "kind": "Unauthorized"}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    @app.get("/healthz", response_model=Health)
    def healthz() -> Health:
        return Health(status="ok", skills=len(catalog.names()))

    @app.get("/skills", response_model=list[SkillInfo], dependencies=[Depends(auth)], responses=errors)
    def list_skills() -> list[SkillInfo]:
        out = []
        for name in catalog.names():
            v = catalog.get(name)
            out.append(SkillInfo(name=v.name, description=v.description, web_mode=v.policy.web_mode,
                                 allowed_sources=v.policy.allowed_sources, web_allowlist=v.policy.web_allowlist))
        return out

    @app.post(
        "/chat",
        dependencies=[Depends(auth)],
        response_class=EventSourceResponse,
        responses={
            200: {"description": "Server-sent events: start, retrieval, tool_call, web, text, error, done.",
                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            **errors,
            503: {"model": ErrorBody},
        },
    )
    async def chat(body: ChatRequest) -> EventSourceResponse:
        # unknown skill / slug -> 400, missing index -> 503, before any byte is streamed
        prepared = await asyncio.to_thread(engine.prepare, body)

        async def events():  # type: ignore[no-untyped-def]
            async for ev in engine.stream(prepared):
                yield {"event": ev.name, "data": json.dumps(ev.data, ensure_ascii=False, default=str)}

        return EventSourceResponse(events())

    @app.post("/runs", status_code=202, response_model=RunState, dependencies=[Depends(auth)],
              responses={**errors, 503: {"model": ErrorBody}})
    async def start_run(body: RunRequest) -> RunState:
        if run_runner is None:
            raise BackendError("runs are not available in this service (no workspace harness)")
        case_id = body.case.get("case_id")
        if not isinstance(case_id, str) or not case_id.strip():
            raise UserError("case.case_id must be a non-empty string")
        if body.skill is not None:
            catalog.get(body.skill)
        if case_validator is not None:
            case_validator(body.case)
        run_id = uuid.uuid4().hex
        await asyncio.to_thread(threads.run_create, run_id, case_id)

        def job() -> None:
            try:
                result = jsonable(run_runner(body.case, body.harness, body.skill))
                threads.run_finish(run_id, str(result.get("status", "accepted")), result=result)
            except SkillragError as exc:
                threads.run_finish(run_id, "error", error=f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # reported on GET /runs/{id}, never lost
                log.exception("run %s failed", run_id)
                threads.run_finish(run_id, "error", error=f"{type(exc).__name__}: {exc}")

        asyncio.get_running_loop().run_in_executor(pool, job)
        return RunState(id=run_id, status="running", case_id=case_id)

    @app.get("/runs/{run_id}", response_model=RunState, dependencies=[Depends(auth)],
             responses={**errors, 404: {"model": ErrorBody}})
    async def get_run(run_id: str = Path(pattern=r"^[0-9a-f]{32}$")) -> RunState:
        row = await asyncio.to_thread(threads.run_get, run_id)
        if row is None:
            return JSONResponse({"error": f"no run with id {run_id!r}", "kind": "NotFound"}, status_code=404)
        return RunState(**row)

    @app.get("/articles/{article_id}", response_model=ArticleOut, dependencies=[Depends(auth)],
             responses={**errors, 404: {"model": ErrorBody}})
    async def get_article(article_id: str = Path(pattern=_ID, max_length=200)) -> ArticleOut:
        art = await asyncio.to_thread(knowledge.article, article_id)
        return ArticleOut(id=art.id, title=art.title, body=art.body, source_tag=getattr(art, "source_tag", ""),
                          source_path=getattr(art, "source_path", ""),
                          content_hash=getattr(art, "content_hash", ""))

    return app


class _Unauthorized(Exception):
    pass


def workspace_app(workspace: Any, *, token: str | None = None, web_client: Any | None = None) -> FastAPI:
    """The app over a real workspace: skills from ``skills/``, articles and index from the store,
    threads in ``.skillrag/service.sqlite``, model from ``models.default`` (none = extractive), web
    search from ``service.web_search_url`` (none = web off), runs through ``skillrag.harness.run_case``.

    Raises ``IndexStateError`` at the first chat if the search index is missing or stale.
    """
    from skillrag.service.knowledge import WorkspaceKnowledge
    from skillrag.service.skills import RegistryCatalog
    from skillrag.service.web import SearxngProvider

    cfg = workspace.config
    s: ServiceSettings = cfg.service
    provider = fetcher = None
    if s.web_search_url:
        provider = SearxngProvider(s.web_search_url, timeout_s=s.web_timeout_s)
        fetcher = WebFetcher(web_client, max_redirects=s.web_max_redirects, max_bytes=s.web_max_bytes,
                             timeout_s=s.web_timeout_s)

    def validate(case: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from skillrag.skill import Case

        from skillrag.corpus import check_id

        try:
            parsed = Case.model_validate(case)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise UserError(f"case: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        check_id(parsed.case_id, "case")  # refused up front (HTTP 400), before a run is queued
        return parsed

    def runner(case: dict[str, Any], harness: str, skill: str | None) -> dict[str, Any]:
        from skillrag.harness import run_case

        c = validate(case)
        model = cfg.models.default if harness == "llm" else None
        if harness == "llm" and model is None:
            raise UserError("harness 'llm' needs models.default in skillrag.yaml")
        res = run_case(workspace, c, harness=harness, model=model, skill=skill or cfg.harness.skill)
        return {"status": res.status, "output": res.output, "record": jsonable(res.record)}

    return create_app(
        catalog=RegistryCatalog(workspace),
        knowledge=WorkspaceKnowledge(workspace),
        threads=ThreadStore(workspace.state_dir / "service.sqlite"),
        settings=s,
        run_runner=runner,
        case_validator=validate,
        web_provider=provider,
        fetcher=fetcher,
        model=cfg.models.default,
        search_k=cfg.search.k,
        search_backend=cfg.search.backend,
        search_mode=cfg.search.mode,
        token=token,
    )
