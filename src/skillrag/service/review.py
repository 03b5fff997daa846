"""The review pages of ``skillrag serve``: server-rendered HTML (Jinja templates), usable without
JavaScript; one small script of the page's own (``review.js``) only makes selecting a passage easier.

Routes (not in the OpenAPI schema; the ``-`` segment cannot be a case id, so no case shadows them)::

    GET  /review                      the runs of the workspace: filter (?q, state, status, skill, harness,
                                      reviewer, warnings) and sort (?sort=COLUMN&order=asc|desc)
    GET  /review/{case_id}            one run: case, guidance versions, snippets marked in their articles
                                      (?article=ID opens the add-evidence form on that article)
    POST /review/{case_id}/approve    approve the latest guidance version      (form: comment?, confirm when
                                                                                it has warnings)
    POST /review/{case_id}/reject     reject it                                (form: reason)
    POST /review/{case_id}/edit       store edited guidance as a new version   (form: guidance, comment?)
    POST /review/{case_id}/evidence   add a passage as a snippet of a new version (form: article, start and
                                      end, or passage; why; comment?)
    GET  /review/-/login              sign-in form: reviewer name (+ the service token when one is set)
    POST /review/-/login              sign in; sets the session cookie, redirects to ``next``
    POST /review/-/logout             sign out
    GET  /review/-/static/NAME        review.css, review.js, favicon.svg

Sign-in and sessions: the browser cannot send the ``Authorization: Bearer`` header the API uses, so
the reviewer types the service token (``skillrag serve --token``) into a POST form once; it travels in
the request body only (never in a URL, so never in access logs or browser history) and is compared in
constant time; after 5 wrong tokens from one client address in 5 minutes its sign-ins are refused
(HTTP 429 with ``Retry-After``) until the oldest is 5 minutes old (``LoginThrottle``). The server then
keeps a session in memory (random 256-bit id, 8 hours by default, lost on restart) and sets it as an
``HttpOnly``, ``SameSite=Strict`` cookie limited to ``/review``
(``Secure`` over https). Without a token the form asks only for the reviewer's name, which every action
records.

CSRF: every POST must come from the same origin (``Origin``, else ``Referer``, must name the
request's own host; a POST with neither is refused) and every action form carries the session's random form
token (compared in constant time); a failure is HTTP 403 and changes nothing. Responses carry a
Content-Security-Policy that allows scripts, styles and images from this site only (no inline script
or style: article text never becomes markup, ``skillrag.review.markdown``), ``frame-ancestors
'none'``, ``no-store`` caching and ``Referrer-Policy: same-origin``.

Errors are HTML pages: unknown case 404, bad input 400 (the form is shown again with the reason), a
stale page 409 (``ReviewConflict``), missing sign-in on a POST 403, too many wrong tokens 429.
"""

from __future__ import annotations

import difflib
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jinja2
from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from skillrag.errors import CaseNotFound, ContractViolation, InvalidIdError, ReviewConflict, UserError
from skillrag.models import package_text
from skillrag.review import (
    STATES,
    ReviewStore,
    RunSummary,
    add_evidence,
    check_reviewer,
    list_runs,
    load_run,
    run_folder,
)
from skillrag.review.markdown import render_inline
from skillrag.workspace import Workspace

__all__ = ["COOKIE", "NO_REVIEWER", "SORTS", "STATUS_LABELS", "LoginThrottle", "Session", "SessionStore",
           "review_router"]

