"""The follow options that keep posts out of a home timeline: a follower who turned an author's
reblogs off, or keeps only some of its languages, reads the author's other posts alone
(``domain/follow_options.py``), whether they were pushed into its home timeline or pulled on
read.

Applied on read, to each round's merged posts: a change of options holds from the next read on,
for the posts already pushed too, and a fan-out never asks a follower's options. The reader's
filtering follows are cached in Redis (read in the same round trip as the home timeline, tagged
with the reader's follow generation, which every follow write of the reader moves) and built
from Neo4j when stale; only the posts of those authors are looked up, for their language and
kind. A reader with no such follow pays nothing past the cache's read.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.redis.follow_filters import FollowFilterCache
from graphsvc.adapters.redis.timelines import TimelineRead
from graphsvc.domain.follow_options import FollowOptions, decode_filter, encode_filter
from graphsvc.domain.timeline import Post


class FollowFilters:
    def __init__(self, edges: EdgeStore, cache: FollowFilterCache) -> None:
        self._edges = edges
        self._cache = cache

    async def admitted(self, reader: str, read: TimelineRead, posts: list[Post]) -> list[Post]:
        """The posts the reader's follow options let into its home timeline."""
        if not posts:
            return posts
        filters = await self._filters(reader, read)
        filtered = [post for post in posts if post.author in filters]
        if not filtered:
            return posts
        kinds = await self._cache.kinds(filtered)
        return [
            post
            for post in posts
            if post.author not in filters or filters[post.author].admits(*kinds[post.member])
        ]

    async def _filters(self, reader: str, read: TimelineRead) -> dict[str, FollowOptions]:
        if read.filters is not None:
            return {author: decode_filter(value) for author, value in read.filters.items()}
        filters = await self._edges.follow_filters(reader)
        encoded = {author: encode_filter(options) for author, options in filters.items()}
        await self._cache.cache(reader, read.follow_generation, encoded)
        return filters
