"""LLM judges: binary verdicts, each decided by a majority of independent calls.

Three judges, following the structure of the paper's appendix E.5 (prompts in our own words, in
``skillrag/evaluation/prompts/*.md``):

- ``guidance_match``      candidate guidance vs the reference guidance (procedural equivalence);
- ``snippets_sufficient`` could a specialist rebuild the reference from the cited snippets alone;
- ``correctness``         reference-free: does the guidance resolve the case on its own merits.

Each call must end with the line ``VERDICT: accept`` or ``VERDICT: reject``. A call whose last line is
anything else, or that fails at the provider, is recorded as a failed vote (never raised). The decision
needs a strict majority of the calls (2 of 3); without one, the decision is ``None`` and ``failure``
says why. A case whose run saved no accepted output is not sent to a judge: it is a reject with no
call spent (``not_judged``). ``decide`` is the one majority rule, for model calls and for external
votes read back by ``skillrag.evaluation.packets``. Judges see only the case (contact reason, notes, messages), the reference and the output's
guidance or snippet texts with their article ids: never navigation pages, run records or retrieval hits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillrag.errors import SkillragError, UserError
from skillrag.evaluation.metrics import Reference
from skillrag.models import Prompt, PromptSet, make_agent

__all__ = [
    "JUDGES",
    "JudgeInputs",
    "JudgeResult",
    "JudgeSpec",
    "JudgeVote",
    "decide",
    "judge_inputs",
    "load_prompt",
    "not_judged",
    "parse_verdict",
    "run_judge",
]

Verdict = Literal["accept", "reject"]

_CASE_FIELDS = ("contact_reason", "case_notes", "case_messages")


@dataclass(frozen=True)
class JudgeSpec:
    """A judge declared as data: its prompt file and the placeholders the file must contain."""

    name: str
    prompt_file: str
    placeholders: frozenset[str]
    needs_reference: bool
    side: Literal["guidance", "evidence"]
    description: str


JUDGES: dict[str, JudgeSpec] = {
    j.name: j
    for j in [
        JudgeSpec(
            "guidance_match", "guidance_match.md",
            frozenset({*_CASE_FIELDS, "reference_guidance", "candidate_guidance"}), True, "guidance",
            "Candidate guidance resolves the case equivalently to the reference guidance.",
        ),
        JudgeSpec(
            "snippets_sufficient", "snippets_sufficient.md",
            frozenset({*_CASE_FIELDS, "reference_guidance", "snippets"}), True, "evidence",
            "A specialist could rebuild the reference guidance from the cited snippets alone.",
        ),
        JudgeSpec(
            "correctness", "correctness.md",
            frozenset({*_CASE_FIELDS, "candidate_guidance"}), False, "guidance",
            "Reference-free: the guidance resolves the case, nothing wrong or misleading.",
        ),
    ]
}


#: The judges' prompts (``prompts/<judge>.md``), loaded by the one loader (``skillrag.models.PromptSet``).
_PROMPTS = PromptSet("skillrag.evaluation", {j.prompt_file: j.placeholders for j in JUDGES.values()})


def load_prompt(name: str) -> Prompt:
    """The prompt of judge ``name``, checked: its placeholders are exactly the declared ones.

    Raises ``UserError`` for an unknown judge and ``ConfigError`` when the file's placeholders differ.
    """
    spec = JUDGES.get(name)
    if spec is None:
        raise UserError(f"unknown judge {name!r} (choose from: {', '.join(JUDGES)})")
    return _PROMPTS.load(spec.prompt_file)


class JudgeInputs(BaseModel):
    """The only text a judge ever sees. Built by ``judge_inputs`` from whitelisted fields."""

    model_config = ConfigDict(frozen=True)

    contact_reason: str
    case_notes: str
    case_messages: str
    reference_guidance: str
    candidate_guidance: str
    snippets: str

    def render(self, judge: str) -> str:
        spec = JUDGES[judge]
        values = {k: getattr(self, k) for k in spec.placeholders}
        return load_prompt(judge).render(**values)


def _text_block(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value.strip() or "(none)"
    if isinstance(value, Sequence):
        lines = [str(v).strip() for v in value if str(v).strip()]
        return "\n".join(f"- {line}" for line in lines) or "(none)"
    return str(value)


def _messages_block(messages: Any) -> str:
    if not messages:
        return "(none)"
    lines = []
    for m in messages:
        if isinstance(m, Mapping):
            lines.append(f"{m.get('role', '?')}: {str(m.get('content', '')).strip()}")
        else:
            role = getattr(m, "role", "?")
            lines.append(f"{role}: {str(getattr(m, 'content', m)).strip()}")
    return "\n".join(lines)


def _get(case: Any, field: str) -> Any:
    return case.get(field) if isinstance(case, Mapping) else getattr(case, field, None)


def judge_inputs(case: Any, output: Mapping[str, Any] | None, reference: Reference) -> JudgeInputs:
    """Assemble judge inputs from a ``Case`` (or mapping), an output dict and the reference.

    Only these fields are read: the case's ``contact_reason``, ``case_notes``, ``case_messages``;
    the output's ``guidance`` and each snippet's ``source_article`` and ``text`` (verbatim article
    text, checked by the evidence contract); the reference guidance. Nothing else, so navigation-page
    text (which reaches a run only through retrieval hits and the run record) cannot leak in.
    """
    output = output or {}
    guidance = output.get("guidance") if isinstance(output.get("guidance"), str) else ""
    snips = output.get("snippets") if isinstance(output.get("snippets"), list) else []
    snippet_lines = [
        f"[{i}] ({s.get('source_article', '?')}) {str(s.get('text', '')).strip()}"
        for i, s in enumerate(snips, 1)
        if isinstance(s, Mapping)
    ]
    return JudgeInputs(
        contact_reason=_text_block(_get(case, "contact_reason")),
        case_notes=_text_block(_get(case, "case_notes")),
        case_messages=_messages_block(_get(case, "case_messages")),
        reference_guidance=reference.reference_guidance.strip() or "(none)",
        candidate_guidance=guidance.strip() or "(empty)",
        snippets="\n".join(snippet_lines) or "(no snippets)",
    )


_VERDICT_LINE = re.compile(r"^\W*verdict\W*[:\-]?\W*(accept|reject)\W*$", re.IGNORECASE)


def parse_verdict(text: str) -> Verdict | None:
    """``"accept"``/``"reject"`` from the last non-empty line (``VERDICT: accept``, markdown allowed);
    None when that line is not a verdict."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return None
    m = _VERDICT_LINE.match(lines[-1])
    return m.group(1).lower() if m else None  # type: ignore[return-value]


