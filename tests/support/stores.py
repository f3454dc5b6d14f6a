"""What tests do to the stores beneath the API: a write committed in Neo4j whose mirror write
never happened (a process stopped between the two), a user's raw mirror, an author's
tombstones, the work Neo4j counts for a query. Each goes through the adapters' own paths or
reads the keys they name; nothing here stands in for a store."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from graphsvc.adapters.neo4j.queries import query
from graphsvc.adapters.neo4j.relations import WriteOutcome
from graphsvc.adapters.redis.mirror_state import MirroredUser
from graphsvc.bootstrap import Services
from graphsvc.domain.edge_writes import NO_LIMIT, EdgeWrite, WriteKind
from graphsvc.domain.mutes import MuteChange
from graphsvc.workers.relay import RelayReport


async def commit_only(
    services: Services, kind: WriteKind, src: str, dst: str, *, cause: str = ""
) -> WriteOutcome:
    """An edge write committed in Neo4j as the service commits it (its outbox event too, with
    the unfollow's ``cause``), with no mirror write after it; the rules of a new follow that
    depend on settings are off."""
    (outcome,) = await services.core.neo4j.edges.commit([EdgeWrite(kind, src, dst, cause=cause)])
    return outcome


async def relay_due(services: Services, seconds: float = 120.0) -> RelayReport:
    """The relay run once over every outbox event (no grace), once no other process holds its
    lease: a worker a test killed keeps it until it runs out. A poll with a deadline."""
    deadline = time.monotonic() + seconds
    while (report := await services.background.relay.once(grace=0)).elsewhere:
        assert time.monotonic() < deadline, f"another relay held the lease for {seconds:g}s"
        await asyncio.sleep(0.5)
    return report


async def mute_commit_only(services: Services, src: str, dst: str) -> MuteChange | str:
    """A mute committed in Neo4j as the service commits it (its private outbox event too),
    with no mirror write after it; no cap."""
    return await services.core.neo4j.mutes.mute(
        src, dst, seconds=None, notifications=False, most=NO_LIMIT
    )


async def mirrored(services: Services, user_id: str) -> MirroredUser:
    """A user's mirror in Redis, raw."""
    (user,) = await services.core.redis.mirror_state.dump_many([user_id])
    return user


async def tombstones(services: Services, author: str) -> int:
    """How many deleted posts of the author Redis remembers."""
    author_posts = services.core.redis.author_posts
    return int(await services.core.redis.client.zcard(author_posts.key("pd", author)))


async def apply_events(services: Services) -> int:
    """The event stream's delivered entries applied to the timelines now, as the worker's
    consumer applies them; how many."""
    applied = 0
    while n := await services.background.timeline_events.consume():
        applied += n
    return applied


async def apply_list_events(services: Services) -> int:
    """The event stream's delivered entries applied to the lists now, as the worker's list
    consumer applies them; how many."""
    applied = 0
    while n := await services.background.list_events.consume():
        applied += n
    return applied


async def erasure_stopped_after_the_node(services: Services, user_id: str) -> None:
    """What an erasure that stopped after deleting the user's node leaves in Redis: the user's
    timeline closed, as the erasure's first step closes it, and never forgotten."""
    await services.core.redis.author_posts.close(user_id)


def hits(plan: dict[str, Any]) -> int:
    return plan.get("dbHits", 0) + sum(hits(child) for child in plan.get("children", []))


async def db_hits(services: Services, name: str, params: dict[str, Any]) -> int:
    """The db hits Neo4j counts for one run of a named query (PROFILE)."""
    store = services.core.neo4j.store
    async with store.driver.session(database=store.database) as session:
        result = await session.run("PROFILE " + query(name), params)
        summary = await result.consume()
    assert summary.profile is not None
    return hits(summary.profile)
