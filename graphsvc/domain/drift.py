"""A difference between the mirror and Neo4j, as a check reports it to an operator."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Drift:
    user_id: str
    what: str
    expected: object
    found: object

    def __str__(self) -> str:
        return (
            f"{self.user_id}: {self.what}: Neo4j says {self.expected!r}, Redis has {self.found!r}"
        )