class JudgeVote(BaseModel):
    """One independent judge call."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict | None = Field(description="Parsed verdict, None when unparseable or failed.")
    error: str | None = Field(None, description="Why the vote failed (unparseable, provider error).")
    tail: str = Field("", description="Last 300 characters of the reply (or an external judge's reason), for audit.")
    voter: str | None = Field(None, description="Who cast an external vote (as the verdict file names them).")


class JudgeResult(BaseModel):
    """A judge's majority decision for one case."""

    model_config = ConfigDict(frozen=True)

    judge: str
    decision: bool | None = Field(description="True = accept; None when no strict majority (a failure).")
    votes: list[JudgeVote]
    split: bool = Field(description="The parseable votes disagree (single-call disagreement).")
    failure: str | None = Field(None, description="Why no decision was reached (or why the case was not judged).")

    @property
    def dissenting(self) -> int:
        """Calls whose verdict differs from the decision (failed calls count as dissent)."""
        if self.decision is None:
            return len(self.votes)
        want = "accept" if self.decision else "reject"
        return sum(1 for v in self.votes if v.verdict != want)


def _call_once(agent: Any, prompt: str, model_settings: Any) -> JudgeVote:
    from pydantic_ai.exceptions import AgentRunError, ModelAPIError

    try:
        result = agent.run_sync(prompt, model_settings=model_settings)
    except (AgentRunError, ModelAPIError, SkillragError) as exc:
        return JudgeVote(verdict=None, error=f"call failed: {type(exc).__name__}: {str(exc)[:200]}")
    text = str(result.output)
    verdict = parse_verdict(text)
    return JudgeVote(
        verdict=verdict,
        error=None if verdict else "unparseable verdict (last line is not 'VERDICT: accept|reject')",
        tail=text[-300:],
    )


def run_judge(
    judge: str,
    inputs: JudgeInputs,
    model: Any,
    *,
    calls: int = 3,
    temperature: float | None = 0.0,
    on_call: Callable[[int], None] | None = None,
) -> JudgeResult:
    """Run ``judge`` ``calls`` times on ``inputs`` and take the strict majority.

    ``model`` is a model spec for ``skillrag.models.resolve_model`` or a pydantic-ai ``Model``
    (tests pass a ``FunctionModel``). ``temperature`` None leaves the provider default.
    Never raises for a bad reply or a provider failure: those are failed votes.
    """
    if calls < 1:
        raise UserError(f"judge calls must be >= 1, got {calls}")
    from pydantic_ai.settings import ModelSettings

    prompt = inputs.render(judge)
    agent = make_agent(model, str)
    settings = ModelSettings(temperature=temperature) if temperature is not None else None
    votes = []
    for i in range(calls):
        votes.append(_call_once(agent, prompt, settings))
        if on_call:
            on_call(i)
    return decide(judge, votes)


def decide(judge: str, votes: Sequence[JudgeVote], calls: int | None = None) -> JudgeResult:
    """The strict-majority decision over ``votes`` (model calls or external votes alike).

    ``calls`` is the number of votes expected (default: ``len(votes)``); missing ones count as failed
    votes, so 2 accepts of 3 expected decide, 1 accept + 1 reject of 3 do not. A majority needs
    ``calls // 2 + 1`` equal verdicts; without one ``decision`` is None and ``failure`` says why.
    """
    votes = list(votes)
    n = max(calls or 0, len(votes))
    if n > len(votes):
        votes += [JudgeVote(verdict=None, error="missing vote")] * (n - len(votes))
    if n == 0:
        return JudgeResult(judge=judge, decision=None, votes=[], split=False, failure="no votes")
    n_acc = sum(1 for v in votes if v.verdict == "accept")
    n_rej = sum(1 for v in votes if v.verdict == "reject")
    n_bad = n - n_acc - n_rej
    need = n // 2 + 1
    decision: bool | None = True if n_acc >= need else False if n_rej >= need else None
    failure = None
    if decision is None:
        failure = f"no majority of {n}: {n_acc} accept, {n_rej} reject, {n_bad} failed"
    return JudgeResult(judge=judge, decision=decision, votes=votes, split=n_acc > 0 and n_rej > 0, failure=failure)


#: Why a case without an accepted output gets no judge call.
NOT_JUDGED = "no accepted output: not judged (counts as a reject)"


def not_judged(judge: str) -> JudgeResult:
    """The decision for a case whose run saved no conformant output: a reject with no calls spent,
    the same for model judges and external verdicts (no packet is written for such a case)."""
    return JudgeResult(judge=judge, decision=False, votes=[], split=False, failure=NOT_JUDGED)
