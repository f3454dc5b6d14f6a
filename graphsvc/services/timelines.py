"""Home timelines: publish and delete posts, read a reader's timeline.

A timeline is the reader's home timeline (posts pushed by ordinary authors) merged, on read, with
the authors' posts of the pulled authors (celebrities) the reader follows, newest first. Each read:

1. ``timeline_read.lua`` on the reader's slot: marks the reader active, pages its home timeline
   (skipping authors it no longer follows) and returns its cached list of pulled authors. A reader
   who was inactive gets its home timeline rebuilt from authors' posts first (``_rebuild``).
2. One pipeline: the pulled authors' post pages, which authors are inactive (suspended,
   spam), which posts are deleted. Then the merge.

So a post never shows once its author is unfollowed, blocked, muted by the reader (while the
mute is in effect: one more read of the reader's mute mirror per round), in one of the reader's
exclusive lists (read in that list's timeline instead: ``services/lists/exclusions.py``), inactive or the post
deleted, whatever the background work (fan-outs, the event consumer) has done yet. Pages are
keyset cursors on (time, author|post): posts that arrive while a reader pages are newer than any
position it holds, so pages never skip or repeat a post.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

import orjson

from graphsvc.adapters.neo4j.relations import EdgeStore
from graphsvc.adapters.redis.timelines import (
    AuthorPosts,
    HomeTimelines,
    Published,
    TimelineRead,
    authors_of,
)
from graphsvc.domain.cursor import CursorCodec
from graphsvc.domain.errors import (
    InvalidPost,
    PostConflict,
    PostDeleted,
    UnknownPost,
    UserErasing,
)
from graphsvc.domain.follow_options import validate_language
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.model import Side, UserState, micros_from_datetime
from graphsvc.domain.timeline import PLAIN, Post, PostKind, PostState, TimelinePage, newest_first
from graphsvc.services.follow_filters import FollowFilters
from graphsvc.services.follow_pages import FollowPages
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.paging import Pager
from graphsvc.services.timeline_merge import SCAN_MAX, merged, paged
from graphsvc.settings import PageSettings, TimelineSettings, WriteSettings
from graphsvc.wire.ids import ID_RULE, is_user_id, quoted


class MuteFilter(Protocol):
    """The reader's mutes (``services/mutes.py``)."""

    async def muted_among(self, user_id: str, others: Sequence[str]) -> set[str]: ...


class ExclusionFilter(Protocol):
    """The members of the reader's exclusive lists (``services/lists/exclusions.py``)."""

    async def excluded_among(self, reader: str, authors: Sequence[str]) -> set[str]: ...


class BellStarter(Protocol):
    """The bells' jobs (``workers/bell_jobs.py``): a new post rings its author's bells."""

    async def ensure_room(self) -> None: ...

    async def start(self, author: str, post_id: str) -> None: ...


class ErasureState(Protocol):
    """Whether a user is being erased, as Neo4j says (``adapters/neo4j/moderation.py``)."""

    async def user_state(self, user_id: str) -> UserState | None: ...


class TimelineJobStarter(Protocol):
    """The timeline jobs' queue (``workers/timeline_jobs.py``)."""

    async def ensure_room(self, *alongside: BellStarter) -> None: ...

    async def start(self, job: str) -> None: ...


