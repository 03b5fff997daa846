"""The FastAPI app of ``skillrag serve``.

Routes (OpenAPI at ``/openapi.json``, docs at ``/docs`` and ``/redoc``):

``GET  /healthz``         liveness: the only route that never needs the token
``GET  /skills``          the registered skills (name, description, sources, web mode)
``POST /chat``            one chat turn, streamed as server-sent events (see ``skillrag.service.chat``)
``POST /runs``            run one case through the harness in the background (HTTP 202)
``GET  /runs/{run_id}``   the state of a run: ``running``, ``accepted``, ``failed``, ``budget_exceeded``, ``error``
``GET  /articles/{id}``   one source article
``GET  /openapi.json``, ``/docs``, ``/redoc``   the schema and its viewers (token needed like the rest)
``/review``...            the review pages (HTML, session sign-in; see ``skillrag.service.review``), when
                          the app serves a workspace

Before any route runs, ``RequestGuard`` (ASGI middleware) checks what the headers alone decide, and
reads no byte of a body it refuses: without a token, the ``Host`` header must be a loopback name
(``localhost``, ``127.0.0.1``, ``[::1]``) on the served port or one of ``service.allowed_hosts`` (HTTP
400 ``HostNotAllowed``: a DNS-rebinding page cannot use the API); with one, every route but
``/healthz`` and the ``/review`` pages (their own sign-in) needs the bearer token (401); a body over
``service.max_body_bytes`` is refused from its ``Content-Length``, or, without one, as soon as the bytes
read pass it (413 ``PayloadTooLarge``).

Every error, whatever raised it, is JSON ``{"error": "...", "kind": "..."}`` (``ErrorBody``): bad
input 400 (request validation ``ValidationError``, unparsable JSON, unknown skill or slug
``SkillNotFound``, bad id ``InvalidIdError``, a ``Host`` not served ``HostNotAllowed``), missing or wrong
bearer token 401 ``Unauthorized``, unknown article/case/run or route 404, wrong method 405, a body too
large 413 ``PayloadTooLarge``, backend failure 503, anything else 500
``InternalError``. The OpenAPI document says exactly this (FastAPI's 422 ``HTTPValidationError`` is
replaced), and documents each ``/chat`` event with its own payload schema.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import secrets
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path as PathLib
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model
from pydantic.json_schema import models_json_schema
from sse_starlette import EventSourceResponse
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException as StarletteHTTPException

from skillrag.corpus import Article, check_id
from skillrag.errors import (
    ArticleNotFound,
    BackendError,
    CaseNotFound,
    ContractViolation,
    InvalidIdError,
    SkillNotFound,
    SkillragError,
    UserError,
)
from skillrag.service.chat import EVENT_MODELS, ChatEngine, ChatRequest
from skillrag.service.knowledge import Knowledge
from skillrag.service.scoring import SavedRun, Scorer, ServedAnswer
from skillrag.service.skills import SkillCatalog
from skillrag.service.threads import ThreadStore
from skillrag.service.web import WebFetcher, WebSearchProvider
from skillrag.tracing import span
from skillrag.workspace.config import ServiceSettings
from skillrag.workspace.ids import ID_RULES

__all__ = ["LOOPBACK_HOSTS", "ErrorBody", "RequestGuard", "RunRequest", "RunRunner", "create_app", "workspace_app"]

log = logging.getLogger("skillrag.service")

#: ``(case, harness, skill) -> result dict`` with at least ``status``; runs in a worker thread.
RunRunner = Callable[[dict[str, Any], str, str | None], dict[str, Any]]

_BEARER = HTTPBearer(auto_error=False, description="Set with `skillrag serve --token`.")
#: Id patterns for the schema and the path parameters (``skillrag.workspace.ids``, where ``check_id`` refuses
#: ``..`` and reserved case names too).
_ID = ID_RULES["article"].schema_pattern
_CASE_ID = ID_RULES["case"].schema_pattern


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


def _plain_case_id(value: str) -> str:
    try:
        return check_id(value, "case")  # the one id rule (a full match: "ok\n" is refused)
    except InvalidIdError as exc:
        raise ValueError(str(exc)) from None


class RunCase(BaseModel):
    """One agent-facing case (``skillrag.skill.Case``): ``case_id`` plus ``contact_reason``, ``case_notes``,
    ``case_messages`` ...; the service checks the whole case before it queues the run (HTTP 400)."""

    model_config = ConfigDict(extra="allow", strict=True)

    case_id: Annotated[str, AfterValidator(_plain_case_id)] = Field(
        max_length=200, json_schema_extra={"pattern": _CASE_ID},
        description="A plain case id (letters, digits, _ - + ( ) :), checked by `corpus.check_id`.")


class RunRequest(BaseModel):
    """Body of ``POST /runs``: one agent-facing case (``skillrag.skill.Case`` fields)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    case: RunCase = Field(description="The case: case_id, contact_reason, case_notes, case_messages, ...")
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


