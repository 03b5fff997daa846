"""What the agent sees: one JSON shape per tool result, the same on every surface.

The command line (``skillrag tool ...`` and so the exported scripts) prints these objects, the MCP
server returns them, the LLM harness hands them to the model. Every result carries ``budget``:
``{counted: "after this call", queries_left, queries_used, fetches_left, fetches_used, saves_left,
saves_used}`` of the case's session (``skillrag.skill.budget``), counted after the call that returns it
(the call itself included); the text header of ``get_article`` says the same in words.

* ``load_case``: the case fields (``Case``; never ground truth), ``as_of``, ``budget``.
* ``retrieve``: ``{case_id, query, filters, hits[{article_id, title, relevance, bm25_rank,
  dense_rank, section, preview, page_ids}], pages[{page_id, kind, title, intent, relevance,
  articles[{id, title, summary?}]}], budget}``; ``pages`` only ever has entries over the ``wiki``
  backend. ``retrieve --page``: ``{case_id, page{page_id, kind, title, intent, solves,
  does_not_solve, procedure[{text, links[{type, article_id}]}], articles[...]}, budget}``.
* ``get_article``: ``{id, title, parent, heading_path, part, offset, sections[{index, heading, path,
  level, start, end}], body, budget}``; ``body`` is the text read (whole body, one section or a
  summary) and starts at ``offset`` of the article's raw body, where ``sections`` offsets point.
  The text form (``article_text``) opens with a header of the same fields, then the body verbatim.
* ``save_output``: ``{accepted, checked_only, path, case_id, n_snippets, evidence[{index,
  source_article, start, end, content_hash}], warnings[{kind, subject, message}], budget}``.
"""

from __future__ import annotations

from typing import Any

from skillrag.skill.budget import BudgetState
from skillrag.skill.cases import Case

__all__ = ["BODY_RULE", "article_json", "article_text", "budget_json", "case_json", "page_json",
           "retrieve_json", "save_json"]

#: The line that separates ``get_article``'s text header from the verbatim body.
BODY_RULE = "===== body: quote word for word from below this line ====="


def budget_json(state: BudgetState | None) -> dict[str, int | str] | None:
    """``BudgetState.to_dict``: what is used and left after this call (None when the call had no case
    session)."""
    return state.to_dict() if state is not None else None


def case_json(case: Case, budget: BudgetState | None) -> dict[str, Any]:
    """``load_case``'s result: the agent-facing case, its ``as_of`` date and the budget."""
    return {**case.model_dump(mode="json"), "budget": budget_json(budget)}


def retrieve_json(result: Any) -> dict[str, Any]:
    """``retrieve``'s result (a ``RetrieveResult``)."""
    from skillrag.skill.tools import hit_to_dict

    budget = getattr(result, "budget", None)
    filters = getattr(result, "filters", None)
    return {
        "case_id": budget.case_id if budget is not None else None,
        "query": getattr(result, "query", ""),
        "filters": filters.describe() if filters is not None else {},
        "hits": [hit_to_dict(h) for h in result],
        "pages": [p.to_dict() for p in getattr(result, "pages", [])],
        "budget": budget_json(budget),
    }


def page_json(read: Any) -> dict[str, Any]:
    """``retrieve --page``'s result (a ``PageRead``)."""
    return {"case_id": read.budget.case_id if read.budget is not None else None, "page": read.page.to_dict(),
            "budget": budget_json(read.budget)}


def article_json(view: Any) -> dict[str, Any]:
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


def article_text(view: Any) -> str:
    """``get_article``'s text: a header (id, title, parent, heading path, part, sections, budget),
    ``BODY_RULE``, then the text read exactly as stored."""
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
    return "\n".join(lines) + "\n" + BODY_RULE + "\n" + text


def save_json(saved: Any) -> dict[str, Any]:
    """``save_output``'s result (a ``SavedOutput``)."""
    return {
        "accepted": True,
        "checked_only": saved.checked_only,
        "path": str(saved.path) if saved.path is not None else None,
        "case_id": saved.case_id,
        "n_snippets": len(saved.evidence),
        "evidence": [e.to_dict() for e in saved.evidence],
        "warnings": [g.to_dict() for g in saved.warnings],
        "budget": budget_json(saved.budget),
    }
