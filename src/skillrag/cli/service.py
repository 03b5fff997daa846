"""``skillrag serve``: the HTTP service (FastAPI + uvicorn) over a workspace."""

from __future__ import annotations

import os
import socket
from typing import Annotated

import typer

from skillrag.cli._common import WorkspaceOpt, err_console, open_workspace
from skillrag.errors import UserError

__all__ = ["register"]


def serve(
    workspace: WorkspaceOpt = None,
    host: Annotated[str | None, typer.Option("--host", help="Interface to bind (default: service.host).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="TCP port (default: service.port).", min=1,
                                             max=65535)] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", envvar="SKILLRAG_SERVICE_TOKEN",
                     help="Require `Authorization: Bearer TOKEN` on every route but /healthz."),
    ] = None,
    check: Annotated[bool, typer.Option("--check", help="Build the app, print its routes and exit.")] = False,
) -> None:
    """Serve the skills over HTTP: GET /skills, POST /chat (SSE), POST /runs, GET /articles/{id}, /healthz,
    and the review pages at /review (sign in there with the same token).

    Skills are scanned once at start-up (restart after adding one). Without models.default the chat
    answers extractively; the web fallback is off unless service.web_search_url is set.
    """
    import uvicorn

    from skillrag.service import workspace_app

    ws = open_workspace(workspace)
    cfg = ws.config.service
    bind = host or cfg.host
    if token is not None and not token.strip():
        raise UserError("--token must not be empty")
    if bind not in ("127.0.0.1", "localhost", "::1") and token is None:
        err_console.print(f"[yellow]warning:[/] serving on {bind} without --token: anyone who can reach it may use "
                          "it (only loopback Host names and service.allowed_hosts are answered)")
    app = workspace_app(ws, token=token)
    catalog = app.state.engine.catalog
    mode = f"model {ws.config.models.default}" if ws.config.models.default else "extractive (no model configured)"
    web = f"web search at {cfg.web_search_url}" if cfg.web_search_url else "web off"
    err_console.print(
        f"skillrag serve: {len(catalog.names())} skill(s) [{', '.join(catalog.names())}]; {mode}; {web}; "
        f"http://{bind}:{port or cfg.port}"
    )
    if check:
        for route in _flat_routes(app.routes):
            methods = ",".join(sorted(getattr(route, "methods", []) or []))
            if methods and not route.path.startswith(("/docs", "/redoc", "/openapi")):
                typer.echo(f"{methods:6} {route.path}")
        return
    _check_free(bind, port or cfg.port)
    uvicorn.run(app, host=bind, port=port or cfg.port, log_level=os.environ.get("SKILLRAG_LOG_LEVEL", "info"))


def _flat_routes(routes: list) -> list:
    """The routes of the app, those of included routers (the ``/review`` pages) in place of the router."""
    out = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        out += _flat_routes(inner.routes) if inner is not None else [route]
    return out


def _check_free(host: str, port: int) -> None:
    """Raise ``UserError`` when ``host:port`` cannot be bound (in use, or not an address of this machine),
    so the user gets one ``error:`` line instead of the server's own log and exit code."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"cannot serve on {host}:{port}: {exc.strerror}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            raise UserError(f"cannot serve on {host}:{port}: {exc.strerror}") from None


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
