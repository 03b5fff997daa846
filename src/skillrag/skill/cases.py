"""Support cases: the agent-facing ``Case``, the evaluation-only ``GroundTruth``, and ``CaseFile``.

A case file is JSONL, one object per line::

    {"case_id": "c1", "contact_reason": "...", "contact_reason_path": ["cards", "lost"],
     "case_notes": ["..."], "case_messages": [{"role": "customer", "content": "..."}],  # or "text"
     "as_of": "2025-09-01",
     "ground_truth": {"reference_guidance": "...", "required_documents": ["..."],
                      "expected_tools": ["..."], "expected_actions": [{...}], "extra": {...}},
     "source": "tau2-telecom", "source_id": "[mobile_data_issue]..."}

``source`` / ``source_id`` (where an imported case came from, and its id there), ``as_of_source``
(where an importer took ``as_of`` from) and
``ground_truth.extra`` (any further ground truth of the source benchmark: ABCD's subflow, tau2's
simulator instructions) are optional and, like the rest of the ground truth, never agent-facing.

``CaseFile.load`` returns a ``Case``, a type with **no field** for ground truth (and
``extra="forbid"``, so one cannot be smuggled in). Ground truth is only reachable through
``CaseFile.ground_truth``, which the evaluation package calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, computed_field

from skillrag.corpus import check_id
from skillrag.errors import CaseNotFound, EmptyInputError, InvalidIdError, MalformedSourceError

__all__ = ["AGENT_FIELDS", "Case", "CaseFile", "CaseRecord", "GroundTruth", "Message", "write_cases"]


class Message(BaseModel):
    """One turn of the customer–specialist transcript: ``{"role": ..., "content": ...}``; ``text`` is read as
    ``content`` (``{"role": ..., "text": ...}``), and it is always written back as ``content``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str = Field(description="Who spoke: `customer`, `agent`, `system`, ...")
    content: str = Field(validation_alias=AliasChoices("content", "text"),
                         description="What was said (read from `content`, or `text`).")


class Case(BaseModel):
    """What the agent may see of a case. Has no ground-truth field, by construction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case_id: str
    contact_reason: str
    contact_reason_path: list[str] = Field(default_factory=list, description="Taxonomy path, root first.")
    case_notes: list[str] = Field(default_factory=list, description="Internal specialist notes, oldest first.")
    case_messages: list[Message] = Field(default_factory=list, description="Transcript, oldest first.")
    as_of: date | None = Field(
        None, description="Reference date of the case (ISO): offer windows and deadlines are judged against it. "
        "`load_case` fills in the session's date (the day it started) when the case has none.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_messages(self) -> int:
        return len(self.case_messages)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_notes(self) -> int:
        return len(self.case_notes)


#: The keys of ``Case.model_dump()``: everything an agent-facing call may return about a case.
AGENT_FIELDS = ("case_id", "contact_reason", "contact_reason_path", "case_notes", "case_messages", "as_of",
                "n_messages", "n_notes")


class GroundTruth(BaseModel):
    """The reference for one case. Evaluation only; never passed to a tool or a harness."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case_id: str
    reference_guidance: str = ""
    required_documents: list[str] = Field(default_factory=list, description="Article ids the case needs.")
    expected_tools: list[str] = Field(default_factory=list, description="Tool names a resolution calls.")
    expected_actions: list[dict[str, Any]] = Field(
        default_factory=list, description="Expected actions (name, arguments, requestor), as in tau2-bench."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Further ground truth of the source benchmark (custom fields)."
    )


class _GroundTruthBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reference_guidance: str = ""
    required_documents: list[str] = Field(default_factory=list)
    expected_tools: list[str] = Field(default_factory=list)
    expected_actions: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


class CaseRecord(BaseModel):
    """One line of a case file: the case fields plus an optional ``ground_truth`` object."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    contact_reason: str
    contact_reason_path: list[str] = Field(default_factory=list)
    case_notes: list[str] = Field(default_factory=list)
    case_messages: list[Message] = Field(default_factory=list)
    as_of: date | None = Field(None, description="Reference date of the case (ISO), if it has one.")
    n_messages: int | None = Field(None, description="Ignored on read (recomputed).")
    n_notes: int | None = Field(None, description="Ignored on read (recomputed).")
    ground_truth: _GroundTruthBody | None = None
    source: str | None = Field(None, description="Where the case was imported from (e.g. `tau2-telecom`).")
    source_id: str | None = Field(None, description="The case's id in its source, when it differs or was mapped.")
    as_of_source: str | None = Field(
        None, description="Where `as_of` came from, when an importer set it (e.g. the task's `time_verified`, "
        "`--as-of`, the clock the file's other tasks state). Never agent-facing.")

    def case(self) -> Case:
        return Case(
            case_id=self.case_id,
            contact_reason=self.contact_reason,
            contact_reason_path=list(self.contact_reason_path),
            case_notes=list(self.case_notes),
            case_messages=list(self.case_messages),
            as_of=self.as_of,
        )

    def truth(self) -> GroundTruth:
        gt = self.ground_truth or _GroundTruthBody()
        return GroundTruth(case_id=self.case_id, **gt.model_dump())


class CaseFile:
    """A JSONL case file, read once and indexed by ``case_id``.

    Raises ``MalformedSourceError`` (naming the file and line) for a line that is not JSON or
    not a case, or for a repeated ``case_id``; ``EmptyInputError`` if the file holds no case.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise MalformedSourceError(self.path, "no such case file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise MalformedSourceError(self.path, f"cannot read ({exc})") from None
        self._records: dict[str, CaseRecord] = {}
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = CaseRecord.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise MalformedSourceError(self.path, f"line {lineno}: not JSON ({exc.msg})") from None
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "(line)"
                raise MalformedSourceError(self.path, f"line {lineno}: {where}: {err['msg']}") from None
            try:
                check_id(rec.case_id, "case")
            except InvalidIdError as exc:
                raise MalformedSourceError(self.path, f"line {lineno}: {exc}") from None
            if rec.case_id in self._records:
                raise MalformedSourceError(self.path, f"line {lineno}: case_id {rec.case_id!r} repeated")
            self._records[rec.case_id] = rec
        if not self._records:
            raise EmptyInputError(f"{self.path}: holds no cases")

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._records

    def ids(self) -> list[str]:
        """Case ids in file order."""
        return list(self._records)

    def _record(self, case_id: str) -> CaseRecord:
        try:
            return self._records[case_id]
        except KeyError:
            raise CaseNotFound(f"{self.path.name}: no case with id {case_id!r}") from None

    def load(self, case_id: str) -> Case:
        """The agent-facing case (no ground truth); raises ``CaseNotFound``."""
        return self._record(case_id).case()

    def cases(self) -> Iterator[Case]:
        """Every case, agent-facing, in file order."""
        for rec in self._records.values():
            yield rec.case()

    def ground_truth(self, case_id: str) -> GroundTruth:
        """The reference for one case (empty fields when the file has none). Evaluation only."""
        return self._record(case_id).truth()

    def has_ground_truth(self, case_id: str) -> bool:
        return self._record(case_id).ground_truth is not None


def write_cases(path: str | Path, records: list[CaseRecord]) -> int:
    """Write ``records`` as JSONL to ``path`` atomically; returns the number written."""
    from skillrag.workspace import atomic_write_text

    lines = [json.dumps(r.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for r in records]
    atomic_write_text(Path(path), "".join(line + "\n" for line in lines))
    return len(lines)
