"""Import tau2-bench tasks (every domain: banking, telecom, retail, airline, ...) as cases.

A tau2 task is a script for a *user simulator*, not a support ticket: its instructions mix what the
customer knows and wants with directions for playing the customer ("You are playing the role of...",
"Don't dump all your information at once", "If the agent suggests ..., express mild frustration",
"## How to Behave"). The importer keeps the customer's situation and keeps the simulator's directions
out of everything an agent sees; the full original instructions stay in the ground truth
(``extra["simulator_instructions"]``), so nothing is lost for evaluation.

What becomes what:

* ``case_id`` ← the task ``id`` when it is a valid case id (``task_002``); otherwise (telecom's
  ``[mobile_data_issue]airplane_mode_on|...[PERSONA:None]``, which would also tell the agent the fault)
  an opaque ``DOMAIN-<10 hex of sha256(id)>``. The original id is kept in the record's ``source_id``
  (never agent-facing).
* ``contact_reason`` ← structured instructions (telecom, retail, airline): the first two sentences of
  ``reason_for_call``. Text instructions (banking): the text after ``**Your goal:**``, else after
  ``**Your situation:**``, else the scripted opening line, else what a "Start by saying ..." line says,
  else "The customer wants to ..." from the persona line, else the first situation paragraph that says
  what the customer wants; its first two sentences, at most 400 characters.
* ``contact_reason_path`` ← the ``[category]`` prefix of a structured task id (telecom's
  ``mobile_data_issue``), else ``[]`` (anything derived from the expected actions would leak the answer).
* ``case_notes`` ← the customer's situation, one note per paragraph, with the simulator directions
  removed sentence by sentence (``situation_text``): structured tasks give ``reason_for_call``,
  ``known_info``, ``unknown_info`` ("not known to the customer") and the preference sentences of
  ``task_instructions`` (e.g. "You are willing to refuel 2.0 GB of data ..."), plus tau2's own
  agent-facing ``ticket`` when the task has one. The notes keep the source's second person ("Your
  annual income is ..."); the first note says that "you" is the customer.
* ``case_messages`` ← one customer message: the scripted opening line when the scenario has one
  (``**Opening:** "..."``, ``**Start naturally:** "..."``, direction sentences inside the quote removed),
  else a "Start by saying you ..." line in the first person, else the contact reason.
* ground truth ← ``required_documents``; ``expected_actions`` (name, arguments, requestor);
  ``expected_tools`` = the tool each action reaches (``arguments.agent_tool_name`` /
  ``arguments.discoverable_tool_name`` for the discoverable-tool wrappers, else the action name),
  de-duplicated in order, ``transfer_to_human_agents`` and user-side tools included;
  ``reference_guidance`` = the task's evaluator notes, the expected actions, the expected end state
  (``env_assertions``) and the information to communicate; ``extra`` = the domain, the original
  simulator instructions and persona, the env assertions, the task's purpose and user tools.

The case's clock (``as_of``): offers and deadlines are judged against the benchmark's date, never today's.
A tau2 environment states its time inside its tasks, as a property of the environment rather than an
answer: banking's ``log_verification`` actions carry ``time_verified`` ("2025-11-14 03:40:00 EST"), and
evaluator notes say "the current date (11/14/2025)". ``task_clock`` reads it; ``as_of`` is its date (the
agent sees the date only, nothing else of the evaluation criteria). A task that states none takes the
importer's ``as_of`` (``--as-of DATE``), else the clock the other tasks of the same file state (when
they agree); when no task states one and no date is given, the import is refused with a line asking for
``--as-of``. ``CaseRecord.as_of_source`` (never agent-facing) says where each date came from.

What counts as simulator direction (removed; see ``_DIRECTION``): the role-play frame, instructions
about how and when to reveal information, reactions to what the agent does ("If the agent ...",
"Once the agent ..."), the simulator's own tools and tool calls, conversation mechanics ("end the
conversation", "in every message", "express frustration", "lie"), scripted reactions to what the agent
says or does, and "How to Behave" / "Conversation Flow" sections (whose scripted opening line becomes the
customer's message). Facts stay: who the customer is, identifiers and details they know, what they
hold, what they want, their constraints and preferences ("you prefer the one with the smallest annual
fee", "you do not want to change your plan"), what they do not know, their scripted answers to the
questions a specialist would ask ("If asked about the amount: "$449.99 ..."", a "reveal ... when asked"
list), and further issues they raise ("Also raises: ..."). Known limit: an answer keyed on a question
that quotes what the agent found ("If agent asks 'Were you in Newark at 2 AM?'") keeps that question.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any

from skillrag.corpus import check_id
from skillrag.errors import InvalidIdError, MalformedSourceError, UserError
from skillrag.skill.cases import CaseRecord, Message, _GroundTruthBody
from skillrag.text import sentence_texts
from skillrag.workspace.files import read_json_file

__all__ = ["import_tau2", "situation_text", "task_clock", "task_to_record"]

_GOAL = re.compile(r"\*\*Your goal:?\*\*:?\s*(.+?)(?:\n\s*\n|\n\*\*|\n#|$)", re.DOTALL)
_SITUATION = re.compile(r"\*\*Your situation:?\*\*:?\s*(.+?)(?:\n\s*\n|\n\*\*|\n#|$)", re.DOTALL)
_OPENING = re.compile(r"\*\*(?:Opening[^*]*|Start naturally[^*]*)\*\*:?[^\"\n]*\"(.+?)\"", re.DOTALL)
_WHO_WANTS = re.compile(r"\bwho (wants|needs|would like|is looking) (to [^.\n]+)")
_PREAMBLE = ("playing the role", "your character", "you are playing", "verification info", "information you know")
_WRAPPERS = {
    "unlock_discoverable_agent_tool": "agent_tool_name",
    "call_discoverable_agent_tool": "agent_tool_name",
    "give_discoverable_user_tool": "discoverable_tool_name",
    "call_discoverable_user_tool": "discoverable_tool_name",
}
_CATEGORY = re.compile(r"^\[([A-Za-z0-9_\-]+)\]")

#: The first note of every imported case: the notes keep the simulator brief's second person.
YOU_NOTE = "About the customer, from their own brief (\"you\" is the customer):"

# -- simulator direction ----------------------------------------------------------------------------
_AGENT = r"(?:the |a |an |your |another )?(?:customer (?:support|service) )?(?:agent|representative|rep|supervisor)"
#: A sentence is simulator direction when it matches one of these anywhere.
_DIRECTION = re.compile("|".join([
    r"playing the role", r"role of (?:a|the) customer", r"never respond as", r"\brole-?play",
    r"(?:you are|you're) (?:currently |now )?on the line", r"you are the customer",
    rf"\b{_AGENT} (?:brings? up|asks? you|tells? you|offers? you)\b",
    rf"\b(?:ask|tell|demand|request)(?:s|ed)? (?:for )?(?:to (?:be transferred|speak) )?(?:to |with )?{_AGENT}",
    r"\bhuman agent", r"\btransferr?(?:ed|ing)? you\b", r"\bto be transferred\b",
    r"\btools?\b", r"\btool calls?\b", r"\byou have access to\b",
    r"\bparameter\b", r"\bcall (?:it|the tool) with\b",
    r"\bdon'?t dump\b", r"\bdo not dump\b", r"\bupfront\b", r"\bup front\b", r"\bunless (?:specifically |you are )?asked\b",
    r"\bvolunteer\b", r"\bproactively\b", r"\bunprompted\b", r"\bdo not reveal\b", r"\bdon'?t reveal\b",
    r"\bpretend\b", r"\bact as if\b", r"\bdeflect", r"\bsimulat", r"\blie\b", r"\blying\b", r"\bbend the truth\b",
    r"\bend the (?:conversation|call|chat)\b", r"\bend conversation\b", r"\bnaturally end\b",
    r"take your business elsewhere", r"###\s*STOP\s*###",
    r"\breal customers?\b", r"\bexpress (?:mild |some |your )?(?:frustration|anger|annoyance|surprise|confusion)",
    r"\b(?:never|do not|don't) make up\b", r"\bground your responses\b",
    r"\bin every (?:single )?message\b", r"\bevery (?:single )?message\b", r"\bevery response\b",
    r"\bafter you receive enough information\b", r"\bimmediately apply\b", r"\bon your own\b",
    r"\bthis is all (?:the )?information\b", r"\byou take recommendations\b",
    r"\bif you are (?:offered|recommended|unsure)\b", r"\bask for clarification\b",
    r"\bdon'?t (?:anticipate|fish|diagnose|push)\b", r"\bnever (?:fish|hint)\b", r"\bcoach the agent\b",
    r"\bfollow (?:their|the agent'?s?) (?:guidance|lead|directions)\b", r"\bstart (?:by saying|naturally)\b",
    r"\bthank them\b", r"\bsay something like\b", r"\bhere are your behaviou?r guidelines\b",
    r"\bonly (?:moving|move) to the next\b", r"\bone at a time\b", r"\*\*opening\b",
    r"\brespond reactively\b", r"\bignore phase\b", r"\blet the agent (?:investigate|look|figure|do)\b",
    r"\buse it\b", r"\buse the value\b", r"\bred herring\b",
]), re.IGNORECASE)
#: A sentence that starts with a condition on what the agent (or "they") does is a reaction rule.
_REACTION = re.compile(
    r"^\W*(?:however,?\s+|otherwise,?\s+|then,?\s+)?(?:if|when|whenever|once|after|until|before|unless|only if)\b"
    rf"[^.?!]*\b(?:{_AGENT}|they|them|it is offered|you (?:are|get) (?:offered|transferred))\b",
    re.IGNORECASE)
#: A clause that directs the simulator inside an otherwise factual sentence: cut from here on.
_DIRECTION_CLAUSE = re.compile(
    r"(?:[,;:]\s*(?:but |and )?(?:do not|don't|never|do NOT)\s+(?:reveal|volunteer|mention|bring|say|tell|offer|"
    r"provide|share|give)\b|[,;:]\s*(?:and )?make this (?:extremely |very )?(?:upfront|clear)\b).*$",
    re.IGNORECASE | re.DOTALL)
#: Parenthetical asides that direct the simulator or hint at the answer.
_DIRECTION_PAREN = re.compile(
    r"\s*\((?:[^()]*\b(?:volunteer|unless (?:specifically )?asked|should be (?:the )?correct|this one is correct|"
    r"do not|don't|red herring)\b[^()]*)\)", re.IGNORECASE)
#: "Express that you want ..." is the customer's want behind a stage direction.
_STAGE = re.compile(r"\b(?:first,\s*)?(?:express|state|explain|say|mention)(?: that)? (?=you\b)", re.IGNORECASE)
#: Headings / lead-ins of behaviour sections: dropped, except the customer's answers (below).
_BEHAVIOUR_HEAD = re.compile(r"^\s*(?:#+\s*)?(?:\*\*)?\s*(?:how to behave|behaviou?r(?:al)? guidelines?|here are your "
                             r"behaviou?r guidelines|conversation flow|critical reminders|what not to do|"
                             r"phase \d|important rules|closing the conversation)\b", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#+\s")
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+")
_LABEL = re.compile(r"^\*\*([^*]+?):?\*\*:?\s*(.*)$", re.DOTALL)
_QUOTE = re.compile(r"\"([^\"]{2,}?)\"")
_ASKED = re.compile(r"^(?:if|when)\s+(?:the\s+)?(?:agent\s+)?asks?(?:ed)?\b", re.IGNORECASE)
_RAISES = re.compile(r"\b(?:bring up|raise|mention)\b[^:]*\b(?:issue|problem|card|account|question)", re.IGNORECASE)
_CONDITION = r"^\W*(?:only\s+)?(?:if|when|whenever|once|after|before|until)\b"
#: A scripted step of the conversation, not something the customer knows.
_STEP = re.compile(r"^\W*(?:closing|end (?:the )?conversation|accept|after|once|then|finally|wrap)\b", re.IGNORECASE)
#: A lead-in whose list holds what the customer says when asked ("Reveal your requirements when asked:").
_REVEAL = re.compile(r"\b(?:reveal|provide|share|give|state|mention|explain)\b.*\b(?:when|if) asked\b", re.IGNORECASE)
_LABEL_NOTE = re.compile(r"\s*\((?:criterion|req(?:uirement)?)[^)]*\)|\bred herring\s*[-:]\s*", re.IGNORECASE)
_ASK_CUT = re.compile(r"\s+(?:or|and)\s+(?:the\s+)?(?:agent\s+)?(?:mentions|says|explains|suggests|confirms|tells|"
                      r"shows|reads|offers)\b.*$", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    """Sentences of ``text`` (``skillrag.text.sentences``: pysbd); a quoted utterance is never split."""
    out: list[str] = []
    for piece in sentence_texts(text.strip()):
        if out and out[-1].count('"') % 2 == 1:
            out[-1] += " " + piece
        else:
            out.append(piece)
    return [s for s in out if s.strip()]


def _clean_sentence(sentence: str) -> str | None:
    """The sentence without direction asides and clauses; None when what is left is direction."""
    s = _DIRECTION_PAREN.sub("", sentence)
    s = _DIRECTION_CLAUSE.sub(".", s).strip()
    if not s or _DIRECTION.search(s) or _REACTION.search(s):
        return None
    if not re.search(r"[A-Za-z0-9]", s.replace("*", "")):
        return None
    s = _STAGE.sub("", s)
    return s[:1].upper() + s[1:]


def _answer_item(label: str, rest: str) -> str | None:
    """A scripted line keyed on the agent: the customer's answer to a question (kept, it is what the
    customer knows), a further issue the customer raises (kept), or a reaction (None)."""
    quotes = " ".join(q.strip() for q in _QUOTE.findall(rest))
    if _ASKED.match(label) and quotes:
        return f"{_ASK_CUT.sub('', label).strip()}: \"{quotes}\""
    if _RAISES.search(label) and quotes:
        return f"Also raises: \"{quotes}\""
    return None


def situation_text(text: str) -> list[str]:
    """The customer's situation in a user-simulator brief, one entry per paragraph (see the module doc).

    Sentences of simulator direction are removed; a line keyed on a condition ("**If asked about the
    amount:** "$449.99 ..."") keeps only the customer's answers to questions and the further issues
    they raise, and a "reveal ... when asked" list keeps what the customer says; behaviour sections
    ("## How to Behave", "## Conversation Flow") keep only those; a list introduced by a direction
    ("The parameter must be one of:") goes with it unless its items state facts about "you"; the
    scripted opening line is left to the case's message.
    """
    out: list[str] = []
    behaviour = False
    mode = ""  # "answers": list items are the customer's answers; "skip": items of a dropped lead-in
    for para in re.split(r"\n\s*\n", text or ""):
        lines_out: list[str] = []
        for raw in para.splitlines():
            if not raw.strip() or raw.strip() == "---":
                continue
            if _HEADING.match(raw) or _BEHAVIOUR_HEAD.match(raw):
                behaviour, mode = bool(_BEHAVIOUR_HEAD.match(raw)), ""
                if not behaviour and _HEADING.match(raw) and not _DIRECTION.search(raw):
                    lines_out.append(raw.strip())
                continue
            m = _LIST_ITEM.match(raw)
            prefix, item = (m.group(0).strip() + " ", raw[m.end():]) if m else ("", raw.strip())
            lab = _LABEL.match(item.strip())
            label, rest = (lab.group(1).strip(), lab.group(2)) if lab else ("", item)
            if m and mode == "answers":
                outside = _QUOTE.sub("", item).strip()
                cond = label or outside.split(":", 1)[0]
                quotes = " ".join(q.strip() for q in _QUOTE.findall(rest))
                if re.match(_CONDITION, cond, re.IGNORECASE):
                    kept = _answer_item(cond, rest)
                    if kept:
                        lines_out.append("- " + kept)
                elif quotes and not _DIRECTION.search(outside) and not _STEP.match(outside):
                    name = _LABEL_NOTE.sub("", label).strip(" -:")
                    lines_out.append(f"- {name}: \"{quotes}\"" if name else f"- \"{quotes}\"")
                continue
            if m and mode == "skip" and not re.search(r"\byou(?:r)?\b", item, re.IGNORECASE):
                continue
            if not m:
                mode = ""
            if _REVEAL.search(label or item) and not _QUOTE.search(rest):
                mode = "answers"
                continue
            if (m or lab) and re.match(_CONDITION, label or item, re.IGNORECASE):
                kept = _answer_item(label or item.split(":", 1)[0], rest if label else item)
                if kept:
                    lines_out.append(prefix + kept if prefix.startswith("-") else kept)
                elif not m and (item.rstrip().endswith(":") or (lab and not rest.strip())):
                    mode = "skip"  # a reaction that introduces a list of scripted lines
                continue
            if behaviour:
                continue
            if re.match(r"^tool usage\b", label, re.IGNORECASE):
                continue
            sentences = [c for x in _sentences(item) if (c := _clean_sentence(x))]
            line = " ".join(sentences).strip()
            if not line and not m and item.rstrip().endswith(":") and not re.fullmatch(r"\*\*[^*]+\*\*:?", item.strip()):
                mode = "skip"  # a dropped direction that introduces a list
            if line and not re.fullmatch(r"\*\*[^*]+\*\*:?", line):
                lines_out.append(prefix + line)
        block = "\n".join(lines_out).strip()
        if block:
            out.append(block)
    # a heading left with nothing under it says nothing
    return [p for i, p in enumerate(out) if not (_HEADING.match(p) and "\n" not in p and
                                                 (i + 1 == len(out) or _HEADING.match(out[i + 1])))]


def _clean_opening(text: str) -> str:
    """The scripted opening line without direction sentences that slipped into the quote."""
    flat = re.sub(r"\s+", " ", text).strip()
    kept = [x for x in _sentences(flat) if not _DIRECTION.search(x) and not _REACTION.search(x)]
    return " ".join(kept).strip() or flat


# -- contact reason and opening -------------------------------------------------------------------------


def _first_sentences(text: str, n: int = 2, limit: int = 400) -> str:
    flat = re.sub(r"\s+", " ", text.replace("**", "")).strip()
    out = " ".join(sentence_texts(flat)[:n]).strip()
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0] + " ..."
    return out


_START_SAYING = re.compile(r"\bstart by saying (?:that )?(you\b[^.\n]*)", re.IGNORECASE)
_WANTS = re.compile(r"\b(?:want|wants|looking for|looking to|need|needs|would like|trying to|plan to|planning)\b",
                    re.IGNORECASE)


def _first_person(clause: str) -> str:
    """``you want to change your email`` → ``I want to change my email`` (a "start by saying" clause)."""
    out = re.sub(r"\byou're\b", "I'm", clause, flags=re.IGNORECASE)
    out = re.sub(r"\byour\b", "my", out, flags=re.IGNORECASE)
    out = re.sub(r"\byou\b", "I", out, flags=re.IGNORECASE)
    return out[:1].upper() + out[1:].rstrip(" .") + "."


def _contact_reason(instr: str, notes: list[str]) -> str:
    for pat in (_GOAL, _SITUATION):
        m = pat.search(instr)
        if m and m.group(1).strip():
            kept = " ".join(c for s in _sentences(m.group(1)) if (c := _clean_sentence(s)))
            if kept:
                return _first_sentences(kept)
    m = _OPENING.search(instr)
    if m:
        return _first_sentences(_clean_opening(m.group(1)))
    m = _START_SAYING.search(instr)
    if m:
        clause = m.group(1).strip().rstrip(".")
        return clause[:1].upper() + clause[1:] + "."
    m = _WHO_WANTS.search(instr)
    if m:
        return f"The customer {m.group(1)} {m.group(2).strip()}."
    paras = [p for p in notes if p != YOU_NOTE and not any(k in p.lower() for k in _PREAMBLE)]
    for p in paras:
        if _WANTS.search(p):
            want = next((x for x in _sentences(p) if _WANTS.search(x)), p)
            return _first_sentences(p[p.index(want):] if want in p else p)
    return _first_sentences(paras[0]) if paras else (_first_sentences(notes[-1]) if notes else "")


def _expected_tools(actions: list[dict[str, Any]]) -> list[str]:
    tools: list[str] = []
    for a in actions:
        name = a.get("name", "")
        key = _WRAPPERS.get(name)
        tool = (a.get("arguments") or {}).get(key) if key else name
        if tool and tool not in tools:
            tools.append(tool)
    return tools


def _call(name: Any, args: Any) -> str:
    arg_text = ", ".join(f"{k}={v!r}" for k, v in (args or {}).items()) if isinstance(args, dict) else ""
    return f"{name}({arg_text})"


def _reference(task: dict[str, Any], actions: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    notes = (task.get("description") or {}).get("notes")
    if notes:
        parts.append(str(notes).strip())
    if actions:
        lines = ["Expected actions:"]
        for a in actions:
            who = a.get("requestor") or "assistant"
            lines.append(f"- {_call(a.get('name'), a.get('arguments'))} [by {who}]")
        parts.append("\n".join(lines))
    criteria = task.get("evaluation_criteria") or {}
    asserts = [x for x in criteria.get("env_assertions") or [] if isinstance(x, dict)]
    if asserts:
        lines = ["Expected end state:"]
        for x in asserts:
            neg = "" if x.get("assert_value", True) else "not "
            lines.append(f"- {neg}{_call(x.get('func_name'), x.get('arguments'))} [{x.get('env_type', 'env')}]")
        parts.append("\n".join(lines))
    info = criteria.get("communicate_info") or []
    if info:
        parts.append("Information to communicate:\n" + "\n".join(f"- {x}" for x in info))
    nl = criteria.get("nl_assertions") or []
    if nl:
        parts.append("Expected of the agent:\n" + "\n".join(f"- {x}" for x in nl))
    return "\n\n".join(parts)


def _case_id(source_id: str, domain: str) -> str:
    try:
        return check_id(source_id, "case")
    except InvalidIdError:
        return f"{domain}-{hashlib.sha256(source_id.encode('utf-8')).hexdigest()[:10]}"


def _structured(instr: dict[str, Any], task: dict[str, Any]) -> tuple[str, list[str], str]:
    """``(contact reason, notes, opening)`` for structured instructions (telecom, retail, airline)."""
    reason_raw = str(instr.get("reason_for_call") or "").strip()
    notes: list[str] = []
    reason_kept = situation_text(reason_raw)
    if reason_kept:
        notes.append("Reason for call: " + " ".join(reason_kept))
    known = situation_text(str(instr.get("known_info") or ""))
    if known:
        notes.append("Known to the customer: " + " ".join(known))
    unknown = situation_text(str(instr.get("unknown_info") or ""))
    if unknown:
        notes.append("Not known to the customer: " + " ".join(unknown))
    prefs = situation_text(str(instr.get("task_instructions") or ""))
    if prefs:
        notes.append("The customer's conditions and preferences: " + " ".join(prefs))
    reason = _first_sentences(" ".join(reason_kept) or reason_raw)
    return reason, notes, reason


#: Action arguments that hold the environment's time (banking's ``log_verification``).
_CLOCK_ARGS = ("time_verified",)
_ISO_TIME = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?)?(?:\s*[A-Za-z]{2,5})?\s*$")
#: "the current date (11/14/2025)", "today's date is 2025-11-14", "current date: 11/14/2025".
_STATED_DATE = re.compile(r"\b(?:current date|today'?s date|today is|the date is)\W{0,4}(?:is\s+)?"
                          r"(\d{1,2}/\d{1,2}/\d{4}|\d{4}-\d{2}-\d{2})", re.IGNORECASE)


def _date_of(text: str) -> date | None:
    """``2025-11-14`` (a time and zone may follow) or ``11/14/2025`` (US order, as tau2 writes it)."""
    m = _ISO_TIME.match(text)
    try:
        if m:
            return date.fromisoformat(m.group(1))
        return datetime.strptime(text.strip(), "%m/%d/%Y").date()
    except ValueError:
        return None


def task_clock(task: dict[str, Any]) -> tuple[date, str] | None:
    """The environment's clock a tau2 task states: ``(its date, where it was read)``, or None.

    Read, in this order: a ``time_verified`` argument of an expected action ("2025-11-14 03:40:00 EST"), then
    a date the evaluator notes give as the current one ("the current date (11/14/2025)"). The time of day
    stays in the ``where`` text only."""
    criteria = task.get("evaluation_criteria") or {}
    for i, a in enumerate(criteria.get("actions") or []):
        args = a.get("arguments") if isinstance(a, dict) else None
        for key in _CLOCK_ARGS:
            value = args.get(key) if isinstance(args, dict) else None
            day = _date_of(value) if isinstance(value, str) else None
            if day is not None:
                return day, f"task: evaluation_criteria.actions[{i}].arguments.{key} = {value!r}"
    notes = (task.get("description") or {}).get("notes") if isinstance(task.get("description"), dict) else None
    m = _STATED_DATE.search(str(notes or ""))
    day = _date_of(m.group(1)) if m else None
    if m and day is not None:
        return day, f"task: description.notes {m.group(0)!r}"
    return None


def task_to_record(task: dict[str, Any], *, domain: str | None = None, as_of: date | None = None,
                   as_of_source: str | None = None) -> CaseRecord:
    """One tau2 task → one case record (case + ground truth), as described in the module doc.

    ``domain`` names the domain when the task's instructions do not (text instructions: banking).
    ``as_of``: the date for a task that states no clock (``task_clock``; the task's own wins), with
    ``as_of_source`` saying where it came from; a task that states none, given none, gets no ``as_of``
    (``import_tau2`` never leaves one so).
    """
    clock = task_clock(task)
    if clock is not None:
        as_of, as_of_source = clock
    elif as_of is None:
        as_of_source = None
    scenario = task.get("user_scenario") or {}
    instr = scenario.get("instructions") or ""
    source_id = str(task["id"])
    if isinstance(instr, dict):
        dom = str(instr.get("domain") or domain or "tau2")
        reason, notes, opening = _structured(instr, task)
        m = _CATEGORY.match(source_id)
        path = [m.group(1)] if m else []
    else:
        dom = domain or "tau2"
        instr = str(instr)
        notes = situation_text(instr)
        reason = _contact_reason(instr, notes)
        m = _OPENING.search(instr)
        start = _START_SAYING.search(instr)
        opening = (_clean_opening(m.group(1)) if m else
                   _first_person(start.group(1).strip()) if start else reason)
        path = []
    ticket = task.get("ticket")
    if isinstance(ticket, str) and ticket.strip():
        notes.append("Ticket: " + ticket.strip())
    if notes:
        notes.insert(0, YOU_NOTE)
    actions = list((task.get("evaluation_criteria") or {}).get("actions") or [])
    criteria = task.get("evaluation_criteria") or {}
    extra: dict[str, Any] = {"domain": dom, "simulator_instructions": scenario.get("instructions")}
    for key, value in (("persona", scenario.get("persona")), ("env_assertions", criteria.get("env_assertions")),
                       ("purpose", (task.get("description") or {}).get("purpose")),
                       ("user_tools", task.get("user_tools"))):
        if value:
            extra[key] = value
    return CaseRecord(
        case_id=_case_id(source_id, dom),
        source="tau2" if dom == "tau2" else f"tau2-{dom}",
        source_id=source_id,
        contact_reason=reason or "(no reason given)",
        contact_reason_path=path,
        case_notes=notes,
        case_messages=[Message(role="customer", content=opening or reason)] if (opening or reason) else [],
        as_of=as_of,
        as_of_source=as_of_source,
        ground_truth=_GroundTruthBody(
            reference_guidance=_reference(task, actions),
            required_documents=list(task.get("required_documents") or []),
            expected_tools=_expected_tools(actions),
            expected_actions=[
                {"name": a.get("name"), "arguments": a.get("arguments") or {},
                 "requestor": a.get("requestor") or "assistant"}
                for a in actions
            ],
            extra=extra,
        ),
    )


def import_tau2(path: str | Path, *, domain: str | None = None, as_of: date | str | None = None) -> list[CaseRecord]:
    """Read a tau2-bench task list (``tasks.json``, ``tasks_dev.json``) of any domain into case records.

    ``domain`` names the domain for tasks whose instructions are plain text (default: the parent
    folder's name when it is a known tau2 domain, else ``banking`` for a ``tau2-banking`` folder, else
    ``tau2``). Every record gets an ``as_of`` (module doc): the clock its task states, else ``as_of``
    (a date or ISO string), else the one clock the file's other tasks state. Raises
    ``MalformedSourceError`` naming the file and item when it is not a JSON list of tasks with ids, or
    when two tasks map to the same case id; ``UserError`` when ``as_of`` is not an ISO date, or a task
    states no clock and neither ``as_of`` nor the file gives one (or the file's tasks disagree).
    """
    given: date | None
    if isinstance(as_of, str):
        try:
            given = date.fromisoformat(as_of.strip())
        except ValueError:
            raise UserError(f"--as-of {as_of!r} is not a date: give it as YYYY-MM-DD") from None
    else:
        given = as_of
    p = Path(path)
    data = read_json_file(p)
    if not isinstance(data, list):
        raise MalformedSourceError(p, "expected a JSON list of tau2 tasks")
    if domain is None:
        folder = p.parent.name.lower()
        domain = "banking" if "banking" in folder else folder if folder in {
            "telecom", "retail", "airline", "mock"} else None
    out: list[CaseRecord] = []
    tasks: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for i, task in enumerate(data):
        if not isinstance(task, dict) or "id" not in task:
            raise MalformedSourceError(p, f"item {i}: not a tau2 task (no 'id')")
        scenario = task.get("user_scenario")
        if not isinstance(scenario, dict) or not isinstance(scenario.get("instructions"), (str, dict)):
            raise MalformedSourceError(p, f"item {i} (id {task['id']!r}): user_scenario.instructions must be "
                                          "text or an object")
        rec = task_to_record(task, domain=domain)
        if rec.case_id in seen:
            raise MalformedSourceError(p, f"item {i} (id {task['id']!r}): case id {rec.case_id!r} already used by "
                                          f"id {seen[rec.case_id]!r}")
        seen[rec.case_id] = str(task["id"])
        tasks.append(task)
        out.append(rec)
    fallback, source = _fallback_clock(p, tasks, given)
    return [r if r.as_of is not None else r.model_copy(update={"as_of": fallback, "as_of_source": source})
            for r in out]


def _fallback_clock(p: Path, tasks: list[dict[str, Any]], given: date | None) -> tuple[date | None, str | None]:
    """The date for the tasks of ``p`` that state no clock, and where it comes from (module doc)."""
    clocks = [c[0] for t in tasks if (c := task_clock(t)) is not None]
    if len(clocks) == len(tasks):
        return None, None  # every task states its own
    if given is not None:
        return given, f"--as-of {given.isoformat()} (the task states no clock)"
    days = Counter(clocks)
    if len(days) == 1:
        [(day, n)] = days.items()
        return day, (f"file: the clock {n} of the {len(tasks)} tasks in {p.name} state ({day.isoformat()}); "
                     "the task states none")
    n_none = len(tasks) - len(clocks)
    if not days:
        raise UserError(f"{p.name}: no task states the benchmark's clock (a time_verified argument, a current "
                        "date in the notes), and offers and deadlines would be judged against today: give the "
                        "date with --as-of YYYY-MM-DD")
    listed = ", ".join(f"{d.isoformat()} ({k} task{'s' if k > 1 else ''})" for d, k in days.most_common())
    who = f"{n_none} tasks state" if n_none > 1 else "1 task states"
    raise UserError(f"{p.name}: {who} no clock and the others disagree ({listed}): give the date with "
                    "--as-of YYYY-MM-DD")
