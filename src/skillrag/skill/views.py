"""What the agent sees: one JSON shape per tool result, the same on every surface.

The command line (``skillrag tool ...`` and so the exported scripts) prints these objects, the MCP
server returns them, the LLM harness hands them to the model. Every result carries ``budget``:
``{counted: "after this call", queries_left, queries_used, fetches_left, fetches_used, saves_left,
saves_used}`` of the case's session (``skillrag.skill.budget``), counted after the call that returns it
(the call itself included); the text header of ``get_article`` says the same in words.

* ``load_case``: the case fields (``Case``; never ground truth), ``as_of``, ``budget``.
* ``retrieve``: ``{case_id, query, filters, detail, hits[...], pages[...], budget}``; ``pages`` only ever
  has entries over the ``wiki`` backend. Compact by default: each hit as ``hit_brief`` (``{article_id,
  title, relevance, section?, preview, category?, customer_type?, tools?}``, a key with ``?`` left out when
  empty) and each page as ``page_brief`` (``{page_id, kind, title, relevance, category, customer_type,
  articles[{id, title?}], shown, of, cut_by}`` with at most the skill's ``page_articles`` articles,
  best-matching the query first; ``of`` is how many the page lists and ``cut_by`` says what left the
  others out; null when nothing did); ``query`` is echoed cut at 200 characters (its length noted).
  ``detail="pages"`` (``--detail pages``) gives each hit whole (``hit_full``: ranks, the whole preview,
  ``page_ids``) and each page whole (``page_detail``: its intent and every article passing the filters,
  with summaries) and the query whole. ``detail="tools"`` (``--detail tools``), a tool search: ``{case_id,
  query, filters, detail, tools[{tool, article_id, title}], articles_read, budget}`` (``tool_list``).
  ``retrieve --page``: ``{case_id, page{page_id, kind, title, intent, solves, does_not_solve,
  procedure[{text, links[{type, article_id}]}], articles[...]}, budget}``.
* ``get_article``: ``{id, title, parent, heading_path, part, offset, sections[{index, heading, path,
  level, start, end}], body, charged, budget}``; ``body`` is the text read (whole body, one section or a
  summary) and starts at ``offset`` of the article's raw body, where ``sections`` offsets point;
  ``charged``: whether the read spent a fetch (false for a re-read: an article costs one fetch per case,
  however often and in whatever parts it is read). The text form (``article_text``) opens with a header
  of the same fields (``cost: …``), then the body verbatim.
* ``save_output``: ``{accepted, checked_only, path, case_id, n_snippets, evidence[{index,
  source_article, start, end, content_hash, occurrences, matched}], warnings[{kind, subject, message}],
  budget}`` (``occurrences``: how often the passage occurs in its article; ``matched``: which copy the
  offsets point at, the first); ``replaced``: ``{path, saved_at, case_id}`` of the output this save
  overwrote, else null.
* ``save_output --status``: ``{case_id, last_save, save_attempts, budget}``; ``last_save`` is the last
  attempt's result as it was reported (without its budget) plus ``at``, or, for a rejected attempt,
  ``{accepted: false, case_id, reasons, at}``; null when the case has made none.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillrag.errors import ContractViolation
from skillrag.skill.budget import BudgetState
from skillrag.skill.cases import Case

if TYPE_CHECKING:  # the result types live with the tools, which import this module
    from skillrag.search import PageHit
    from skillrag.skill.tools import ArticleView, PageRead, RetrieveResult, SavedOutput, SaveStatus

__all__ = [
    "BODY_RULE",
    "BRIEF_PREVIEW_CHARS",
    "DETAILS",
    "SUMMARY_RULE",
    "TOOL_LIST_MAX",
    "TOOL_SEARCH_ARTICLES",
    "article_json",
    "article_text",
    "budget_json",
    "case_json",
    "hit_brief",
    "hit_full",
    "page_brief",
    "page_detail",
    "page_json",
    "rejection_json",
    "retrieve_json",
    "retrieve_text",
    "save_json",
    "status_json",
    "tool_list",
]

#: What ``retrieve``'s ``detail`` may ask for beyond the compact result: ``pages`` = every page whole.
DETAILS = ("pages", "tools")

#: The most tools a tool search (``detail="tools"``) lists, and how many best-matching articles (at least;
#: ``k`` when larger) it reads the tool names of.
TOOL_LIST_MAX = 25
TOOL_SEARCH_ARTICLES = 40
#: The most other articles a tool search names beside a tool's best-ranked one (``also_in``).
TOOL_ALSO_IN = 3

#: The line that separates ``get_article``'s text header from the verbatim body.
BODY_RULE = "===== body: quote word for word from below this line ====="
#: The same line for a summary read (``--summary``), which is not the body and may not be quoted.
SUMMARY_RULE = "===== summary: not the body, never quote from below this line ====="


def budget_json(state: BudgetState | None) -> dict[str, int | str] | None:
    """``BudgetState.to_dict``: what is used and left after this call (None when the call had no case
    session)."""
    return state.to_dict() if state is not None else None


def case_json(case: Case, budget: BudgetState | None) -> dict[str, Any]:
    """``load_case``'s result: the agent-facing case, its ``as_of`` date and the budget."""
    return {**case.model_dump(mode="json"), "budget": budget_json(budget)}


