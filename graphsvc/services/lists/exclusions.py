"""Exclusive lists: the members of a reader's exclusive lists are read in those lists'
timelines, and their posts leave the reader's home timeline (as Mastodon's exclusive lists).

The home timeline asks on every round which of its authors are excluded; the answer is cached
in Redis (``adapters/redis/exclusions.py``) and built from Neo4j when missing. Every change of
the reader's lists invalidates it first thing after Neo4j committed, and the cache lives
TIMELINE_CACHE_SECONDS at most, so an invalidation lost to a Redis outage is healed by then.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.exclusions import ExclusionCache

log = logging.getLogger(__name__)


class Exclusions:
    def __init__(self, store: ListStore, cache: ExclusionCache) -> None:
        self._store = store
        self._cache = cache

    async def excluded_among(self, reader: str, authors: Sequence[str]) -> set[str]:
        """Which of these authors the reader's exclusive lists hold."""
        if not authors:
            return set()
        cached = await self._cache.among(reader, authors)
        if cached is not None:
            return cached
        version = await self._cache.version(reader)
        members = await self._store.exclusive_members(reader)
        await self._cache.install(reader, version, members)
        return set(members) & set(authors)

    async def changed(self, owner: str) -> None:
        """One of the owner's lists changed (its members, whether it is exclusive, or it
        went): the next read builds the exclusions again. A lost invalidation lasts until the
        cache expires."""
        try:
            await self._cache.invalidate(owner)
        except REDIS_DOWN as exc:
            log.warning("exclusions of %r not invalidated (%s)", owner, exc)
