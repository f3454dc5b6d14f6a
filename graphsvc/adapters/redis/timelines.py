"""Redis adapter: home timelines (authors' posts, home timelines, modes, and the durable timeline
job queue).

Per author ``a`` and reader ``r`` (each user's keys carry its ``{user}`` tag, the slot of its
mirror keys, so every script touches one slot and runs unchanged on Redis Cluster):

- ``<prefix>po:{a}``  posts: the author's newest TIMELINE_AUTHOR_CAP posts (member ``a|post``)
- ``<prefix>ps:{a}``  hash post id -> its state (JSON: at, mode, state, fan-out progress)
- ``<prefix>fm:{a}``  hash: the author's mode (push, pull, draining; erased while the author
  is being erased)
- ``<prefix>pd:{a}``  tombstones of the author's deleted posts: post id -> deletion time
  (seconds); see ``AuthorPosts.tombstone`` for how long and how many are kept
- ``<prefix>in:{r}``  home timeline: the newest TIMELINE_READER_CAP pushed posts, score = post time
  (µs)
- ``<prefix>rd:{r}``  the reader is active while this exists (TIMELINE_ACTIVE_DAYS after a read);
  ``rb:{r}`` while its home timeline's rebuild is not done
- ``<prefix>fc:{r}``  cached list of the pulled authors the reader follows; ``fv:{r}`` the
  reader's follow generation, which every follow or unfollow of the reader moves

and, in the ``{feed}`` slot: ``pulled`` (authors readers pull, a set), ``gen`` (moved by every
switch of an author, so cached lists are recomputed), ``jobs`` (the durable queue of timeline
jobs: job -> when it is due), ``jobpos`` (each job's position in its walk of followers) and
``wake`` (a serving process's nudge to a waiting worker).

HomeTimelines are small sorted sets: with ``zset-max-listpack-entries`` above TIMELINE_READER_CAP
(the local servers set 1024) Redis keeps them as listpacks, a fraction of the memory a full home
timeline would take as a skiplist (docs/performance.md has the bytes per entry).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from graphsvc.adapters.redis.client import (
    Batch,
    Client,
    Command,
    is_cluster,
    queued,
    script_groups,
)
from graphsvc.adapters.redis.mirror import Mirror
from graphsvc.adapters.redis.scripts import register, run_many
from graphsvc.adapters.redis.statuses import StatusesMissing, StatusSet
from graphsvc.domain.timeline import PLAIN, Post, PostKind, author_of
from graphsvc.settings import RedisSettings, TimelineSettings

READERS_PER_CALL = 500  # readers per push script on a single Redis


@dataclass(frozen=True, slots=True)
class TimelineKeys:
    """The kinds of key one kind of timeline keeps per owner (a reader, a list), in the
    owner's slot: the timeline, its activity mark, its cached pulled authors and their
    version, its rebuild mark, and the following list and meta the read's follow filter
    checks (a list's never exist: a list's read filters its members itself), and the cached
    follow options that keep posts out of the timeline (a list's none: they are the home
    timeline's)."""

    timeline: str
    mark: str
    cache: str
    version: str
    rebuild: str
    following: str
    meta: str
    filters: str  # the owner's follow options that filter posts, tagged with its version


HOME = TimelineKeys("in", "rd", "fc", "fv", "rb", "g", "m", "ff")
LIST = TimelineKeys("lt", "lr", "lc", "lv", "lb", "lg", "lm", "lf")


@dataclass(frozen=True, slots=True)
class TimelineRead:
    """What ``timeline_read.lua`` found: the home timeline's posts after the position, and the
    cache."""

    rebuild: bool
    following_complete: bool = False
    exhausted: bool = True
    cache_generation: str | None = None  # None: no valid cached list of pulled authors
    generation: str = "0"  # the switches' generation now (a cache of another one is stale)
    follow_generation: str = "0"  # the reader's, now (what a list computed next is tagged)
    pulled: tuple[str, ...] = ()
    posts: tuple[Post, ...] = ()
    filters: dict[str, str] | None = None  # the cached follow filters, None when stale


@dataclass(frozen=True, slots=True)
class Published:
    status: str  # counts, enter_pull, conflict, exists, published, erased
    mode: str
    extra: str
    deleted: bool = False  # the post id has a tombstone (checked in the same round trip)
    rings: bool = False  # a new post whose ringing job must run (its author may have ringers)


def timeline_key(redis: RedisSettings, name: str) -> str:
    """A key of the ``{feed}`` slot, which every user's timeline shares (the stored key kept
    its first name, so queued jobs survive an upgrade)."""
    return f"{redis.redis_prefix}{{feed}}:{name}"


class AuthorPosts:
    """The author side: posts, post states, modes, tombstones."""

    def __init__(
        self,
        client: Client,
        mirror: Mirror,
        statuses: StatusSet,
        redis: RedisSettings,
        settings: TimelineSettings,
    ) -> None:
        self._redis = client
        self._mirror = mirror
        self._statuses = statuses
        self._settings = settings
        self._publish = register(client, "timeline_publish")
        self._progress = register(client, "timeline_progress")
        self._delete = register(client, "timeline_delete")
        self._finish_drain = register(client, "timeline_finish_drain")
        self._close = register(client, "timeline_close")
        self._reopen = register(client, "timeline_reopen")

    def key(self, kind: str, user_id: str) -> str:
        return self._mirror.key(kind, user_id)  # the user's slot, as its mirror keys

    async def publish(
        self,
        post: Post,
        post_id: str,
        *,
        switch: str = "",
        followers: int | None = None,
        kind: PostKind = PLAIN,
    ) -> Published:
        s = self._settings
        author = post.author
        keys = [self.key(k, author) for k in ("po", "ps", "fm")] + [self._mirror.key("m", author)]
        enter = s.timeline_celebrity_followers
        args = [
            post_id,
            post.at,
            post.member,
            s.timeline_author_cap,
            enter,
            enter * s.timeline_hysteresis,
            switch,
            "" if followers is None else followers,
            kind.language or "",
            "1" if kind.reblog else "",
        ]
        batch = Batch(self._redis, resend_missing=True)
        batch.script(self._publish, keys, args)
        batch.call(lambda pipe: pipe.zscore(self.key("pd", author), post_id))
        (status, mode, extra, *rings), tombstone = await batch.execute()
        return Published(status, mode, extra, tombstone is not None, rings == ["1"])

    async def state(self, author: str, post_id: str) -> dict[str, Any] | None:
        raw = await self._redis.hget(self.key("ps", author), post_id)
        return orjson.loads(raw) if raw else None

    async def progress(
        self, author: str, post_id: str, state: str, followers: int, reached: int
    ) -> bool:
        """Add a fan-out step's work to the post's state; False when the post is deleted."""
        args = [post_id, state, followers, reached]
        return bool(await self._progress(keys=[self.key("ps", author)], args=args))

    async def tombstone(self, author: str, post_id: str) -> None:
        """Remember a deleted post: reads hide its copies at once, and its id cannot be
        published again.

        Policy: an author's tombstones live in the author's own key (its slot), each for
        TIMELINE_TOMBSTONE_DAYS, at most TIMELINE_TOMBSTONES_MAX of them: past that, the oldest
        deletions are forgotten first (their removal from home timelines finished long before, and
        their ids may then be published again as new posts). The key expires
        TIMELINE_TOMBSTONE_DAYS after the author's last deletion, so what one key can make Redis
        hold is bounded per author and in time."""
        now = time.time()
        keep = self._settings.timeline_tombstone_days * 86_400
        key = self.key("pd", author)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {post_id: now})
            pipe.zremrangebyscore(key, "-inf", now - keep)
            pipe.zremrangebyrank(key, 0, -self._settings.timeline_tombstones_max - 1)
            pipe.expire(key, max(1, round(keep)))
            await pipe.execute()

    async def deleted_among(self, members: Sequence[str]) -> set[str]:
        """Which of these posts (``author|post`` members, any authors) are deleted."""
        if not members:
            return set()
        async with self._redis.pipeline(transaction=False) as pipe:
            by_author = self._queue_deleted(pipe, members)
            replies = await pipe.execute()
        return _deleted(by_author, replies)

    def _queue_deleted(self, pipe: Any, members: Sequence[str]) -> dict[str, list[Post]]:
        """Queue one tombstone lookup per author of ``members``; the members by author."""
        grouped = by_author(Post(0, member) for member in dict.fromkeys(members))
        for author, posts in grouped.items():
            pipe.zmscore(self.key("pd", author), [p.post_id for p in posts])
        return grouped

    async def pages_and_hidden(
        self, authors: Sequence[str], after: Post | None, want: int, home: Sequence[Post]
    ) -> tuple[list[list[Post]], set[str], set[str]]:
        """``post_pages`` of the pulled authors and ``hidden`` of their posts' and the home
        timeline's authors and of the home timeline's posts, in one round trip. The author's posts
        pages' own posts are never deleted (a deletion takes a post out of its posts first)."""
        everyone = list(dict.fromkeys([*authors, *(p.author for p in home)]))
        async with self._redis.pipeline(transaction=False) as pipe:
            asked = self._queue_pages(pipe, authors, after, want)
            pipe.smismember(self._statuses.inactive_key, [*everyone, ""])
            by_author = self._queue_deleted(pipe, [p.member for p in home])
            replies = await pipe.execute()
        pages = _pages(replies[: len(authors)], after, want, asked)
        flags = replies[len(authors)]
        if not flags[-1]:
            raise StatusesMissing
        inactive = {a for a, flag in zip(everyone, flags, strict=False) if flag}
        return pages, inactive, _deleted(by_author, replies[len(authors) + 1 :])

    async def delete(self, author: str, post_id: str, member: str) -> int | None:
        """Out of the author's posts, marked deleting; its time, or None for an unknown post."""
        keys = [self.key("po", author), self.key("ps", author)]
        known, at = await self._delete(keys=keys, args=[post_id, member])
        return int(at) if known else None

    async def forget(self, author: str, post_id: str) -> None:
        """The removal is done: the tombstone alone remembers the post."""
        await self._redis.hdel(self.key("ps", author), post_id)

    async def newest(self, author: str, count: int) -> list[Post]:
        return (await self.newest_many([author], count))[author]

    async def newest_many(self, authors: Sequence[str], count: int) -> dict[str, list[Post]]:
        async with self._redis.pipeline(transaction=False) as pipe:
            for author in authors:
                pipe.zrevrange(self.key("po", author), 0, count - 1, withscores=True)
            replies = await pipe.execute()
        return {
            author: [Post(int(at), member) for member, at in rows]
            for author, rows in zip(authors, replies, strict=True)
        }

    async def post_pages(
        self, authors: Sequence[str], after: Post | None, want: int
    ) -> list[list[Post]]:
        """Each author's newest posts strictly after ``after``, ``want`` at most, one round trip
        (on a cluster, one pipeline per node, in parallel)."""
        if not authors:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            asked = self._queue_pages(pipe, authors, after, want)
            replies = await pipe.execute()
        return _pages(replies, after, want, asked)

    def _queue_pages(self, pipe: Any, authors: Sequence[str], after: Post | None, want: int) -> int:
        """Queue each author's page after ``after``; returns how many posts each asks for
        (posts of the position's own microsecond come first, so a few more past it)."""
        asked = want if after is None else want + 8
        high = "+inf" if after is None else after.at
        for author in authors:
            pipe.zrevrangebyscore(
                self.key("po", author), high, "-inf", start=0, num=asked, withscores=True
            )
        return asked

    async def mode(self, author: str) -> str:
        return await self._redis.hget(self.key("fm", author), "mode") or "push"

    async def finish_drain(self, author: str) -> bool:
        """draining -> push (the drain job pushed the author's posts everywhere); False when the
        author is no longer draining (it became a celebrity again)."""
        return bool(await self._finish_drain(keys=[self.key("fm", author)]))

    async def pushing_among(self, authors: Sequence[str]) -> list[str]:
        """The authors whose posts are pushed (push or draining)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for author in authors:
                pipe.hget(self.key("fm", author), "mode")
            modes = await pipe.execute()
        return [a for a, mode in zip(authors, modes, strict=True) if mode != "pull"]

    async def close(self, author: str) -> list[str]:
        """An author being erased publishes nothing more, and its posts are dropped
        (``timeline_close.lua``); the ids of the posts whose states are kept (each may have a job
        queued). ``HomeTimelines.stop_pulling`` ends its pulls."""
        keys = [self.key(kind, author) for kind in ("po", "ps", "fm")]
        return list(await self._close(keys=keys))

    async def reopen(self, user_id: str) -> bool:
        """An erased user's posts, post states, mode and tombstones go, while its timeline is
        still closed (``timeline_reopen.lua``): the next user with the id starts with none of them,
        and a post that user already published is never taken with them
        (``HomeTimelines.stop_pulling`` ends the erased one's pulls)."""
        keys = [self.key(kind, user_id) for kind in ("po", "ps", "fm", "pd")]
        return bool(await self._reopen(keys=keys))


class HomeTimelines:
    """The reader side: home timelines, activity marks, and the pulled authors (the set of authors
    readers pull, and each reader's cached list of those it follows)."""

    def __init__(
        self, client: Client, mirror: Mirror, redis: RedisSettings, settings: TimelineSettings
    ) -> None:
        self._redis = client
        self._mirror = mirror
        self._cluster = is_cluster(client)
        self._settings = settings
        self._pulled = timeline_key(redis, "pulled")
        self._generation = timeline_key(redis, "gen")
        self._push = register(client, "timeline_push")
        self._read = register(client, "timeline_read")
        self._remove_author = register(client, "timeline_remove_author")
        self._cache_put = register(client, "timeline_cache_put")

    def key(self, kind: str, user_id: str) -> str:
        return self._mirror.key(kind, user_id)  # the user's slot, as its mirror keys

    async def push(
        self, readers: Sequence[str], posts: Sequence[Post], kind: TimelineKeys = HOME
    ) -> tuple[int, int]:
        """Push posts into the timelines of those readers (or lists) that are active: (readers
        reached, posts added). One round trip (on a cluster, one pipeline per node)."""
        if not readers or not posts:
            return 0, 0
        entries: list[Any] = [self._settings.timeline_reader_cap]
        for post in posts:
            entries += (post.at, post.member)
        batch = Batch(self._redis, resend_missing=True)  # idempotent pushes
        for keys in self._timeline_keys(readers, kind):
            batch.script(self._push, keys, entries)
        replies = await batch.execute()
        return sum(r[0] for r in replies), sum(r[1] for r in replies)

    def _timeline_keys(self, readers: Iterable[str], kind: TimelineKeys) -> list[list[str]]:
        """Readers' (timeline, mark) keys, grouped so that each group goes in one script
        call."""
        key_sets = ([self.key(kind.timeline, r), self.key(kind.mark, r)] for r in readers)
        return script_groups(key_sets, self._cluster, READERS_PER_CALL)

    async def remove_post(
        self, readers: Sequence[str], member: str, kind: TimelineKeys = HOME
    ) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            for reader in readers:
                pipe.zrem(self.key(kind.timeline, reader), member)
            await pipe.execute()

    async def remove_author(self, reader: str, author: str) -> int:
        return await self._remove_author(keys=[self.key("in", reader)], args=[author])

    async def remove_authors(
        self, pairs: Sequence[tuple[str, str]], kind: TimelineKeys = HOME
    ) -> None:
        """``remove_author`` for many (reader, author) pairs, in as few round trips as the
        server allows."""
        calls = [([self.key(kind.timeline, reader)], [author]) for reader, author in pairs]
        await run_many(self._redis, self._remove_author, calls)

    async def read(
        self,
        reader: str,
        after: Post | None,
        want: int,
        scan_max: int,
        kind: TimelineKeys = HOME,
    ) -> TimelineRead:
        keys = [
            self.key(kind.timeline, reader),
            self.key(kind.mark, reader),
            self.key(kind.following, reader),
            self.key(kind.meta, reader),
            self.key(kind.cache, reader),
            self.key(kind.version, reader),
            self.key(kind.rebuild, reader),
        ]
        args = [
            "+inf" if after is None else after.at,
            "" if after is None else after.member,
            want,
            self._settings.timeline_active_ms,
            scan_max,
        ]
        batch = Batch(self._redis, resend_missing=True)
        batch.script(self._read, keys, args)
        batch.call(lambda pipe: pipe.get(self._generation))
        batch.call(lambda pipe: pipe.hgetall(self.key(kind.filters, reader)))
        reply, generation, filters = await batch.execute()
        if reply[0] == "rebuild":
            return TimelineRead(rebuild=True)
        n = int(reply[5])
        pulled, flat = tuple(reply[6 : 6 + n]), reply[6 + n :]
        posts = tuple(Post(int(flat[i + 1]), flat[i]) for i in range(0, len(flat), 2))
        return TimelineRead(
            rebuild=False,
            following_complete=bool(reply[1]),
            exhausted=bool(reply[2]),
            cache_generation=reply[3] or None,
            generation=generation or "0",
            follow_generation=reply[4],
            pulled=pulled,
            posts=posts,
            filters=filters if filters.pop("", None) == reply[4] else None,
        )

    async def rebuilt(self, reader: str, kind: TimelineKeys = HOME) -> None:
        """The reader's rebuild is done (until then every read rebuilds it again)."""
        await self._redis.delete(self.key(kind.rebuild, reader))

    async def start_pulling(self, author: str) -> None:
        """Readers pull this author from their next read on (cached lists are recomputed)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.sadd(self._pulled, author)
            pipe.incr(self._generation)
            await pipe.execute()

    async def stop_pulling(self, author: str) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.srem(self._pulled, author)
            pipe.incr(self._generation)
            await pipe.execute()

    async def pulled_among(self, authors: Sequence[str]) -> list[str]:
        if not authors:
            return []
        flags = await self._redis.smismember(self._pulled, list(authors))
        return [a for a, flag in zip(authors, flags, strict=True) if flag]

    async def cache_pulled(
        self,
        reader: str,
        follow_generation: str,
        generation: str,
        pulled: Sequence[str],
        kind: TimelineKeys = HOME,
    ) -> None:
        value = f"{follow_generation}|{generation}|{','.join(pulled)}"
        keys = [self.key(kind.cache, reader), self.key(kind.version, reader)]
        ttl = self._settings.timeline_cache_seconds
        await self._cache_put(keys=keys, args=[follow_generation, value, ttl])

    def invalidations(self, readers: Sequence[str], kind: TimelineKeys = HOME) -> list[Command]:
        """What a follow or unfollow of these readers (a change of a list's members) changes,
        for the caller to send: their lists of pulled authors."""
        return [("INCR", self.key(kind.version, reader)) for reader in readers]

    async def invalidate(self, readers: Sequence[str], kind: TimelineKeys = HOME) -> None:
        if readers:
            async with self._redis.pipeline(transaction=False) as pipe:
                queued(self.invalidations(readers, kind))(pipe)
                await pipe.execute()

    async def is_active(self, reader: str) -> bool:
        return bool(await self._redis.exists(self.key("rd", reader)))

    async def active_among(self, readers: Sequence[str], kind: TimelineKeys = HOME) -> list[str]:
        async with self._redis.pipeline(transaction=False) as pipe:
            for reader in readers:
                pipe.exists(self.key(kind.mark, reader))
            found = await pipe.execute()
        return [r for r, n in zip(readers, found, strict=True) if n]

    async def entries(self, reader: str, kind: TimelineKeys = HOME) -> list[Post]:
        """The whole timeline, newest first (checks and repairs)."""
        rows = await self._redis.zrevrange(self.key(kind.timeline, reader), 0, -1, withscores=True)
        return [Post(int(at), member) for member, at in rows]

    async def repair(self, reader: str, add: Sequence[Post], remove: Sequence[str]) -> None:
        """Add missing posts and drop wrong ones, keeping whatever was pushed meanwhile."""
        if remove:
            await self._redis.zrem(self.key("in", reader), *remove)
        if add:
            await self.push([reader], add)

    async def forget_reader(self, user_id: str, kind: TimelineKeys = HOME) -> None:
        """An erased user's home timeline and marks go (a deleted list's timeline)."""
        kinds = (kind.timeline, kind.mark, kind.cache, kind.version, kind.rebuild, kind.filters)
        await self._redis.unlink(*[self.key(k, user_id) for k in kinds])


class _Full(list):
    """A page of an author's posts that has more posts beyond it."""


def has_more(page: list[Post]) -> bool:
    return isinstance(page, _Full)


def _pages(
    replies: Sequence[list[tuple[str, float]]], after: Post | None, want: int, asked: int
) -> list[list[Post]]:
    """Pages strictly after ``after``; one that read all it asked for may have more."""
    pages: list[list[Post]] = []
    for rows in replies:
        posts = [Post(int(at), member) for member, at in rows]
        page = [p for p in posts if after is None or p < after][:want]
        pages.append(_Full(page) if len(rows) == asked and page else page)
    return pages


def _deleted(by_author: dict[str, list[Post]], replies: Sequence[list[Any]]) -> set[str]:
    """The members with a tombstone, from the replies of ``AuthorPosts._queue_deleted``."""
    return {
        post.member
        for posts, scores in zip(by_author.values(), replies, strict=True)
        for post, score in zip(posts, scores, strict=True)
        if score is not None
    }


def by_author(posts: Iterable[Post]) -> dict[str, list[Post]]:
    grouped: dict[str, list[Post]] = {}
    for post in posts:
        grouped.setdefault(post.author, []).append(post)
    return grouped


def authors_of(posts: Iterable[Post]) -> list[str]:
    return list(dict.fromkeys(author_of(p.member) for p in posts))