def page_detail(page: PageHit) -> dict[str, Any]:
    """A ranked page whole (``PageHit.to_dict``): intent, every article passing the filters with its
    summary, ``shown`` / ``of`` and ``cut_by`` (the filter that cut the list, else null)."""
    return page.to_dict()


#: The longest preview of a hit in the compact result, in characters (cut at a word, ``…`` added); the
#: whole preview (``skillrag.search`` ``PREVIEW_CHARS``) comes with ``detail="pages"``. Chosen from the
#: result-size benchmark (benchmarks/results/result_size.md).
BRIEF_PREVIEW_CHARS = 100


def _cut_words(text: str, limit: int) -> str:
    """``text`` cut at the last word boundary before ``limit`` characters, ``…`` added when cut."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + "…"


def hit_brief(hit: Any, tools: tuple[str, ...] = ()) -> dict[str, Any]:
    """A hit in the compact result: ``article_id, title, relevance``, ``section`` (left out when the
    passage sits under no heading), ``preview`` (cut at ``BRIEF_PREVIEW_CHARS``), ``category`` and
    ``customer_type`` (each left out when unknown: a general article) and, when the article names any,
    ``tools`` (the tool names its body writes). Ranks and ``page_ids`` come with ``detail="pages"``
    (``hit_full``)."""
    out: dict[str, Any] = {"article_id": hit.article_id, "title": getattr(hit, "title", ""),
                           "relevance": float(getattr(hit, "relevance", 1.0))}
    if getattr(hit, "section", ""):
        out["section"] = hit.section
    out["preview"] = _cut_words(str(getattr(hit, "preview", "")), BRIEF_PREVIEW_CHARS)
    for key in ("category", "customer_type"):
        if getattr(hit, key, ""):
            out[key] = getattr(hit, key)
    if tools:
        out["tools"] = list(tools)
    return out


def hit_full(hit: Any, tools: tuple[str, ...] = ()) -> dict[str, Any]:
    """A hit with everything (``detail="pages"``): ``hit_to_dict`` (ranks, whole preview, ``page_ids``)
    and, when the article names any, ``tools``."""
    from skillrag.skill.tools import hit_to_dict

    out = hit_to_dict(hit)
    if tools:
        out["tools"] = list(tools)
    return out


def page_brief(page: PageHit, limit: int, hit_ids: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A ranked page in the compact result: ``page_id, kind, title, relevance, category, customer_type``, its first
    ``limit`` articles (``PageHit.articles`` come best-matching first) as ``{id, title}`` (``title`` left
    out for an article among ``hit_ids``, the result's hits, which show it), ``shown``, ``of`` (the
    articles the page lists) and ``cut_by``: what left the rest out (a filter, with how many passed it:
    ``"filter id_prefixes=doc_x_ (2 of 8 pass)"``; the cap: ``"page_articles=5"``; both joined by ``"; "``;
    null when the list is the page's whole). Every article of a page: ``retrieve --page PAGE_ID`` or
    ``detail="pages"``."""
    arts = list(page.articles)
    listed = max(int(getattr(page, "listed", 0) or 0), len(arts))
    kept = arts[:max(0, limit)]
    cut: list[str] = []
    if getattr(page, "cut_by", ""):
        cut.append(f"filter {page.cut_by} ({len(arts)} of {listed} pass)")
    if len(kept) < len(arts):
        cut.append(f"page_articles={limit}")
    return {"page_id": page.page_id, "kind": page.kind, "title": page.title, "relevance": page.relevance,
            "category": getattr(page, "category", "") or None,
            "customer_type": getattr(page, "customer_type", "") or None,
            "articles": [{"id": a.id} if a.id in hit_ids else {"id": a.id, "title": a.title} for a in kept],
            "shown": len(kept), "of": listed, "cut_by": "; ".join(cut) or None}


