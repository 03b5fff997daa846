"""The llm reasoner: a chat model performs the extraction and judgement steps of the machine,
each as one pydantic-ai ``Agent`` run with a structured ``output_type``.

Code validates each step: the subject class must be taken from the question (an output
validator sends the model back with the reason, up to ``retries`` times); candidates, evidence
and claims are then checked by the runner (``gate``, ``verify``) and refused when they cannot be
verified in the source text. The model never moves the state machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from skillrag.corpus.model import Article
from skillrag.errors import ModelError
from skillrag.evidence._prompts import render
from skillrag.evidence.model import SubjectClass
from skillrag.evidence.steps import (
    CandidateInput,
    CandidateProposal,
    ConclusionInput,
    ConclusionProposal,
    EvidenceInput,
    EvidenceProposal,
    StepInput,
)

__all__ = ["CandidateList", "EvidenceList", "LLMReasoner"]

#: The structured output of one model step.
_Out = TypeVar("_Out", bound=BaseModel)


class CandidateList(BaseModel):
    """Structured output of the candidate step."""

    model_config = ConfigDict(extra="forbid")
    candidates: list[CandidateProposal] = Field(default_factory=list)


class EvidenceList(BaseModel):
    """Structured output of the evidence step."""

    model_config = ConfigDict(extra="forbid")
    evidence: list[EvidenceProposal] = Field(default_factory=list)


def _articles_block(articles: Sequence[Article], max_chars: int) -> str:
    parts = []
    for a in articles:
        body = a.body if len(a.body) <= max_chars else a.body[:max_chars] + "\n[... cut ...]"
        parts.append(f'<article id="{a.id}">\n# {a.title}\n{body}\n</article>')
    return "\n\n".join(parts) or "(none)"


class LLMReasoner:
    """Reasoner backed by a pydantic-ai ``Model`` (``skillrag.models.resolve_model``).

    ``manual`` (the skill's SKILL.md body) goes into the system prompt. At most
    ``max_pool_articles`` articles of up to ``max_article_chars`` characters each are shown per
    step. ``tokens`` sums the tokens the model reported, those of failed steps included. Provider failures and a model that
    never returns a valid structure raise ``ModelError``.
    """

    name = "llm"

    def __init__(
        self,
        model: Any,
        *,
        model_id: str | None = None,
        manual: str = "",
        retries: int = 2,
        max_pool_articles: int = 8,
        max_article_chars: int = 6000,
    ) -> None:
        self.model = model
        self.model_id = model_id or getattr(model, "model_name", None) or "model"
        self.system = render("system", manual=manual.strip() or "(no manual)")
        self.retries = retries
        self.max_pool_articles = max_pool_articles
        self.max_article_chars = max_article_chars
        self.tokens = 0

    def _run(self, output_type: type[_Out], prompt: str, validator: Callable[[_Out], _Out] | None = None) -> _Out:
        from pydantic_ai.exceptions import UnexpectedModelBehavior

        from skillrag.models import counted_usage, make_agent, model_errors

        agent = make_agent(self.model, output_type, system_prompt=self.system, retries=self.retries)
        if validator is not None:
            agent.output_validator(validator)
        try:
            # the tokens of a step that fails (no valid structure, a provider error) are spent too
            with model_errors(self.model_id), counted_usage(self._add_tokens) as usage:
                result = agent.run_sync(prompt, usage=usage)
        except UnexpectedModelBehavior as exc:
            raise ModelError(
                f"{self.model_id}: no valid {output_type.__name__} after "
                f"{self.retries + 1} tries ({str(exc).splitlines()[0][:200]})"
            ) from None
        output: _Out = result.output
        return output

    def _add_tokens(self, usage: Any) -> None:
        self.tokens += int(usage.total_tokens or 0)

    def identify_subject(self, question: str) -> SubjectClass:
        from pydantic_ai import ModelRetry

        from skillrag.evidence.run import check_subject

        def validate(out: SubjectClass) -> SubjectClass:
            problems = check_subject(question, out)
            if problems:
                raise ModelRetry(
                    "; ".join(problems) + ". Take the name and parent entity from the question's words."
                )
            return out

        return self._run(SubjectClass, render("subject", question=question), validate)

    def _step(
        self,
        output_type: type[_Out],
        prompt: str,
        step: StepInput,
        validator: Callable[[_Out], _Out] | None = None,
        **fields: str,
    ) -> _Out:
        """One step after the subject class: prompt file ``prompt`` filled with the step's question, its
        subject class (JSON) and ``fields``, run for ``output_type``."""
        text = render(prompt, question=step.question, subject=step.subject.model_dump_json(), **fields)
        return self._run(output_type, text, validator)

    def propose_candidates(self, step: CandidateInput) -> list[CandidateProposal]:
        shown = list(step.pool)[: self.max_pool_articles]
        if not shown:
            return []
        articles = _articles_block(shown, self.max_article_chars)
        return self._step(CandidateList, "candidates", step, articles=articles).candidates

    def propose_evidence(self, step: EvidenceInput) -> list[EvidenceProposal]:
        return self._step(
            EvidenceList,
            "evidence",
            step,
            candidates=json.dumps(list(step.candidate_names), ensure_ascii=False),
            articles=_articles_block(step.articles, self.max_article_chars),
        ).evidence

    def conclude(self, step: ConclusionInput) -> ConclusionProposal:
        from pydantic_ai import ModelRetry

        evidence = step.evidence

        def validate(out: ConclusionProposal) -> ConclusionProposal:
            bad = [c.evidence_index for c in out.claims if c.evidence_index >= len(evidence)]
            if bad:
                raise ModelRetry(f"claims cite evidence {bad}, but only 0..{len(evidence) - 1} exist")
            return out

        block = "\n".join(
            f"[{i}] ({u.article_id}, {u.section or 'no section'}) {u.text}" for i, u in enumerate(evidence)
        )
        return self._step(ConclusionProposal, "conclude", step, validate, evidence=block)
