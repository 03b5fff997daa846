"""Every error skillrag raises, in one tree.

    SkillragError                      root: catch this to catch everything of ours
    ├── UserError                      bad input from the person or the files they gave us
    │   ├── ConfigError                skillrag.yaml / skill.yaml invalid or unknown setting
    │   ├── WorkspaceError             not a workspace, or a workspace folder is damaged
    │   ├── MalformedSourceError       a source file cannot be parsed (names the file)
    │   │   └── MalformedSourcesError  several source files cannot be parsed (counts them, names the first)
    │   ├── InvalidIdError             an id that is not a plain identifier (e.g. ``../../etc/passwd``)
    │   ├── ArticleNotFound            a well-formed article id that the corpus does not hold
    │   ├── CaseNotFound               a case id that the case file does not hold
    │   ├── SkillNotFound              a skill name that the registry does not hold
    │   ├── EmptyInputError            an empty query, an empty corpus, nothing to do
    │   └── ReviewConflict             a review action on a run or guidance version that changed meanwhile
    ├── BackendError                   a runtime / provider failure (not the user's fault)
    │   ├── ModelError                 an LLM provider is unreachable, unauthenticated or failed
    │   ├── MissingExtraError          an optional dependency is not installed (names the extra)
    │   ├── EmbedderError              an embedding backend failed or its model file is bad
    │   ├── IndexStateError            the search index is missing, half-built or stale
    │   └── EngineError                a search engine (Milvus) is unreachable, locked or failed
    ├── ContractViolation              the evidence contract rejected an output (``reasons`` lists all)
    │   └── PageRejected               the page validator rejected a wiki page draft (``reasons`` lists all)
    └── ControlFlowError               the agent broke a rule of the loop
        ├── BudgetExceeded             a query / fetch / token / time budget ran out
        └── IllegalTransition          a state-machine transition that the machine forbids

The CLI prints ``error: <message>`` on one line for any of these and exits non-zero
(1 for ``ContractViolation``, 2 otherwise).
"""

from __future__ import annotations

__all__ = [
    "ArticleNotFound",
    "BackendError",
    "BudgetExceeded",
    "CaseNotFound",
    "ConfigError",
    "ContractViolation",
    "ControlFlowError",
    "EmbedderError",
    "EmptyInputError",
    "EngineError",
    "IllegalTransition",
    "IndexStateError",
    "InvalidIdError",
    "MalformedSourceError",
    "MalformedSourcesError",
    "MissingExtraError",
    "ModelError",
    "PageRejected",
    "ReviewConflict",
    "SkillNotFound",
    "SkillragError",
    "UserError",
    "WorkspaceError",
]


class SkillragError(Exception):
    """Root of every error skillrag raises on purpose."""


class UserError(SkillragError):
    """The input was wrong; the message says what to change."""


class ConfigError(UserError):
    """A config file (``skillrag.yaml``, ``skill.yaml``) is invalid."""


class WorkspaceError(UserError):
    """The folder is not a skillrag workspace, or part of it is damaged."""


class MalformedSourceError(UserError):
    """A source file could not be parsed. ``path`` names the file."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class MalformedSourcesError(MalformedSourceError):
    """Several source files could not be parsed. ``errors`` holds each file's error; the message
    gives their count and the first ``shown`` (``path`` and ``reason`` are the first one's)."""

    def __init__(self, errors: list[MalformedSourceError], shown: int = 3) -> None:
        self.errors = list(errors)
        self.path, self.reason = self.errors[0].path, self.errors[0].reason
        listed = "; ".join(str(e) for e in self.errors[:shown])
        more = f"; and {len(self.errors) - shown} more" if len(self.errors) > shown else ""
        UserError.__init__(self, f"{len(self.errors)} bad source files, nothing written "
                                 f"(--skip-bad ingests the rest): {listed}{more}")

    @classmethod
    def of(cls, errors: list[MalformedSourceError]) -> MalformedSourceError:
        """The one error to raise for ``errors`` (non-empty): a single file's own, else the combined one."""
        return errors[0] if len(errors) == 1 else cls(errors)


class InvalidIdError(UserError):
    """An id that is not a plain identifier."""


class ArticleNotFound(UserError):
    """The corpus holds no article with this id."""


class CaseNotFound(UserError):
    """The case file holds no case with this id."""


class SkillNotFound(UserError):
    """The skill registry holds no skill with this name."""


class EmptyInputError(UserError):
    """An empty query, corpus or case: there is nothing to work on."""


class ReviewConflict(UserError):
    """A review action refers to an output or guidance version that changed since the reviewer
    loaded it (another reviewer edited, or the case was run again): reload and decide again."""


class BackendError(SkillragError):
    """A backend or provider failed at run time."""


class ModelError(BackendError):
    """An LLM provider is unreachable, unauthenticated, or returned an error."""


class MissingExtraError(BackendError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f"{package} is not installed: pip install 'skillrag[{extra}]'")


class EmbedderError(BackendError):
    """An embedding backend failed, or its model file did not verify."""


class IndexStateError(BackendError):
    """The search index is missing, half-built, or stale: run ``skillrag index``."""


class EngineError(BackendError):
    """A search engine failed: a Milvus server unreachable, a Milvus Lite file open in another process,
    or a call the engine refused."""


class ContractViolation(SkillragError):
    """The evidence contract rejected an output. ``reasons`` lists every violation; ``subject`` names
    what was rejected (``output``)."""

    subject = "output"

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = list(reasons)
        head = self.reasons[0] if self.reasons else f"{self.subject} rejected"
        more = f" (+{len(self.reasons) - 1} more)" if len(self.reasons) > 1 else ""
        super().__init__(f"{self.subject} rejected: {head}{more}")


class PageRejected(ContractViolation):
    """The page validator rejected a wiki page draft (the agent driver's ``write-page``): the same rules
    as the llm builder's; ``reasons`` lists every one."""

    subject = "page"


class ControlFlowError(SkillragError):
    """The agent loop or a state machine refused a step."""


class BudgetExceeded(ControlFlowError):
    """A budget (queries, fetches, tokens, seconds) ran out."""


class IllegalTransition(ControlFlowError):
    """A transition the state machine does not allow (skipped, repeated or backward)."""
