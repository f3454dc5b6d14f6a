"""The ranker's model registry in Neo4j: the stored models and the pointer to the served one
(and the A/B split's challenger, or the model on trial), read by every API process and moved
by the worker's training and the operator's commands (the queries ``ranker_models/*``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore


@dataclass(frozen=True, slots=True)
class Serving:
    """The pointer as an API process reads it (0: none)."""

    served: int
    challenger: int
    share: float
    # when each was stored (0: none or not read): a version with another time is another
    # model (a registry made anew numbers from 1 again)
    served_created: int = 0
    challenger_created: int = 0


@dataclass(frozen=True, slots=True)
class RegistryState:
    """The pointer, the served model and the last attempt (times in µs)."""

    serving: Serving
    promoted_at: int | None
    body: str | None  # the served model (JSON text)
    metrics: str | None
    attempt_at: int | None
    attempt_outcome: str | None
    attempt_why: str | None
    attempt_version: int | None
    attempt_edges: int | None
    served_why: str | None = None  # why the served model is served
    trial_at: int | None = None  # when the challenger's trial began (None: no trial runs)
    trial_base: str | None = None  # JSON text: the served model's online counts then


@dataclass(frozen=True, slots=True)
class StoredModel:
    version: int
    created: int  # µs
    status: str
    why: str
    edges: int | None
    metrics: str | None  # JSON text


@dataclass(frozen=True, slots=True)
class NewModel:
    """A trained model to store: promoted when ``promote`` and ``expected`` is still served."""

    body: str
    metrics: str
    created: int  # µs
    edges: int
    promote: bool
    expected: int
    why: str
    trial: float = 0.0  # the share of users it is tried on first (0: served to all at once)
    trial_base: str = "{}"  # JSON text: the served model's online counts as the trial begins


class RankerModelStore:
    def __init__(self, store: Neo4jStore) -> None:
        self._store = store

    async def serving(self, name: str) -> Serving:
        (row,) = await self._store.read("ranker_models/serving", {"name": name}, fresh=True)
        return Serving(
            int(row["served"]),
            int(row["challenger"]),
            float(row["share"]),
            int(row["served_created"]),
            int(row["challenger_created"]),
        )

    async def bodies(self, name: str, versions: Sequence[int]) -> dict[int, str]:
        params = {"name": name, "versions": list(versions)}
        rows = await self._store.read("ranker_models/bodies", params, fresh=True)
        return {int(row["version"]): row["body"] for row in rows}

    async def state(self, name: str) -> RegistryState:
        (row,) = await self._store.read("ranker_models/state", {"name": name}, fresh=True)
        serving = Serving(int(row["served"]), int(row["challenger"]), float(row["share"]))
        return RegistryState(
            serving,
            _int(row["promoted_at"]),
            row["body"],
            row["metrics"],
            _int(row["attempt_at"]),
            row["attempt_outcome"],
            row["attempt_why"],
            _int(row["attempt_version"]),
            _int(row["attempt_edges"]),
            row["served_why"],
            _int(row["trial_at"]),
            row["trial_base"],
        )

    async def save(self, name: str, model: NewModel) -> tuple[int, bool]:
        """Store the model (and promote it, as ``model`` says, in the same transaction):
        (its version, whether it is now served)."""
        params = {
            "name": name,
            "body": model.body,
            "metrics": model.metrics,
            "created": model.created,
            "edges": model.edges,
            "promote": model.promote,
            "expected": model.expected,
            "why": model.why,
            "stale": "another model was promoted while this one trained",
            "trial": model.trial,
            "trial_base": model.trial_base,
        }
        (row,) = await self._store.write("ranker_models/save", params)
        return int(row["version"]), bool(row["promoted"])

    async def fail(self, name: str, at: int, why: str, edges: int | None) -> None:
        params = {"name": name, "at": at, "why": why, "edges": edges}
        await self._store.write("ranker_models/fail", params)

    async def promote(self, name: str, version: int, at: int, why: str) -> tuple[str | None, int]:
        """(the rule that refused it or None, the version served before)."""
        params = {"name": name, "version": version, "at": at, "why": why}
        (row,) = await self._store.write("ranker_models/promote", params)
        return row["refused"], int(row["previous"])

    async def end_trial(
        self, name: str, version: int, trial_at: int, promote: bool, why: str
    ) -> bool:
        """Serve the challenger on trial to everyone (``promote``) or roll it back; False when
        that trial no longer runs."""
        params = {
            "name": name,
            "version": version,
            "trial_at": trial_at,
            "promote": promote,
            "at": time.time_ns() // 1_000,
            "why": why,
        }
        (row,) = await self._store.write("ranker_models/end_trial", params)
        return bool(row["ended"])

    async def split(self, name: str, version: int, share: float) -> str | None:
        """The rule that refused the split, or None."""
        params = {"name": name, "version": version, "share": share}
        (row,) = await self._store.write("ranker_models/split", params)
        return row["refused"]

    async def split_off(self, name: str) -> int:
        """The challenger there was (0: none)."""
        (row,) = await self._store.write("ranker_models/split_off", {"name": name})
        return int(row["challenger"])

    async def metrics(self, name: str, versions: Sequence[int]) -> dict[int, str]:
        """The stored metrics (JSON text) of these versions, by version."""
        params = {"name": name, "versions": list(versions)}
        rows = await self._store.read("ranker_models/metrics", params)
        return {int(row["version"]): row["metrics"] for row in rows}

    async def recent(self, name: str, limit: int) -> list[StoredModel]:
        params = {"name": name, "limit": limit}
        rows = await self._store.read("ranker_models/recent", params, fresh=True)
        return [
            StoredModel(
                int(row["version"]),
                int(row["created"]),
                row["status"],
                row["why"],
                _int(row["edges"]),
                row["metrics"],
            )
            for row in rows
        ]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