class Timelines:
    def __init__(
        self,
        author_posts: AuthorPosts,
        home_timelines: HomeTimelines,
        follow_pages: FollowPages,
        sync: MirrorSync,
        edges: EdgeStore,
        jobs: TimelineJobStarter,
        settings: TimelineSettings,
        pages: PageSettings,
        writes: WriteSettings,
        mutes: MuteFilter,
        erasures: ErasureState,
        exclusions: ExclusionFilter,
        filters: FollowFilters,
        bells: BellStarter,
    ) -> None:
        self._author_posts = author_posts
        self._bells = bells
        self._filters = filters
        self._exclusions = exclusions
        self._erasures = erasures
        self._mutes = mutes
        self._home_timelines = home_timelines
        self._follow_pages = follow_pages
        self._sync = sync
        self._edges = edges
        self._jobs = jobs
        self._settings = settings
        self._pager = Pager(pages)
        self._codec = CursorCodec(pages.cursor_secret)
        self._max_following = writes.max_following

    # -- posts ------------------------------------------------------------------------------

    async def publish(
        self, author: str, post_id: str, at: datetime, kind: PostKind = PLAIN
    ) -> tuple[PostState, bool]:
        """Put the post in its author's posts and start its fan-out (ordinary authors); the
        state, and whether the post is new. Idempotent; the same id at another time is a
        conflict, and a deleted id is not published again, nor any post of a user being
        erased. Its ``kind`` (language, reblog) is what followers' options filter it by."""
        post = _valid_post(author, post_id, at, self._settings.timeline_max_future_seconds)
        if kind.language is not None:
            validate_language(kind.language)
        await self._jobs.ensure_room(self._bells)  # a post may queue a fan-out and a ringing
        followers: int | None = None  # the mirror's count, unless it is cold
        posts = self._author_posts
        outcome = await posts.publish(post, post_id, kind=kind)
        if outcome.status == "erased":
            outcome = await _publish_after_erasure(posts, self._erasures, post, post_id, kind)
        if outcome.status == "counts":
            followers = (await self._follow_pages.counts(author)).followers
            outcome = await posts.publish(post, post_id, followers=followers, kind=kind)
        if outcome.status == "enter_pull":  # readers pull it before it stops pushing
            await self._home_timelines.start_pulling(author)
            outcome = await posts.publish(
                post, post_id, switch="pull", followers=followers, kind=kind
            )
        if outcome.status == "erased":  # an erasure closed the timeline between the calls
            raise _erasing(author)
        if outcome.deleted:  # checked with the publish: take back what it wrote, if anything
            if outcome.status == "published":
                await self._author_posts.delete(author, post_id, post.member)
                await self._author_posts.forget(author, post_id)
            raise PostDeleted(f"post {post_id!r} of {author!r} was deleted; use a new id")
        if outcome.status == "conflict":
            raise PostConflict(
                f"post {post_id!r} of {author!r} exists with another time; a post's time "
                "cannot change (delete it and publish a new id)"
            )
        created = outcome.status == "published"
        if created and outcome.mode == "push":
            await self._jobs.start(f"push|{author}|{post_id}")
        if outcome.rings:
            await self._bells.start(author, post_id)
        if outcome.extra == "1":  # back below the threshold: push the author's posts everywhere
            await self._jobs.start(f"drain|{author}")
        if not created:
            return await self._resumed(author, post_id, orjson.loads(outcome.extra)), False
        way = "done" if outcome.mode == "pull" else "fanning_out"
        return PostState(author, post_id, post.at, outcome.mode, way, kind=kind), True

    async def _resumed(self, author: str, post_id: str, stored: dict) -> PostState:
        """A publish retried: the post's state, with the work its first publish never queued
        (an error, a crash) queued now (work already queued is left to its holder)."""
        state = _state(author, post_id, stored)
        if state.mode == "push" and state.state == "fanning_out":
            await self._jobs.start(f"push|{author}|{post_id}")
        if stored.get("bells") == "ringing":
            await self._bells.start(author, post_id)
        return state

    async def post(self, author: str, post_id: str) -> PostState:
        _valid_ids(author, post_id)
        state = await self._author_posts.state(author, post_id)
        if state is None:
            member = Post.of(author, post_id, 0).member
            if await self._author_posts.deleted_among([member]):
                return PostState(author, post_id, 0, "", "deleted")
            raise UnknownPost(f"user {author!r} has no post {post_id!r}")
        return _state(author, post_id, state)

    async def delete(self, author: str, post_id: str) -> bool:
        """Take the post out of the author's posts, hide its copies at once (tombstone), and remove
        them from every home timeline it reached in the background; False for an unknown post."""
        _valid_ids(author, post_id)
        await self._jobs.ensure_room()
        member = Post.of(author, post_id, 0).member
        if await self._author_posts.delete(author, post_id, member) is None:
            return False
        await self._author_posts.tombstone(author, post_id)
        await self._jobs.start(f"remove|{author}|{post_id}")
        return True

    # -- reading ----------------------------------------------------------------------------

    async def timeline(
        self, reader: str, limit: int | None = None, cursor: str | None = None
    ) -> TimelinePage:
        validate_user_id(reader)

        async def one_round(position: Post | None, want: int) -> tuple[list[Post], Post | None]:
            return await self._round(reader, position, want)

        return await paged(self._codec, self._pager, f"timeline|{reader}", limit, cursor, one_round)

    async def _round(
        self, reader: str, position: Post | None, want: int
    ) -> tuple[list[Post], Post | None]:
        """Visible posts after ``position``, newest first, and the horizon: the oldest post
        this round covered completely (None when every source is exhausted)."""
        home = await self._home_timelines.read(reader, position, want, SCAN_MAX)
        if home.rebuild:
            await self._rebuild(reader)
            home = await self._home_timelines.read(reader, position, want, SCAN_MAX)
        posts = list(home.posts)
        if not home.following_complete:
            posts = await self._followed_only(reader, posts)
        pulled = list(home.pulled)
        if home.cache_generation is None or home.cache_generation != home.generation:
            pulled = await self._pulled_authors(reader, home)
        posts, pulled = await _unmuted(self._mutes, reader, posts, pulled)
        posts, pulled = await _inclusive(self._exclusions, reader, posts, pulled)
        visible, horizon = await merged(
            self._author_posts, self._sync, home, posts, pulled, position, want
        )
        return await self._filters.admitted(reader, home, visible), horizon

    async def _followed_only(self, reader: str, posts: list[Post]) -> list[Post]:
        """The reader's following list is not mirrored in full: ask Neo4j who it follows."""
        followed = await self.followed_among(reader, authors_of(posts))
        return [p for p in posts if p.author in followed]

    async def followed_among(self, reader: str, authors: Sequence[str]) -> set[str]:
        """Which of these authors the reader follows, as Neo4j says (inactive ones too)."""
        followed: set[str] = set()
        for start in range(0, len(authors), 100):
            relations = await self._edges.relationships(reader, list(authors[start : start + 100]))
            followed |= {rel.user_id for rel in relations if rel.following}
        return followed

    async def pushing_followed(self, reader: str, count: int) -> list[str]:
        """The reader's newest ``count`` follows whose posts are pushed (push or draining:
        a drain may have passed the reader): what its home timeline holds posts of."""
        following = await self._follow_pages.walk(Side.FOLLOWING, reader, None, count)
        return await self._author_posts.pushing_among([e.user_id for e in following])

    async def _pulled_authors(self, reader: str, read: TimelineRead) -> list[str]:
        """The pulled authors the reader follows, computed and cached under the generations
        ``read`` saw before it (a follow or a switch since makes the cache stale)."""
        following = await self._follow_pages.walk(Side.FOLLOWING, reader, None, self._max_following)
        pulled = await self._home_timelines.pulled_among([e.user_id for e in following])
        await self._home_timelines.cache_pulled(
            reader, read.follow_generation, read.generation, pulled
        )
        return pulled

    async def _rebuild(self, reader: str) -> None:
        """The home timeline of a reader who was inactive: the newest posts of the authors it
        follows (newest follows first, TIMELINE_REBUILD_AUTHORS of them, TIMELINE_REBUILD_POSTS
        each) whose posts are pushed."""
        settings = self._settings
        pushing = await self.pushing_followed(reader, settings.timeline_rebuild_authors)
        pages = await self._author_posts.post_pages(pushing, None, settings.timeline_rebuild_posts)
        await self._home_timelines.push(
            [reader], newest_first(pages)[: settings.timeline_reader_cap]
        )
        await self._home_timelines.rebuilt(reader)