#: Name of the session cookie (path ``/review``).
COOKIE = "skillrag_review"
_SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_FILTERS = ("q", "state", "status", "skill", "harness", "reviewer", "warnings")
#: The list page's sort keys (``?sort=``), each a column; ``date`` (newest first) is the default.
SORTS: dict[str, Callable[[RunSummary], Any]] = {
    "date": lambda r: r.date,
    "case": lambda r: r.case_id,
    "reason": lambda r: r.contact_reason.casefold(),
    "guidance": lambda r: r.summary.casefold(),
    "snippets": lambda r: r.n_snippets,
    "warnings": lambda r: -1 if r.warnings is None else r.warnings,
    "review": lambda r: r.review,
    "reviewer": lambda r: (r.reviewer or "").casefold(),
    "status": lambda r: r.status,
}
#: The reviewer filter's value for runs nobody has acted on yet.
NO_REVIEWER = "-"
#: Static files of the pages: name -> media type.
_STATIC = {"review.css": "text/css", "review.js": "text/javascript", "favicon.svg": "image/svg+xml"}
#: How the case page names each snippet status (``skillrag.review.SNIPPET_STATUSES``).
STATUS_LABELS = {
    "verified": "verified at stored offsets",
    "changed": "article changed since the save",
    "gone": "article no longer in the corpus",
    "offsets": "stored offsets do not hold the text",
    "unaudited": "no stored offsets",
    "malformed": "not a snippet",
}


@dataclass(frozen=True)
class Session:
    """A signed-in reviewer: ``reviewer`` name, the random ``csrf`` form token, ``expires`` (the store's clock, s)."""

    reviewer: str
    csrf: str
    expires: float