def tool_list(result: RetrieveResult, limit: int = TOOL_LIST_MAX) -> list[dict[str, Any]]:
    """A tool search's tools (``detail="tools"``): ``[{tool, article_id, title, also_in?}]``, each tool once
    with the best-ranked article that gives it (``RetrieveResult.tools``: the one tool-name rule) and, in
    ``also_in``, the ids of up to ``TOOL_ALSO_IN`` other searched articles that name it too (left out when
    none: the procedure that uses a tool is not always the best-ranked article naming it); best article
    first and each article's tools in the order it mentions them, at most ``limit``."""
    found: dict[str, dict[str, Any]] = {}
    for h in result:
        for name in result.tools.get(h.article_id, ()):
            if name not in found:
                if len(found) < limit:
                    found[name] = {"tool": name, "article_id": h.article_id, "title": h.title}
            elif len(found[name].setdefault("also_in", [])) < TOOL_ALSO_IN:
                found[name]["also_in"].append(h.article_id)
    return list(found.values())


def retrieve_json(result: RetrieveResult) -> dict[str, Any]:
    """``retrieve``'s result (a ``RetrieveResult``). Compact by default: hits as ``hit_brief``, pages as
    ``page_brief`` (at most its ``page_articles`` articles each) and the query echoed as the tool log
    keeps it (cut at 200 characters, its length noted: a whole case sent as a query is not printed back).
    ``detail="pages"``: hits as ``hit_full``, pages whole (``page_detail``) and the query whole."""
    from skillrag.skill.tools import summarize_args

    budget = getattr(result, "budget", None)
    filters = getattr(result, "filters", None)
    detail = getattr(result, "detail", None)
    limit = getattr(result, "page_articles", None)
    pages = getattr(result, "pages", [])
    query = getattr(result, "query", "")
    tools = getattr(result, "tools", {}) or {}
    whole = detail == "pages" or limit is None
    hit_ids = frozenset(h.article_id for h in result)
    if detail == "tools":
        found = tool_list(result)
        return {"case_id": budget.case_id if budget is not None else None, "query": summarize_args(query),
                "filters": filters.describe() if filters is not None else {}, "detail": detail, "tools": found,
                "articles_read": len(result), "budget": budget_json(budget)}
    return {
        "case_id": budget.case_id if budget is not None else None,
        "query": query if whole else summarize_args(query),
        "filters": filters.describe() if filters is not None else {},
        "detail": detail,
        "hits": [(hit_full if whole else hit_brief)(h, tuple(tools.get(h.article_id, ()))) for h in result],
        "pages": [page_detail(p) if whole or limit is None else page_brief(p, limit, hit_ids) for p in pages],
        "budget": budget_json(budget),
    }


