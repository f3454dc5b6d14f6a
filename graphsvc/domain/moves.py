"""An account move as a plain value: where it stands (``services/moves.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MoveState:
    moved_to: str | None  # None: the account never moved
    moved_at: int | None  # µs
    moving: bool  # its followers are still being moved
    moved: int  # followers moved so far


NOT_MOVED = MoveState(None, None, False, 0)
