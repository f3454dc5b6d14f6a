"""Redis adapter: what home timeline reads need to apply follow options
(``services/follow_filters.py``): each reader's filtering follows, cached in its slot
(``ff:{r}``, a hash author -> ``reblogs|languages``, its field ``''`` the follow generation it
is valid for; ``timeline_read`` reads it with the home timeline), and the language and kind of
the posts they filter, from the posts' states (``ps:{a}``, ``timeline_publish.lua``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import orjson

from graphsvc.adapters.redis.client import Client
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register
from graphsvc.adapters.redis.timelines import HOME, by_author
from graphsvc.domain.timeline import Post, PostKind


class FollowFilterCache:
    def __init__(self, client: Client, mirror: Mirror, keep_seconds: int) -> None:
        self._redis = client
        self._mirror = mirror
        self._keep = keep_seconds
        self._put = register(client, "timeline_filters_put")

    async def cache(self, reader: str, follow_generation: str, filters: dict[str, str]) -> None:
        """Cache the reader's follow filters (author -> encoded options), unless it followed,
        unfollowed or changed a follow since they were read (its follow generation moved)."""
        keys = [self._mirror.key(HOME.filters, reader), self._mirror.key(HOME.version, reader)]
        flat = [item for pair in filters.items() for item in pair]
        await self._put(keys=keys, args=[follow_generation, self._keep, *flat])

    async def kinds(self, posts: Sequence[Post]) -> dict[str, PostKind]:
        """Each post's language and kind, from its state (one round trip; a post whose state
        is gone, past the author's cap, is a plain post)."""
        grouped = by_author(posts)
        if not grouped:
            return {}
        async with self._redis.pipeline(transaction=False) as pipe:
            for author, own in grouped.items():
                pipe.hmget(self._mirror.key("ps", author), [post.post_id for post in own])
            replies = await pipe.execute()
        states = zip(chain(*grouped.values()), chain(*replies), strict=True)
        return {p.member: PostKind.of_state(orjson.loads(raw) if raw else {}) for p, raw in states}