def retrieve_text(data: dict[str, Any]) -> str:
    """``retrieve``'s JSON (``retrieve_json``) as the command line prints it: the same object, one field
    per line and each hit and each page on a line of its own (no indentation or spaces inside them), so a shell
    reads one result per line and the text stays small (docs/architecture.md: the result-size benchmark)."""
    lines = ["{"]
    items = list(data.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            lines += [f"    {json.dumps(v, ensure_ascii=False, separators=(',', ':'))}{',' if m < len(value) - 1 else ''}"
                      for m, v in enumerate(value)]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "\n".join(lines + ["}"]) + "\n"


def page_json(read: PageRead) -> dict[str, Any]:
    """``retrieve --page``'s result (a ``PageRead``)."""
    return {"case_id": read.budget.case_id if read.budget is not None else None, "page": read.page.to_dict(),
            "budget": budget_json(read.budget)}


def article_json(view: ArticleView) -> dict[str, Any]:
    """``get_article --json``'s result (an ``ArticleView``)."""
    return {
        "id": view.id,
        "title": view.title,
        "parent": view.parent,
        "heading_path": list(view.heading_path),
        "part": view.part,
        "offset": view.offset,
        "content_hash": view.content_hash,
        "sections": [s.to_dict() for s in view.sections],
        "body": view.text,
        "charged": getattr(view, "charged", None),
        "budget": budget_json(view.budget),
    }


def article_text(view: ArticleView) -> str:
    """``get_article``'s text: a header (id, title, parent, heading path, part, sections, budget),
    ``BODY_RULE`` (``SUMMARY_RULE`` for a summary, which may not be quoted), then the text read exactly as
    stored."""
    lines = [f"id: {view.id}", f"title: {view.title}"]
    if view.parent:
        lines.append(f"parent: {view.parent}")
    if view.heading_path:
        lines.append("heading path: " + " > ".join(view.heading_path))
    if view.part == "body":
        lines.append("part: whole article")
    elif view.part == "summary":
        lines.append("part: summary (not the body: quote only from a body or section read)")
    else:
        n = view.part.split(":", 1)[1]
        sec = next((s for s in view.sections if str(s.index) == n), None)
        label = " > ".join(sec.path) if sec is not None else n
        lines.append(f"part: section {n} of {len(view.sections)} ({label}), at offset {view.offset}")
    if view.sections:
        lines.append("sections (read one with --section NUMBER):")
        lines += [f"{'  ' * s.level}{s.index}. {s.heading}" for s in view.sections]
    else:
        lines.append("sections: none")
    charged = getattr(view, "charged", None)
    if charged is not None:
        lines.append("cost: 1 fetch (the first read of this article in this case; reading it again is free)"
                     if charged else "cost: free (this article was already read in this case)")
    if view.budget is not None:
        lines.append(f"budget: {view.budget.line()}")
    text = view.text if view.text.endswith("\n") else view.text + "\n"
    rule = SUMMARY_RULE if view.part == "summary" else BODY_RULE  # a new user: a summary said "quote below"
    return "\n".join(lines) + "\n" + rule + "\n" + text


def save_json(saved: SavedOutput) -> dict[str, Any]:
    """``save_output``'s result (a ``SavedOutput``)."""
    return {
        "accepted": True,
        "checked_only": saved.checked_only,
        "path": str(saved.path) if saved.path is not None else None,
        "case_id": saved.case_id,
        "n_snippets": len(saved.evidence),
        "evidence": [e.to_dict() for e in saved.evidence],
        "warnings": [g.to_dict() for g in saved.warnings],
        "replaced": getattr(saved, "replaced", None),
        "budget": budget_json(saved.budget),
    }


def rejection_json(exc: ContractViolation, case_id: Any, *, check: bool) -> dict[str, Any]:
    """``save_output``'s result when the evidence contract rejects the output: ``{accepted: false,
    checked_only, case_id, reasons}`` (every reason, as the exit-1 line on stderr summarises them)."""
    return {"accepted": False, "checked_only": check, "case_id": case_id if isinstance(case_id, str) else None,
            "reasons": list(exc.reasons)}


def status_json(status: SaveStatus) -> dict[str, Any]:
    """``save_output --status``'s result (a ``SaveStatus``): the last save attempt as it was reported,
    the number of attempts, and the budget now."""
    return {"case_id": status.case_id, "last_save": status.last, "save_attempts": status.attempts,
            "budget": budget_json(status.budget)}