#: The fields of a stored article that ``GET /articles/{id}`` returns: a subset of ``corpus.Article``'s.
ARTICLE_OUT_FIELDS = ("id", "title", "body", "source_tag", "source_path", "content_hash", "url", "skill")

#: ``GET /articles/{id}``'s body: those fields of ``corpus.Article``, with its types and descriptions (one
#: field list, the corpus model's; not a hand-kept copy of it).
ArticleOut: type[BaseModel] = create_model(
    "ArticleOut", **{n: (Article.model_fields[n].annotation, Article.model_fields[n]) for n in ARTICLE_OUT_FIELDS})


_HTTP_KINDS = {404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge", 415: "UnsupportedMediaType"}


def _error(message: str, kind: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "kind": kind}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    """One line for the first validation error: ``where: what`` (``body: invalid JSON ...`` for a bad body)."""
    errs = exc.errors()
    if not errs:
        return "invalid request"
    err = errs[0]
    where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
    if err.get("type") == "json_invalid":
        return f"body is not valid JSON ({err.get('ctx', {}).get('error', err.get('msg'))})"
    more = f" (+{len(errs) - 1} more)" if len(errs) > 1 else ""
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {msg}{more}"


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
    review: Any | None = None,
    scorer: Scorer | None = None,
) -> FastAPI:
    """The app over explicit parts (tests pass doubles from ``skillrag.service.testing``).

    ``token``: when set, every route but ``/healthz`` (``/openapi.json``, ``/docs`` and ``/redoc`` included)
    needs ``Authorization: Bearer <token>``; when None, the routes are open and the schema declares no security.
    ``run_runner``: runs ``POST /runs`` jobs (None = the route answers 503); ``case_validator`` checks a
    case before the job starts (raise ``UserError`` -> HTTP 400); ``review``: a ``Workspace`` whose runs the
    ``/review`` pages serve (None = no review pages); ``scorer``: judges each served answer and accepted run
    after its response has gone out (``skillrag.service.scoring``; None = no live scoring).
    """
    settings = settings or ServiceSettings()
    engine = ChatEngine(
        catalog=catalog, knowledge=knowledge, threads=threads, settings=settings, search_k=search_k,
        search_backend=search_backend, search_mode=search_mode, web_provider=web_provider, fetcher=fetcher,
        model=model, resolve_model=resolve_model,
    )
    pools: list[ThreadPoolExecutor] = []  # the run pool of the current lifespan, made on first use

    def pool() -> ThreadPoolExecutor:
        if not pools:
            pools.append(ThreadPoolExecutor(max_workers=run_workers, thread_name_prefix="skillrag-run"))
        return pools[0]

    @asynccontextmanager
    async def lifespan(_: FastAPI):  # type: ignore[no-untyped-def]
        yield
        while pools:  # a later lifespan (a restarted server, a new test client) gets a fresh pool
            pools.pop().shutdown(wait=False, cancel_futures=True)
        if scorer is not None:
            scorer.close()
        for closer in (fetcher, web_provider):
            aclose = getattr(closer, "aclose", None)
            if aclose is not None:
                await aclose()

    app = FastAPI(
        title="skillrag",
        summary="Grounded answers from source articles, one skill per thread, allowlisted web fallback.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # served below, behind the token like every route but /healthz
        redoc_url=None,
        openapi_url=None,
    )
    app.state.engine = engine

    app.add_middleware(RequestGuard, token=token, max_body_bytes=settings.max_body_bytes,
                       allowed_hosts=list(settings.allowed_hosts))

    def auth(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
             request: Request) -> None:
        # RequestGuard refused a wrong token before the body was read; this declares the security scheme
        # in the schema and checks again with the same rule (a route mounted past the middleware)
        if token is not None and not _token_ok(request.headers.get("authorization"), token):
            raise _Unauthorized()

    # without a token there is no security to declare (or to check)
    guard = [Depends(auth)] if token is not None else []
    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorBody, "description": "Bad input (`ValidationError`, `SkillNotFound`, ...)."}}
    if token is not None:
        errors[401] = {"model": ErrorBody, "description": "Missing or wrong bearer token."}

    @app.exception_handler(SkillragError)
    async def _skillrag_error(_: Request, exc: SkillragError) -> JSONResponse:
        return _error(str(exc), type(exc).__name__, _status_of(exc))

    @app.exception_handler(_Unauthorized)
    async def _unauthorized(_: Request, exc: _Unauthorized) -> JSONResponse:
        return _error("missing or wrong bearer token", "Unauthorized", 401, {"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(_validation_message(exc), "ValidationError", 400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = _HTTP_KINDS.get(exc.status_code, "HTTPError")
        return _error(str(exc.detail), kind, exc.status_code, dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        log.error("request failed", exc_info=exc)
        return _error(f"{type(exc).__name__}: {exc}", "InternalError", 500)

    @app.get("/openapi.json", include_in_schema=False, dependencies=guard)
    def openapi_json() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False, dependencies=guard)
    def swagger_docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="skillrag - docs")

    @app.get("/redoc", include_in_schema=False, dependencies=guard)
    def redoc_docs() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title="skillrag - ReDoc")

    @app.get("/healthz", response_model=Health)
    def healthz() -> Health:
        return Health(status="ok", skills=len(catalog.names()))

    @app.get("/skills", response_model=list[SkillInfo], dependencies=guard, responses=errors)
    def list_skills() -> list[SkillInfo]:
        out = []
        for name in catalog.names():
            v = catalog.get(name)
            out.append(SkillInfo(name=v.name, description=v.description, web_mode=v.policy.web_mode,
                                 allowed_sources=v.policy.allowed_sources, web_allowlist=v.policy.web_allowlist))
        return out

    @app.post(
        "/chat",
        dependencies=guard,
        response_class=EventSourceResponse,
        responses={
            200: {"description": "Server-sent events: start, retrieval*, tool_call*, web?, text*, error?, done "
                                 "(always last). Each event's `data` is the JSON of its payload schema."},
            **errors,
            503: {"model": ErrorBody, "description": "The search index is missing or stale."},
        },
    )
    async def chat(body: ChatRequest) -> EventSourceResponse:
        # unknown skill / slug -> 400, missing index -> 503, before any byte is streamed
        prepared = await asyncio.to_thread(engine.prepare, body)
        served: dict[str, Any] = {}

        async def events():  # type: ignore[no-untyped-def]
            texts: list[str] = []
            async for ev in engine.stream(prepared):
                if ev.name == "text":
                    texts.append(ev.data["delta"])
                elif ev.name == "done":
                    served.update(ev.data, answer="".join(texts))
                yield {"event": ev.name, "data": json.dumps(ev.data, ensure_ascii=False, default=str)}

        # Starlette runs the background task once the last event was sent: the judge starts after the answer
        # is out, and the task only queues it (``_score_answer`` never raises)
        after = BackgroundTask(_score_answer, scorer, prepared, served) if scorer is not None else None
        return EventSourceResponse(events(), background=after)

    @app.post("/runs", status_code=202, response_model=RunState, dependencies=guard,
              responses={**errors, 503: {"model": ErrorBody, "description": "Runs are not available here."}})
    async def start_run(body: RunRequest) -> RunState:
        if run_runner is None:
            raise BackendError("runs are not available in this service (no workspace harness)")
        case = body.case.model_dump()
        case_id = body.case.case_id  # already a plain id (RunCase)
        if body.skill is not None:
            catalog.get(body.skill)
        if case_validator is not None:
            case_validator(case)
        run_id = uuid.uuid4().hex
        await asyncio.to_thread(threads.run_create, run_id, case_id)

        def job() -> None:
            try:
                with span("skillrag.service.run", {"skillrag.run_id": run_id, "skillrag.case_id": case_id,
                                                   "skillrag.harness": body.harness, "skillrag.skill": body.skill}):
                    result = jsonable(run_runner(case, body.harness, body.skill))
                threads.run_finish(run_id, str(result.get("status", "accepted")), result=result)
            except SkillragError as exc:
                threads.run_finish(run_id, "error", error=f"{type(exc).__name__}: {exc}")
                return
            except Exception as exc:  # reported on GET /runs/{id}, never lost
                log.exception("run %s failed", run_id)
                threads.run_finish(run_id, "error", error=f"{type(exc).__name__}: {exc}")
                return
            _score_run(scorer, case, result)  # after the run's result is stored; never raises

        # the job's spans belong to the trace of the request that queued it
        asyncio.get_running_loop().run_in_executor(pool(), contextvars.copy_context().run, job)
        return RunState(id=run_id, status="running", case_id=case_id)

    @app.get("/runs/{run_id}", response_model=RunState, dependencies=guard,
             responses={**errors, 404: {"model": ErrorBody, "description": "No run with this id."}})
    async def get_run(run_id: str = Path(pattern=r"^[0-9a-f]{32}$")) -> RunState:
        row = await asyncio.to_thread(threads.run_get, run_id)
        if row is None:
            return _error(f"no run with id {run_id!r}", "NotFound", 404)
        return RunState(**row)

    @app.get("/articles/{article_id}", response_model=ArticleOut, dependencies=guard,
             responses={**errors, 404: {"model": ErrorBody, "description": "No article with this id."}})
    async def get_article(article_id: str = Path(pattern=_ID, max_length=200)) -> BaseModel:
        art = await asyncio.to_thread(knowledge.article, article_id)
        return ArticleOut.model_validate({n: getattr(art, n) for n in ARTICLE_OUT_FIELDS})

    if review is not None:
        from skillrag.service.review import review_router

        app.include_router(review_router(review, token=token))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _document_errors_and_events(get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _score_answer(scorer: Scorer | None, prepared: Any, served: dict[str, Any]) -> None:
    """Queue a served chat answer for the judge: a stored turn that ended ``ok`` or ``unsupported`` (an
    answer the client got whole). Never raises: the response has already gone out."""
    try:
        if scorer is None or served.get("status") not in ("ok", "unsupported") or served.get("turn") is None:
            return
        scorer.submit_answer(ServedAnswer(
            thread_key=served["thread_key"], turn=int(served["turn"]), question=prepared.question,
            answer=served.get("answer", ""), citations=list(served.get("citations") or []),
            trace_id=served.get("trace_id")))
    except Exception:  # the response has already gone out
        log.exception("could not hand the answer to the judge")


def _score_run(scorer: Scorer | None, case: dict[str, Any], result: dict[str, Any]) -> None:
    """Queue an accepted run (its ``output.json`` folder, from the record) for the judge. Never raises."""
    try:
        record = result.get("record") or {}
        if scorer is None or result.get("status") != "accepted" or not record.get("output_path"):
            return
        scorer.submit_run(SavedRun(folder=PathLib(record["output_path"]).parent, case=case,
                                   trace_id=record.get("trace_id")))
    except Exception:  # the response has already gone out
        log.exception("could not hand the run to the judge")


def _document_errors_and_events(doc: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document as the app behaves: every 4xx is ``ErrorBody`` (FastAPI's 422
    ``HTTPValidationError`` is a 400 ``ErrorBody`` here), and ``/chat``'s 200 is an event stream whose
    ``schema`` (OpenAPI 3.1: the schema of one event) is one of the ``EVENT_MODELS`` payloads, each
    tagged with its event name and carried as JSON in ``data``."""
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, ops in doc.get("paths", {}).items():
        for op in ops.values():
            responses = op.get("responses", {})
            responses.pop("422", None)
            if path != "/healthz" and "400" not in responses:
                responses["400"] = {"description": "Bad input.", "content": {"application/json": {"schema": error_ref}}}
    _, defs = models_json_schema([(m, "serialization") for m in EVENT_MODELS.values()],
                                 ref_template="#/components/schemas/{model}")
    schemas.update(defs.get("$defs", {}))
    one_of = []
    for name, model in EVENT_MODELS.items():
        one_of.append({
            "type": "object",
            "title": f"{name} event",
            "properties": {
                "event": {"const": name},
                "data": {"type": "string", "contentMediaType": "application/json",
                         "contentSchema": {"$ref": f"#/components/schemas/{model.__name__}"}},
                "id": {"type": "string"},
                "retry": {"type": "integer", "minimum": 0},
            },
            "required": ["event", "data"],
        })
    chat = doc["paths"]["/chat"]["post"]["responses"]["200"]
    chat["content"] = {"text/event-stream": {"schema": {"oneOf": one_of}}}
    return doc


class _Unauthorized(Exception):
    pass


def _token_ok(authorization: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header value carries ``Bearer <token>`` (compared in constant time)."""
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode())


#: Host names a service without a token answers to (with the served port), besides ``service.allowed_hosts``.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: Paths that never need the bearer token: liveness, and the review pages (they sign in with it themselves).
_OPEN_PATHS = ("/healthz",)
_SESSION_PREFIX = "/review"


def _split_host(value: str) -> tuple[str, int | None]:
    """``("name", port)`` of a ``Host`` header value (``[::1]:8765`` -> ``("[::1]", 8765)``): port None when
    absent, -1 when it is not a number (which matches nothing)."""
    value = value.strip().lower()
    if value.startswith("["):
        inner, bracket, rest = value.partition("]")
        name = inner + bracket
    else:
        name, colon, digits = value.partition(":")
        rest = colon + digits
    if not rest:
        return name.rstrip("."), None
    digits = rest[1:] if rest.startswith(":") else ""
    return name.rstrip("."), int(digits) if digits.isdigit() else -1


class RequestGuard:
    """ASGI middleware: the checks the request line and headers decide, before any body is read (module doc).

    ``token``: the bearer token (None = open API, and then the ``Host`` check applies);
    ``max_body_bytes``: the largest body, in bytes; ``allowed_hosts``: further ``Host`` values accepted
    without a token (``name`` for any port, ``name:port`` for one).
    """

    def __init__(self, app: Any, *, token: str | None, max_body_bytes: int, allowed_hosts: list[str]) -> None:
        self.app = app
        self.token = token
        self.max_body_bytes = max_body_bytes
        self.allowed = [_split_host(h) for h in allowed_hosts]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)  # the body is never read
            return
        limit = self.max_body_bytes
        read = 0

        async def counted() -> dict[str, Any]:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > limit:  # an HTTPException, so FastAPI's body parsing passes it on as it is
                    raise StarletteHTTPException(413, f"request body larger than {limit} bytes "
                                                      "(service.max_body_bytes)")
            return message

        await self.app(scope, counted, send)

    def _refusal(self, scope: dict[str, Any], headers: dict[str, str]) -> JSONResponse | None:
        if self.token is None and not self._host_ok(scope, headers.get("host", "")):
            served = (scope.get("server") or ("", None))[1]
            return _error(f"Host {headers.get('host', '')[:100]!r} is not served here: without a token only "
                          f"localhost, 127.0.0.1 and [::1]{f' on port {served}' if served else ''} are "
                          "(service.allowed_hosts adds others)", "HostNotAllowed", 400)
        path = scope.get("path", "")
        if (self.token is not None and path not in _OPEN_PATHS
                and not (path == _SESSION_PREFIX or path.startswith(_SESSION_PREFIX + "/"))
                and not _token_ok(headers.get("authorization"), self.token)):
            return _error("missing or wrong bearer token", "Unauthorized", 401, {"WWW-Authenticate": "Bearer"})
        length = headers.get("content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_body_bytes):
            if not length.strip().isdigit():
                return _error("Content-Length is not a number", "ValidationError", 400)
            return _error(f"request body larger than {self.max_body_bytes} bytes (service.max_body_bytes)",
                          "PayloadTooLarge", 413)
        return None

    def _host_ok(self, scope: dict[str, Any], host: str) -> bool:
        name, port = _split_host(host)
        served = (scope.get("server") or (None, None))[1]
        if port is None:
            port = 443 if scope.get("scheme") == "https" else 80
        if name in LOOPBACK_HOSTS and (served is None or port == served):
            return True
        return any(name == n and (p is None or p == port) for n, p in self.allowed)


def workspace_app(workspace: Any, *, token: str | None = None, web_client: Any | None = None) -> FastAPI:
    """The app over a real workspace: skills from ``skills/``, articles and index from the store,
    threads in ``.skillrag/service.sqlite``, model from ``models.default`` (none = extractive), web
    search from ``service.web_search_url`` (none = web off), runs through ``skillrag.harness.run_case``.

    Raises ``IndexStateError`` at the first chat if the search index is missing or stale. With
    ``service.judge_model`` a judge scores each served answer and accepted run after its response
    (``skillrag.service.scoring``); an unknown judge or a model that cannot be built stops it here.
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
                             timeout_s=s.web_timeout_s, deadline_s=s.web_fetch_deadline_s,
                             allow_private=s.web_allow_private)

    def validate(case: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from skillrag.corpus import check_id
        from skillrag.skill import Case

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

    threads = ThreadStore(workspace.state_dir / "service.sqlite")
    scorer = None
    if s.judge_model:
        from skillrag.models import resolve_model
        from skillrag.service.scoring import JudgeScorer

        # a missing key or an unknown judge stops `serve` here, with one line, not at the first answer
        scorer = JudgeScorer(resolve_model(s.judge_model, settings=cfg.models), threads=threads, judges=s.judges,
                             calls=s.judge_calls, temperature=s.judge_temperature, model_name=s.judge_model)
    return create_app(
        catalog=RegistryCatalog(workspace),
        knowledge=WorkspaceKnowledge(workspace),
        threads=threads,
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
        review=workspace,
        scorer=scorer,
    )
