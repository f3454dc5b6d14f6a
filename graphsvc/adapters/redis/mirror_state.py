"""What the mirror holds for a user, read back raw: the consistency check compares it with a
Neo4j snapshot, and tests and operators inspect it. Never on a request's path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphsvc.adapters.redis.mirror import COUNT_FIELDS, Mirror, micros
from graphsvc.domain.cursor import Position
from graphsvc.domain.model import Counts, Entry, Side


@dataclass(frozen=True, slots=True)
class MirroredUser:
    """Everything the mirror holds for one user (for consistency checks)."""

    counts: Counts | None
    lists: dict[Side, tuple[list[Entry], Position | None] | None]


class MirrorState:
    def __init__(self, mirror: Mirror) -> None:
        self._mirror = mirror

    async def dump_many(self, user_ids: Sequence[str]) -> list[MirroredUser]:
        """The raw mirrored state of many users, in one pipelined round trip."""
        async with self._mirror.client.pipeline(transaction=False) as pipe:
            for user_id in user_ids:
                pipe.hgetall(self._mirror.key("m", user_id))
                for side in Side:
                    pipe.zrange(
                        self._mirror.key(side.value, user_id), 0, -1, desc=True, withscores=True
                    )
            replies = await pipe.execute()
        return [
            self._mirrored(replies[3 * n], replies[3 * n + 1 : 3 * n + 3])
            for n in range(len(user_ids))
        ]

    @staticmethod
    def _mirrored(meta: dict[str, str], lists: list[list[tuple[str, float]]]) -> MirroredUser:
        present = all(name in meta for name in COUNT_FIELDS)
        counts = Counts(*(int(meta[name]) for name in COUNT_FIELDS)) if present else None
        state: dict[Side, tuple[list[Entry], Position | None] | None] = {}
        for side, members in zip(Side, lists, strict=True):
            bound = micros(meta.get(f"{side.value}b", "-1"))
            count = int(meta.get("fr" if side is Side.FOLLOWERS else "fg", "0"))
            lost = bound < 0 and count > 0 and not members  # served as cold, as list_state does
            if f"{side.value}s" not in meta or lost:
                state[side] = None
                continue
            boundary = Position(bound, meta.get(f"{side.value}m", "")) if bound >= 0 else None
            state[side] = ([Entry(m, micros(s)) for m, s in members], boundary)
        return MirroredUser(counts, state)