async def _unmuted(
    mutes: MuteFilter, reader: str, posts: list[Post], pulled: list[str]
) -> tuple[list[Post], list[str]]:
    """The home timeline's posts and the pulled authors, less those the reader mutes (a mute hides
    a home timeline's posts and a pulled author's alike; the round's horizon is still the home
    timeline's own, so nothing below a muted post is skipped)."""
    muted = await mutes.muted_among(reader, [*pulled, *authors_of(posts)])
    if not muted:
        return posts, pulled
    return [p for p in posts if p.author not in muted], [a for a in pulled if a not in muted]


async def _inclusive(
    exclusions: ExclusionFilter, reader: str, posts: list[Post], pulled: list[str]
) -> tuple[list[Post], list[str]]:
    """Less the posts of the members of the reader's exclusive lists (read in those lists'
    timelines instead)."""
    excluded = await exclusions.excluded_among(reader, [*pulled, *authors_of(posts)])
    if not excluded:
        return posts, pulled
    return [p for p in posts if p.author not in excluded], [a for a in pulled if a not in excluded]


def _state(author: str, post_id: str, state: dict) -> PostState:
    return PostState(
        author,
        post_id,
        int(state["at"]),
        state["mode"],
        state["state"],
        state["followers"],
        state["pushed"],
        PostKind.of_state(state),
    )


async def _publish_after_erasure(
    author_posts: AuthorPosts, erasures: ErasureState, post: Post, post_id: str, kind: PostKind
) -> Published:
    """The author's timeline is closed. An erasure closes it first and forgets it last, after
    deleting the node: closed with no erasure in Neo4j, it is what a process stopped in
    between left, and goes now, so the next user with the id can publish."""
    author = post.author
    state = await erasures.user_state(author)
    if state is None or not state.erasing:
        await author_posts.reopen(author)
        outcome = await author_posts.publish(post, post_id, kind=kind)
        if outcome.status != "erased":  # else an erasure began meanwhile
            return outcome
    raise _erasing(author)


def _erasing(author: str) -> UserErasing:
    return UserErasing(f"user {author!r} is being erased: it publishes nothing")


def _valid_post(author: str, post_id: str, at: datetime, max_future_seconds: float) -> Post:
    _valid_ids(author, post_id)
    moment = at if at.tzinfo else at.replace(tzinfo=UTC)
    micros = micros_from_datetime(moment)
    horizon = time.time_ns() // 1_000 + max_future_seconds * 1_000_000
    if micros > horizon:
        raise InvalidPost(f"post time {at.isoformat()} is in the future")
    if micros < 0:
        raise InvalidPost(f"post time {at.isoformat()} is before 1970")
    return Post.of(author, post_id, micros)


def _valid_ids(author: str, post_id: str) -> None:
    validate_user_id(author, "user_id")
    if not isinstance(post_id, str) or not is_user_id(post_id):
        raise InvalidPost(f"post_id {quoted(post_id)} is not a valid post id: use {ID_RULE}")
