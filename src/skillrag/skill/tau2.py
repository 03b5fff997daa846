"""Import tau2-bench knowledge tasks (the banking domain) as cases.

What becomes what (a task is a user-simulator scenario, not a real support ticket):

* ``case_id`` ← the task ``id``.
* ``contact_reason`` ← the customer's want: the text after ``**Your goal:**``, else after
  ``**Your situation:**``, else the scripted opening line, else
  "The customer wants to ..." from the persona line, else the first paragraph after the
  role-play preamble; its first two sentences, at most 400 characters.
* ``case_notes`` ← the scenario instructions, one note per paragraph (markdown kept).
* ``case_messages`` ← one customer message: the scripted opening line when the scenario has one
  (``**Opening:** "..."``, ``**Start naturally:** "..."``), else the contact reason.
* ``contact_reason_path`` ← ``[]`` (tau2 has no taxonomy; anything derived from the expected
  actions would leak the answer).
* ground truth ← ``required_documents``; ``expected_actions`` (name, arguments, requestor);
  ``expected_tools`` = the tool each action reaches (``arguments.agent_tool_name`` /
  ``arguments.discoverable_tool_name`` for the discoverable-tool wrappers, else the action
  name), de-duplicated in order, ``transfer_to_human_agents`` included; ``reference_guidance``
  = the task's evaluator notes plus a list of the expected actions and information to communicate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillrag.errors import MalformedSourceError
from skillrag.skill.cases import CaseRecord, Message, _GroundTruthBody

__all__ = ["import_tau2", "task_to_record"]

_GOAL = re.compile(r"\*\*Your goal:?\*\*:?\s*(.+?)(?:\n\s*\n|\n\*\*|\n#|$)", re.DOTALL)
_SITUATION = re.compile(r"\*\*Your situation:?\*\*:?\s*(.+?)(?:\n\s*\n|\n\*\*|\n#|$)", re.DOTALL)
_OPENING = re.compile(r"\*\*(?:Opening[^*]*|Start naturally[^*]*)\*\*:?\s*\"(.+?)\"", re.DOTALL)
_WHO_WANTS = re.compile(r"\bwho (wants|needs|would like|is looking) (to [^.\n]+)")
_PREAMBLE = ("playing the role", "your character", "you are playing", "verification info", "information you know")
_WRAPPERS = {
    "unlock_discoverable_agent_tool": "agent_tool_name",
    "call_discoverable_agent_tool": "agent_tool_name",
    "give_discoverable_user_tool": "discoverable_tool_name",
    "call_discoverable_user_tool": "discoverable_tool_name",
}
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"*])")


def _first_sentences(text: str, n: int = 2, limit: int = 400) -> str:
    flat = re.sub(r"\s+", " ", text.replace("**", "")).strip()
    out = " ".join(_SENT.split(flat)[:n]).strip()
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0] + " ..."
    return out


def _contact_reason(instr: str) -> str:
    for pat in (_GOAL, _SITUATION):
        m = pat.search(instr)
        if m and m.group(1).strip():
            return _first_sentences(m.group(1))
    m = _OPENING.search(instr)
    if m:
        return _first_sentences(m.group(1))
    m = _WHO_WANTS.search(instr)
    if m:
        return f"The customer {m.group(1)} {m.group(2).strip()}."
    paras = [p.strip() for p in re.split(r"\n\s*\n", instr) if p.strip()]
    for p in paras:
        if not any(k in p.lower() for k in _PREAMBLE):
            return _first_sentences(p)
    return _first_sentences(paras[0]) if paras else ""


def _expected_tools(actions: list[dict[str, Any]]) -> list[str]:
    tools: list[str] = []
    for a in actions:
        name = a.get("name", "")
        key = _WRAPPERS.get(name)
        tool = (a.get("arguments") or {}).get(key) if key else name
        if tool and tool not in tools:
            tools.append(tool)
    return tools


def _reference(task: dict[str, Any], actions: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    notes = (task.get("description") or {}).get("notes")
    if notes:
        parts.append(str(notes).strip())
    if actions:
        lines = ["Expected actions:"]
        for a in actions:
            args = ", ".join(f"{k}={v!r}" for k, v in (a.get("arguments") or {}).items())
            who = a.get("requestor") or "assistant"
            lines.append(f"- {a.get('name')}({args}) [by {who}]")
        parts.append("\n".join(lines))
    info = (task.get("evaluation_criteria") or {}).get("communicate_info") or []
    if info:
        parts.append("Information to communicate:\n" + "\n".join(f"- {x}" for x in info))
    return "\n\n".join(parts)


def task_to_record(task: dict[str, Any]) -> CaseRecord:
    """One tau2 task → one case record (case + ground truth), as described in the module doc."""
    instr = ((task.get("user_scenario") or {}).get("instructions")) or ""
    if isinstance(instr, dict):  # some tau2 domains structure the instructions
        instr = "\n\n".join(f"{k}: {v}" for k, v in instr.items() if v)
    reason = _contact_reason(instr)
    m = _OPENING.search(instr)
    opening = re.sub(r"\s+", " ", m.group(1)).strip() if m else reason
    actions = list((task.get("evaluation_criteria") or {}).get("actions") or [])
    return CaseRecord(
        case_id=str(task["id"]),
        contact_reason=reason,
        contact_reason_path=[],
        case_notes=[p.strip() for p in re.split(r"\n\s*\n", instr) if p.strip()],
        case_messages=[Message(role="customer", content=opening)],
        ground_truth=_GroundTruthBody(
            reference_guidance=_reference(task, actions),
            required_documents=list(task.get("required_documents") or []),
            expected_tools=_expected_tools(actions),
            expected_actions=[
                {"name": a.get("name"), "arguments": a.get("arguments") or {},
                 "requestor": a.get("requestor") or "assistant"}
                for a in actions
            ],
        ),
    )


def import_tau2(path: str | Path) -> list[CaseRecord]:
    """Read a tau2-bench task list (``tasks_dev.json``) into case records.

    Raises ``MalformedSourceError`` naming the file when it is not a JSON list of tasks with ids.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MalformedSourceError(p, "no such file") from None
    except json.JSONDecodeError as exc:
        raise MalformedSourceError(p, f"not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise MalformedSourceError(p, "expected a JSON list of tau2 tasks")
    out: list[CaseRecord] = []
    for i, task in enumerate(data):
        if not isinstance(task, dict) or "id" not in task:
            raise MalformedSourceError(p, f"item {i}: not a tau2 task (no 'id')")
        out.append(task_to_record(task))
    return out
