"""The evidence-first state machine: a strict, forward-only path with a hard subject gate.

    INIT → SUBJECT_CLASS_IDENTIFIED → CANDIDATE_SUBJECT_DISCOVERED ─┬→ SUBJECT_NOT_FOUND   (terminal)
                                                                    └→ EVIDENCE_RETRIEVAL → EVIDENCE_VERIFIED
                                                                                         → CONCLUDED (terminal)

Every transition is checked: a skipped, repeated or backward step, or any step out of a terminal
state, raises ``IllegalTransition``. The machine keeps the path it took with UTC timestamps.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from skillrag.errors import IllegalTransition

__all__ = ["ALLOWED", "ORDER", "TERMINAL", "State", "StateMachine", "Transition"]


class State(StrEnum):
    """The seven states of an evidence-first run."""

    INIT = "INIT"
    SUBJECT_CLASS_IDENTIFIED = "SUBJECT_CLASS_IDENTIFIED"
    CANDIDATE_SUBJECT_DISCOVERED = "CANDIDATE_SUBJECT_DISCOVERED"
    SUBJECT_NOT_FOUND = "SUBJECT_NOT_FOUND"
    EVIDENCE_RETRIEVAL = "EVIDENCE_RETRIEVAL"
    EVIDENCE_VERIFIED = "EVIDENCE_VERIFIED"
    CONCLUDED = "CONCLUDED"


#: The only transitions the machine accepts.
ALLOWED: dict[State, frozenset[State]] = {
    State.INIT: frozenset({State.SUBJECT_CLASS_IDENTIFIED}),
    State.SUBJECT_CLASS_IDENTIFIED: frozenset({State.CANDIDATE_SUBJECT_DISCOVERED}),
    State.CANDIDATE_SUBJECT_DISCOVERED: frozenset({State.SUBJECT_NOT_FOUND, State.EVIDENCE_RETRIEVAL}),
    State.SUBJECT_NOT_FOUND: frozenset(),
    State.EVIDENCE_RETRIEVAL: frozenset({State.EVIDENCE_VERIFIED}),
    State.EVIDENCE_VERIFIED: frozenset({State.CONCLUDED}),
    State.CONCLUDED: frozenset(),
}

TERMINAL: frozenset[State] = frozenset({State.SUBJECT_NOT_FOUND, State.CONCLUDED})

#: Depth of each state along the path (both terminal branches sit after the gate).
ORDER: dict[State, int] = {
    State.INIT: 0,
    State.SUBJECT_CLASS_IDENTIFIED: 1,
    State.CANDIDATE_SUBJECT_DISCOVERED: 2,
    State.SUBJECT_NOT_FOUND: 3,
    State.EVIDENCE_RETRIEVAL: 3,
    State.EVIDENCE_VERIFIED: 4,
    State.CONCLUDED: 5,
}


class Transition(BaseModel):
    """One entered state: where from, when (UTC), and a short note of why."""

    model_config = ConfigDict(frozen=True)

    state: State
    from_state: State | None = Field(None, description="None for the initial INIT entry.")
    at: datetime = Field(description="UTC time the state was entered.")
    note: str = ""


def _kind(current: State, target: State) -> str:
    if current in TERMINAL:
        return f"{current} is terminal"
    if target == current:
        return "repeated"
    if ORDER[target] <= ORDER[current]:
        return "backward"
    if ORDER[target] > ORDER[current] + 1:
        return "skipped"
    return "not an allowed branch"


class StateMachine:
    """A forward-only run of the evidence-first machine, starting in ``INIT``.

    ``advance(target)`` enters ``target`` or raises ``IllegalTransition`` naming the kind of
    violation (skipped, repeated, backward, out of a terminal state). ``require(state)`` guards a
    step that may only run in ``state``.
    """

    def __init__(self, *, clock: Callable[[], datetime] | None = None) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._path: list[Transition] = [
            Transition(state=State.INIT, at=self._clock(), note="question received")
        ]

    @property
    def state(self) -> State:
        return self._path[-1].state

    @property
    def path(self) -> list[Transition]:
        """Every state entered so far, in order (a copy)."""
        return list(self._path)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    def advance(self, target: State | str, note: str = "") -> Transition:
        """Enter ``target``; raises ``IllegalTransition`` unless ``ALLOWED[state]`` holds it."""
        target = State(target)
        current = self.state
        if target not in ALLOWED[current]:
            raise IllegalTransition(f"illegal transition {current} → {target} ({_kind(current, target)})")
        step = Transition(state=target, from_state=current, at=self._clock(), note=note)
        self._path.append(step)
        return step

    def require(self, state: State, action: str) -> None:
        """Raise ``IllegalTransition`` unless the machine is in ``state`` (``action`` names the step)."""
        if self.state != state:
            raise IllegalTransition(f"{action} may only run in {state}, not in {self.state}")
