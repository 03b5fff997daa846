"""Test doubles for the wiki package: scripted page-writing and judging models (no network).

``ScriptedPageModel`` plays the builder's model deterministically from the prompt it receives (the
family rule code wrote into it, the candidate pages shown, or an aspect page's member list); faults
can be planted per article. ``ScriptedAgent`` plays a coding agent working an agent build with the
same answers. ``OverlapJudge`` plays the
link judge: a link passes when the claims share enough content words with the article body.
``synthetic_corpus`` writes a corpus of any size for scale tests.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillrag.wiki.families import group_key
from skillrag.wiki.families import humanize_key as _humanize_key
from skillrag.workspace import Workspace

__all__ = ["Interrupt", "OverlapJudge", "ScriptedAgent", "ScriptedPageModel", "last_prompt", "synthetic_corpus"]

_ARTICLE = re.compile(r"^Article to place:\nid: (\S+)\ntitle: (.*)$", re.MULTILINE)


class Interrupt(Exception):
    """Raised by a scripted model to simulate a build killed in the middle."""


def last_prompt(messages: list[ModelMessage]) -> str:
    """The text of the last user prompt in ``messages``."""
    for msg in reversed(messages):
        for part in getattr(msg, "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


def _call(info: AgentInfo, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


class ScriptedPageModel:
    """A deterministic stand-in for the builder's model, reading only its prompt.

    Article prompts: it follows the family rule code put in the prompt (update the family's entity
    page, or create it with kind ``entity`` and the given title); an article of no family goes to the
    first candidate page whose sources share its id stem (``group_key``), else to a new topic page
    titled after the stem; over the prompt's step limit it merges its oldest steps. Aspect prompts: one
    step and one source per listed article, with the key line code found. Faults can be planted per
    article.

    ``invalid_first``: article ids whose first answer is invalid (``"unknown"`` cites a missing id,
    ``"uncited"`` omits the article, ``"bad-update"`` updates a page that was not a candidate).
    ``always_invalid``: article ids that never get a valid answer. ``interrupt_at``: raise
    :class:`Interrupt` on this call number (1-based), simulating a kill. ``delay``: seconds each call
    waits (yielding to the event loop, as a network call would). ``.prompts`` keeps every prompt;
    ``.max_in_flight`` is the most calls that were waiting at once.
    """

    def __init__(
        self,
        ws: Workspace,
        *,
        invalid_first: dict[str, str] | None = None,
        always_invalid: Iterable[str] = (),
        interrupt_at: int | None = None,
        merge: bool = True,
        delay: float = 0.0,
    ) -> None:
        self.ws = ws
        self.invalid_first = dict(invalid_first or {})
        self.always_invalid = set(always_invalid)
        self.interrupt_at = interrupt_at
        self.merge = merge
        self.prompts: list[str] = []
        self.seen: dict[str, int] = {}
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self.model = FunctionModel(self._play_async, model_name="scripted-pages")

    async def _play_async(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Like a network call: yields to the event loop for ``delay`` seconds before answering."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            return self._play(messages, info)
        finally:
            self.in_flight -= 1

    def _play(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = last_prompt(messages)
        self.prompts.append(prompt)
        if self.interrupt_at is not None and len(self.prompts) == self.interrupt_at:
            raise Interrupt(f"simulated kill at call {len(self.prompts)}")
        return _call(info, self.answer(prompt))

    def answer(self, prompt: str) -> dict[str, Any]:
        """The page draft (as JSON data) this player writes for a build or aspect prompt; faults planted
        for the article apply. ``ScriptedAgent`` plays the agent driver with it."""
        if _ASPECT.search(prompt):
            return _aspect_answer(prompt)
        m = _ARTICLE.search(prompt)
        assert m, "not a build prompt"
        aid, title = m.group(1), m.group(2).strip()
        n = self.seen[aid] = self.seen.get(aid, 0) + 1
        fault = "unknown" if aid in self.always_invalid else (self.invalid_first.get(aid) if n == 1 else None)
        candidates = _candidates(prompt.split("Article to place:")[0])
        step = {"text": f"Handle {title} as the article describes.", "links": [{"type": "procedure", "article_id": aid}]}
        source = {"id": aid, "summary": f"How to handle {title.lower()}."}
        target, kind, new_title = None, "topic", _humanize_key(group_key(aid)) if self.merge else title
        update_to = _UPDATE_ENTITY.search(prompt)
        create_entity = _CREATE_ENTITY.search(prompt)
        full = "create a new page instead" in prompt  # the validator said the page is full
        if update_to:
            target = candidates.get(update_to.group(1))
        elif create_entity:
            kind, new_title = "entity", create_entity.group(1)
        else:
            for page in candidates.values():
                if full and aid not in page["ids"]:
                    continue
                same_group = self.merge and any(group_key(s) == group_key(aid) for s in page["ids"])
                if same_group or aid in page["ids"]:
                    target = page
                    break
        if target is not None:
            steps = [s for s in target["steps"] if not any(ln["article_id"] == aid for ln in s["links"])]
            args = {
                "action": "update", "page_id": target["id"], "kind": target["kind"], "title": target["title"],
                "intent": target["intent"] or f"Resolve requests about {title.lower()}.",
                "solves": [title], "does_not_solve": [], "steps": [*steps, step], "sources": [source],
            }
        else:
            args = {
                "action": "create", "page_id": None, "kind": kind, "title": new_title,
                "intent": f"Resolve requests about {title.lower()}.", "solves": [title],
                "does_not_solve": [], "steps": [step], "sources": [source],
            }
        cap = _MAX_STEPS.search(prompt)
        while cap and len(args["steps"]) > int(cap.group(1)):  # condense: merge the two oldest steps
            a, b, *rest = args["steps"]
            args["steps"] = [{"text": f"{a['text']} {b['text']}"[:240], "links": a["links"] + b["links"]}, *rest]
        if fault == "unknown":
            args["steps"] = [*args["steps"], {"text": "See the other article.",
                                               "links": [{"type": "policy", "article_id": "doc_not_in_corpus_999"}]}]
        elif fault == "uncited":
            args["steps"] = [{"text": "A step citing nothing relevant.", "links": []}]
            args["sources"] = [s for s in args["sources"] if s["id"] != aid]
        elif fault == "bad-update":
            args["action"], args["page_id"] = "update", "no-such-page"
        return args


class ScriptedAgent:
    """A deterministic coding agent for the agent driver (``skillrag.wiki.agent.AgentBuild``): it claims
    work with ``next``, answers each task's prompt as :class:`ScriptedPageModel` would (``player``, faults
    included) and writes the draft with ``write_page``; after a rejection it asks ``next`` again (which
    hands back its claim with the pages as they are now) and writes again, at most ``retries`` times,
    then releases the claim (a second release of one key raises ``AssertionError``, so a test never
    loops on a draft the validator will not take). ``.log`` lists ``(key, "accepted" | "rejected" | "released", reasons)``."""

    def __init__(self, build: Any, name: str, *, player: ScriptedPageModel | None = None, retries: int = 3) -> None:
        self.build = build
        self.name = name
        self.player = player or ScriptedPageModel(build.ws)
        self.retries = retries
        self.log: list[tuple[str, str, list[str]]] = []

    def step(self) -> bool:
        """Work one claim to its end; False when ``next`` had nothing to claim."""
        from skillrag.errors import PageRejected, UserError

        for _ in range(self.retries + 1):
            task = self.build.next(self.name)
            if task is None:
                return False
            try:
                self.build.write_page(task.claim, json.dumps(self.player.answer(task.prompt)))
            except PageRejected as exc:
                self.log.append((task.key, "rejected", exc.reasons))
                continue
            except UserError as exc:
                # the claim's lease ran out and another agent took the key (a loaded machine): as a real
                # agent told "claim ... is over; run next.py", move on; the build's own tests check that
                # every key still ends up written exactly once
                self.log.append((task.key, "lost", [str(exc)]))
                return True
            self.log.append((task.key, "accepted", []))
            return True
        self.build.release(claim=task.claim)
        if any(k == task.key and what == "released" for k, what, _ in self.log):
            raise AssertionError(f"{task.key}: rejected {self.retries + 1} times, twice: {self.log[-1][2]}")
        self.log.append((task.key, "released", []))
        return True

    def run(self, max_tasks: int = 10_000) -> int:
        """Work until nothing is left to claim (or ``max_tasks`` claims); returns the claims worked."""
        n = 0
        while n < max_tasks and self.step():
            n += 1
        return n


_MAX_STEPS = re.compile(r"at most (\d+) steps")
_ASPECT = re.compile(r"^ASPECT page \(page id ([a-z0-9-]+); it exists already: (yes|no)\)", re.MULTILINE)
_MEMBER = re.compile(r"^- product: (.*)\n  id: (\S+)\n  title: .*\n  key line found by code: (.*)$", re.MULTILINE)
_UPDATE_ENTITY = re.compile(r"Its entity page is ([a-z0-9-]+): UPDATE it")
_CREATE_ENTITY = re.compile(r'It has no entity page yet: CREATE it \(action "create", kind "entity", title "(.*)"\)')
_PAGE_BLOCK = re.compile(r"^<page id=([a-z0-9-]+) kind=(\w+)>\n(.*?)\n</page>$", re.MULTILINE | re.DOTALL)


def _candidates(text: str) -> dict[str, dict[str, Any]]:
    """The candidate pages shown in a build prompt, parsed back: id, kind, title, intent, steps, ids."""
    from skillrag.wiki.page import LINK_RE

    out: dict[str, dict[str, Any]] = {}
    for m in _PAGE_BLOCK.finditer(text):
        body = m.group(3)
        title = re.search(r"^# (.*)$", body, re.MULTILINE)
        intent = re.search(r"^## Intent\n\n(.*)$", body, re.MULTILINE)
        steps = []
        for line in re.findall(r"^\d+\. (.*)$", body, re.MULTILINE):
            links = [{"type": t, "article_id": a} for t, a in LINK_RE.findall(line)]
            steps.append({"text": LINK_RE.sub("", line).strip(), "links": links})
        ids = re.search(r"^Sources \(\d+\): (.*)$", body, re.MULTILINE)
        out[m.group(1)] = {
            "id": m.group(1), "kind": m.group(2), "title": title.group(1) if title else m.group(1),
            "intent": intent.group(1) if intent and intent.group(1) != "_(none)_" else "",
            "steps": steps, "ids": [i for i in ids.group(1).split(", ") if i] if ids else [],
        }
    return out


def _aspect_answer(prompt: str) -> dict[str, Any]:
    m = _ASPECT.search(prompt)
    assert m
    members = _MEMBER.findall(prompt)
    title = re.search(r"^- title: (.*)$", prompt, re.MULTILINE)
    return {
        "action": "update" if m.group(2) == "yes" else "create", "page_id": m.group(1), "kind": "aspect",
        "title": title.group(1) if title else m.group(1),
        "intent": f"Compare this aspect across {len(members)} articles.",
        "solves": [], "does_not_solve": [],
        "steps": [{"text": f"{product}: {line}", "links": [{"type": "reference", "article_id": aid}]}
                  for product, aid, line in members],
        "sources": [{"id": aid, "summary": line} for _, aid, line in members],
    }


class OverlapJudge:
    """A deterministic link judge: supported when at least ``min_overlap`` of the claims' content words
    (4+ letters) occur in the article body. ``.calls`` counts judgements."""

    def __init__(self, min_overlap: float = 0.5) -> None:
        self.min_overlap = min_overlap
        self.calls = 0
        self.model = FunctionModel(self._play, model_name="overlap-judge")

    def _play(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        prompt = last_prompt(messages)
        claims = prompt.split("Claims the page attributes to", 1)[1].split("\n\nArticle ", 1)[0]
        body = prompt.rsplit("---", 2)[-2].lower()
        words = {w for w in re.findall(r"[a-z]{4,}", claims.lower().split(":", 1)[-1])}
        hit = sum(1 for w in words if w in body) / max(1, len(words))
        ok = hit >= self.min_overlap
        reason = f"{hit:.0%} of the claim words occur in the article" + ("" if ok else ": unsupported")
        return _call(info, {"supported": ok, "reason": reason})


def synthetic_corpus(folder: Path, n: int, *, per_group: int = 5, words: int = 120) -> Path:
    """Write ``n`` JSON articles (``{"id","title","content"}``) in groups of ``per_group`` to ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = [f"term{i}" for i in range(997)]
    for i in range(n):
        g = i // per_group
        body_words = " ".join(vocab[(g * 7 + j * 13 + i) % len(vocab)] for j in range(words))
        content = (f"## Overview\n\nThis article explains product {g} task {i % per_group} for customers.\n\n"
                   f"## Procedure\n\n1. Verify the customer.\n2. Apply rule {i}. {body_words}\n\n"
                   f"## Fees\n\nThe fee for product {g} is ${g % 50}.00 per month.\n")
        (folder / f"doc_prod{g:04d}_{i % per_group + 1:03d}.json").write_text(
            json.dumps({"id": f"doc_prod{g:04d}_{i % per_group + 1:03d}", "title": f"Product {g} task {i % per_group}",
                        "content": content}),
            encoding="utf-8",
        )
    return folder