class SessionStore:
    """Review sessions in memory: ``new`` returns ``(session id, Session)``; ``get`` returns None for an
    unknown or expired id. ``ttl_s``: session lifetime in seconds; at most ``max_sessions`` are kept
    (the oldest are dropped first); ``clock``: seconds, monotonic (tests inject their own). Thread-safe."""

    def __init__(self, ttl_s: float = 8 * 3600, max_sessions: int = 1000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def new(self, reviewer: str) -> tuple[str, Session]:
        sid = secrets.token_urlsafe(32)
        sess = Session(reviewer, secrets.token_urlsafe(32), self._clock() + self.ttl_s)
        with self._lock:
            now = self._clock()
            self._sessions = {k: v for k, v in self._sessions.items() if v.expires > now}
            while len(self._sessions) >= self.max_sessions:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[sid] = sess
        return sid, sess

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            sess = self._sessions.get(sid)
            if sess is not None and sess.expires <= self._clock():
                self._sessions.pop(sid, None)
                sess = None
        return sess

    def drop(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)


class LoginThrottle:
    """Failed token sign-ins per client address.

    After ``max_failures`` wrong tokens from one client within ``window_s`` seconds, that client's
    sign-ins are refused (HTTP 429, token not even compared) until its oldest failure is ``window_s``
    old; a right token clears its failures. ``clock``: seconds, monotonic (tests inject their own). At
    most ``max_clients`` addresses are tracked (the least recently failed dropped first). Thread-safe.
    """

    def __init__(self, max_failures: int = 5, window_s: float = 300.0, *,
                 clock: Callable[[], float] = time.monotonic, max_clients: int = 10_000) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._clock = clock
        self.max_clients = max_clients
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> list[float]:
        times = [t for t in self._failures.get(client, []) if now - t < self.window_s]
        if times:
            self._failures[client] = times
        else:
            self._failures.pop(client, None)
        return times

    def retry_after(self, client: str) -> float | None:
        """Seconds until ``client`` may try again, or None when it may sign in now."""
        with self._lock:
            now = self._clock()
            times = self._recent(client, now)
            if len(times) < self.max_failures:
                return None
            return max(0.0, times[-self.max_failures] + self.window_s - now)

    def failed(self, client: str) -> None:
        with self._lock:
            now = self._clock()
            times = self._recent(client, now)
            self._failures.pop(client, None)  # re-inserted last: the dict is ordered by latest failure
            self._failures[client] = [*times, now]
            while len(self._failures) > self.max_clients:
                self._failures.pop(next(iter(self._failures)))

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


def _templates() -> Jinja2Templates:
    folder = Path(str(resources.files("skillrag.service") / "templates" / "review"))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["short_date"] = lambda s: (s or "")[:16].replace("T", " ")
    env.filters["one_based"] = lambda indices: " ".join(str(i + 1) for i in indices)
    env.filters["md_inline"] = lambda text: Markup(render_inline(str(text)))  # safe: review.markdown escapes
    return Jinja2Templates(env=env)


def _same_origin(request: Request) -> bool:
    """True only when ``Origin`` (or, without it, ``Referer``) names the request's own ``Host``. A POST
    with neither header is refused too: every browser sends ``Origin`` on a form POST (and a same-origin
    ``Referer`` under this page's ``Referrer-Policy: same-origin``), so a missing pair means a client
    that is not this page; an opaque ``null`` origin is refused as well."""
    origin = request.headers.get("origin")
    claimed = origin if origin is not None else request.headers.get("referer")
    if not claimed or claimed == "null":
        return False
    return urlsplit(claimed).netloc == request.headers.get("host", request.url.netloc)


def _safe_next(value: str | None) -> str:
    """A local ``/review`` path to go to after sign-in; anything else becomes ``/review``."""
    if not value:
        return "/review"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or "\\" in value or not (parts.path == "/review" or
                                                               parts.path.startswith("/review/")):
        return "/review"
    if parts.path.startswith("//") or parts.path.startswith("/review/-/"):
        return "/review"
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _offset(value: str, what: str) -> int | None:
    """A form's offset field: None when empty, else a whole number >= 0 (``UserError``)."""
    value = value.strip()
    if not value:
        return None
    if not value.isdigit():
        raise UserError(f"{what}: must be a whole number of characters (0 or more), got {value[:20]!r}")
    return int(value)


def _trace_and_scores(ws: Workspace, view: Any) -> dict[str, Any]:
    """What the case page shows of the run's trace and its judges: ``trace_id`` (from ``record.json``),
    ``trace_link`` (``service.trace_url`` filled in, else None) and ``scores`` (``runs/<case>/scores.json``,
    ``evaluation.online``) with ``scores_current``: whether they judged the output shown."""
    from skillrag.evaluation.online import read_scores

    record = view.record if isinstance(view.record, dict) else {}
    trace_id = record.get("trace_id") if isinstance(record.get("trace_id"), str) else None
    template = ws.config.service.trace_url
    scores = read_scores(run_folder(ws, view.summary.case_id))
    current = scores is not None and scores.get("output_sha256") == view.summary.output_sha256
    return {"trace_id": trace_id, "trace_link": template.format(trace_id=trace_id) if template and trace_id else None,
            "scores": scores, "scores_current": current}


def review_router(ws: Workspace, *, token: str | None = None, sessions: SessionStore | None = None,
                  throttle: LoginThrottle | None = None) -> APIRouter:
    """The ``/review`` routes over workspace ``ws`` (module doc). ``token``: the service token a
    reviewer must type to sign in (None = name only, as the API is then open too); ``throttle``: the
    ``LoginThrottle`` of wrong tokens (default: 5 per client in 5 minutes)."""
    templates = _templates()
    sessions = sessions or SessionStore()
    throttle = throttle or LoginThrottle()
    store = ReviewStore(ws)
    static = {name: package_text("skillrag.service", "templates", "review", name) for name in _STATIC}
    router = APIRouter(prefix="/review", include_in_schema=False)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        sid = request.cookies.get(COOKIE)
        context.setdefault("session", sessions.get(sid))
        context.setdefault("error", None)
        context.setdefault("done", None)
        return templates.TemplateResponse(request, name, context, status_code=status, headers=_SECURITY_HEADERS)

    def problem(request: Request, status: int, title: str, message: str) -> Response:
        return page(request, "error.html.j2", status, title=title, message=message)

    def current(request: Request) -> Session | None:
        return sessions.get(request.cookies.get(COOKIE))

    def to_login(request: Request) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        login = str(request.url_for("review_login").path)
        return RedirectResponse(f"{login}?{urlencode({'next': target})}", status_code=303,
                                headers=_SECURITY_HEADERS)

    def guard_post(request: Request, csrf: str | None) -> tuple[Session | None, Response | None]:
        sess = current(request)
        if sess is None:
            return None, problem(request, 403, "Sign in first",
                                 "Your session has expired or you are not signed in; nothing was changed.")
        if not _same_origin(request) or not csrf or not secrets.compare_digest(csrf.encode(), sess.csrf.encode()):
            return None, problem(request, 403, "Request refused",
                                 "The form did not come from this review page (cross-site request check "
                                 "failed); nothing was changed. Reload the page and try again.")
        return sess, None

    @router.get("/-/static/{name}", name="review_static")
    def review_static(request: Request, name: str) -> Response:
        if name not in _STATIC:
            return problem(request, 404, "Not found", f"The review pages have no file {name!r}.")
        return Response(static[name], media_type=_STATIC[name], headers={"Cache-Control": "max-age=3600",
                                                                         "X-Content-Type-Options": "nosniff"})

    @router.get("/-/login", name="review_login")
    def login_form(request: Request, next: str | None = None) -> Response:
        return page(request, "login.html.j2", next=_safe_next(next), needs_token=token is not None,
                    reviewer="")

    @router.post("/-/login")
    def login(request: Request, reviewer: str = Form(""), token_field: str = Form("", alias="token"),
              next: str = Form("/review")) -> Response:
        dest = _safe_next(next)
        if not _same_origin(request):
            return problem(request, 403, "Request refused", "The sign-in form did not come from this site.")
        try:
            name = check_reviewer(reviewer)
        except UserError as exc:
            return page(request, "login.html.j2", 400, next=dest, needs_token=token is not None,
                        reviewer=reviewer[:100], error=str(exc))
        if token is not None:
            client = request.client.host if request.client else "unknown"
            wait = throttle.retry_after(client)
            if wait is not None:
                resp = page(request, "login.html.j2", 429, next=dest, needs_token=True, reviewer=name,
                            error=f"too many wrong tokens from this address: try again in {math.ceil(wait)} s")
                resp.headers["Retry-After"] = str(math.ceil(wait))
                return resp
            if not secrets.compare_digest(token_field.encode(), token.encode()):
                throttle.failed(client)
                return page(request, "login.html.j2", 401, next=dest, needs_token=True, reviewer=name,
                            error="wrong token: use the one `skillrag serve --token` was started with")
            throttle.succeeded(client)
        sid, _ = sessions.new(name)
        resp = RedirectResponse(dest, status_code=303, headers=_SECURITY_HEADERS)
        resp.set_cookie(COOKIE, sid, max_age=int(sessions.ttl_s), path="/review", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
        return resp

    @router.post("/-/logout", name="review_logout")
    def logout(request: Request, csrf: str = Form("")) -> Response:
        _, refused = guard_post(request, csrf)
        if refused is not None:
            return refused
        sessions.drop(request.cookies.get(COOKIE))
        resp = RedirectResponse(str(request.url_for("review_login").path), status_code=303,
                                headers=_SECURITY_HEADERS)
        resp.delete_cookie(COOKIE, path="/review", httponly=True, samesite="strict")
        return resp

    @router.get("", name="review_list")
    def review_list(request: Request) -> Response:
        if current(request) is None:
            return to_login(request)
        runs = list_runs(ws, store)
        chosen = {k: (request.query_params.get(k) or "").strip() for k in _FILTERS}
        sort = request.query_params.get("sort") or "date"
        sort = sort if sort in SORTS else "date"
        order = request.query_params.get("order") or ("desc" if sort in ("date", "warnings", "snippets") else "asc")
        order = order if order in ("asc", "desc") else "asc"
        options = {
            "state": [*STATES, "no output"],
            "status": sorted({r.status for r in runs}),
            "skill": sorted({r.skill for r in runs if r.skill}),
            "harness": sorted({r.harness for r in runs if r.harness}),
            "reviewer": sorted({r.reviewer for r in runs if r.reviewer}, key=str.casefold),
        }
        q = chosen["q"].casefold()
        shown = [r for r in runs
                 if (not q or any(q in x.casefold() for x in (r.case_id, r.contact_reason, r.summary)))
                 and (not chosen["state"] or r.review == chosen["state"])
                 and (not chosen["status"] or r.status == chosen["status"])
                 and (not chosen["skill"] or r.skill == chosen["skill"])
                 and (not chosen["harness"] or r.harness == chosen["harness"])
                 and (not chosen["reviewer"] or (r.reviewer or NO_REVIEWER) == chosen["reviewer"])
                 and (not chosen["warnings"] or (chosen["warnings"] == "with" and bool(r.warnings))
                      or (chosen["warnings"] == "none" and r.warnings == 0))]
        shown.sort(key=lambda r: r.case_id)
        shown.sort(key=SORTS[sort], reverse=order == "desc")
        base = {k: v for k, v in chosen.items() if v}

        def sort_link(column: str) -> str:
            flip = "asc" if column == sort and order == "desc" else "desc"
            to = flip if column == sort else ("desc" if column in ("date", "warnings", "snippets") else "asc")
            return "?" + urlencode({**base, "sort": column, "order": to})

        return page(request, "list.html.j2", runs=shown, total=len(runs), chosen=chosen, options=options,
                    filtered=any(chosen.values()), sort=sort, order=order, sort_link=sort_link,
                    no_reviewer=NO_REVIEWER)

    def case_page(request: Request, case_id: str, status: int = 200, **extra: Any) -> Response:
        try:
            view = load_run(ws, case_id, store)
        except InvalidIdError as exc:
            return problem(request, 400, "Not a case id", str(exc))
        except CaseNotFound:
            return problem(request, 404, "No such run",
                           f"The workspace has no run for case {case_id!r}. Runs are listed on the review page.")
        diff: list[str] = []
        if len(view.versions) > 1:
            diff = list(difflib.unified_diff(view.versions[0].version.guidance.splitlines(),
                                             view.versions[-1].version.guidance.splitlines(),
                                             "version 0 (agent)", f"version {view.versions[-1].version.version}",
                                             lineterm=""))
        extra.setdefault("form", {"action": "", "text": "", "comment": ""})
        extra.setdefault("done", request.query_params.get("done"))
        evidence = {"article": request.query_params.get("article") or "", "start": "", "end": "",
                    "passage": "", "why": "", "comment": ""}
        extra.setdefault("evidence", evidence)
        extra.setdefault("evidence_open", bool(evidence["article"]))
        extra.setdefault("reasons", [])
        extra.update(_trace_and_scores(ws, view))
        return page(request, "case.html.j2", status, view=view, s=view.summary, diff=diff,
                    latest=view.latest, latest_n=view.latest.version.version if view.latest else 0,
                    art_index={a.id: i for i, a in enumerate(view.articles, 1)},
                    status_labels=STATUS_LABELS, **extra)

    @router.get("/{case_id}", name="review_case")
    def review_case(request: Request, case_id: str) -> Response:
        if current(request) is None:
            return to_login(request)
        return case_page(request, case_id)

    def act(request: Request, case_id: str, action: str, csrf: str, output_sha256: str, version: str,
            text: str, comment: str, *, confirm: str = "", evidence: dict[str, str] | None = None) -> Response:
        sess, refused = guard_post(request, csrf)
        if refused is not None or sess is None:
            return refused  # type: ignore[return-value]
        form = {"action": action, "text": text, "comment": comment}
        try:
            folder = run_folder(ws, case_id)
        except InvalidIdError as exc:
            return problem(request, 400, "Not a case id", str(exc))
        except CaseNotFound:
            return problem(request, 404, "No such run", f"The workspace has no run for case {case_id!r}.")
        from skillrag.evaluation import online  # (the form's own `output_sha256` is the hash it was given)

        sha = online.output_sha256(folder)
        if sha is None:
            return problem(request, 409, "Nothing to review",
                           f"Case {case_id!r} has no saved output (the run did not end accepted).")
        if output_sha256 != sha:
            return problem(request, 409, "The run changed",
                           f"Case {case_id!r} was run again after you opened the page, so its output is not the "
                           "one you reviewed; nothing was recorded. Reload the case and review the new output.")
        page_extra: dict[str, Any] = {"form": form}
        if evidence is not None:
            page_extra |= {"evidence": evidence, "evidence_open": True}
        try:
            if not version.isdigit():
                raise UserError("version: must be a whole number")
            v = int(version)
            if action == "reject":
                store.reject(case_id, sha, sess.reviewer, text, version=v)
            elif action == "evidence" and evidence is not None:
                add_evidence(ws, case_id, sess.reviewer, output_sha256=sha, base_version=v,
                             article_id=evidence["article"].strip(), why=evidence["why"],
                             start=_offset(evidence["start"], "start"), end=_offset(evidence["end"], "end"),
                             text=evidence["passage"], comment=evidence["comment"], store=store)
            else:
                view = load_run(ws, case_id, store)
                latest = view.latest
                if latest is None or not latest.accepted:
                    done_to = {"approve": "approved", "edit": "edited"}[action]
                    raise UserError(f"the output fails the evidence contract, so it cannot be {done_to}; "
                                    "reject it or run the case again")
                if action == "approve":
                    if latest.warnings and confirm != "yes" and v == latest.version.version:
                        n = len(latest.warnings)
                        raise UserError(f"version {v} has {n} warning{'' if n == 1 else 's'} (listed above the "
                                        "Approve button): tick that you have checked them to approve it")
                    store.approve(case_id, sha, sess.reviewer, version=v, comment=comment)
                else:
                    if text.replace("\r\n", "\n").strip() == latest.version.guidance.strip():
                        raise UserError("guidance: unchanged; edit the text before saving a new version")
                    store.edit(case_id, sha, sess.reviewer, text, base_version=v, comment=comment)
        except ReviewConflict as exc:
            return problem(request, 409, "Someone else changed this case", str(exc))
        except ContractViolation as exc:
            n = len(exc.reasons)
            return case_page(request, case_id, 400, reasons=exc.reasons,
                             error=f"The evidence contract refused this passage ({n} reason{'' if n == 1 else 's'}); "
                                   "nothing was recorded.", **page_extra)
        except UserError as exc:
            return case_page(request, case_id, 400, error=str(exc), **page_extra)
        target = str(request.url_for("review_case", case_id=case_id).path)
        return RedirectResponse(f"{target}?done={action}#review", status_code=303, headers=_SECURITY_HEADERS)

    @router.post("/{case_id}/approve", name="review_approve")
    def approve(request: Request, case_id: str, csrf: str = Form(""), output_sha256: str = Form(""),
                version: str = Form(""), comment: str = Form(""), confirm: str = Form("")) -> Response:
        return act(request, case_id, "approve", csrf, output_sha256, version, "", comment, confirm=confirm)

    @router.post("/{case_id}/evidence", name="review_evidence")
    def evidence(request: Request, case_id: str, csrf: str = Form(""), output_sha256: str = Form(""),
                 version: str = Form(""), article: str = Form(""), start: str = Form(""), end: str = Form(""),
                 passage: str = Form(""), why: str = Form(""), comment: str = Form("")) -> Response:
        given = {"article": article, "start": start, "end": end, "passage": passage, "why": why, "comment": comment}
        return act(request, case_id, "evidence", csrf, output_sha256, version, "", comment, evidence=given)

    @router.post("/{case_id}/reject", name="review_reject")
    def reject(request: Request, case_id: str, csrf: str = Form(""), output_sha256: str = Form(""),
               version: str = Form(""), reason: str = Form("")) -> Response:
        return act(request, case_id, "reject", csrf, output_sha256, version, reason, "")

    @router.post("/{case_id}/edit", name="review_edit")
    def edit(request: Request, case_id: str, csrf: str = Form(""), output_sha256: str = Form(""),
             version: str = Form(""), guidance: str = Form(""), comment: str = Form("")) -> Response:
        return act(request, case_id, "edit", csrf, output_sha256, version, guidance, comment)

    return router
