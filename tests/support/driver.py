"""The suite's driver: graphsvc's own async client over the app in this process.

``Driver`` is an ``AsyncGraphClient`` whose requests go to an in-process httpx client of the
ASGI app (``conftest.make_client``), so a test speaks the client's language: its route
methods and the server's typed answers (``FollowBody``, ``CountsBody``, ...), its paged walks,
and its ``GraphError`` subclasses for error answers. It never retries: a test sees each answer
as the server gave it, a 429 or a 503 raised rather than waited out. A few methods add what
tests ask of the client again and again (every id of a list, one user following several, the
jobs drained); ``http`` is the raw client, for tests about a URL itself (bad ids, odd paths,
headers, status codes of malformed requests).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Literal, TypeVar

import httpx

from graphsvc.bootstrap import Services
from graphsvc.builders.lists import build_subscription_sync
from graphsvc.client import AsyncGraphClient, AsyncListing, GraphError, Page
from graphsvc.wire.schemas import (
    CountsBody,
    EraseBody,
    ErrorDetail,
    Item,
    PostBody,
    PostDeletedBody,
    RelationshipBody,
    SuggestionItem,
)
from tests.support.helpers import AppClient
from tests.support.stores import apply_events, apply_list_events

T = TypeVar("T")
ItemT = TypeVar("ItemT")
Side = Literal["followers", "following", "friends", "blocks"]
Shared = Literal["common_followers", "common_following", "familiar_followers"]
Event = tuple[str, str, str, datetime]  # actor, target, kind, at


class Driver(AsyncGraphClient):
    """The client over ``http``; ``last_status`` is the status code of the latest answer (a
    publish answers 202 when it created the post, 200 when it existed)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        super().__init__(http=http, max_retries=0)
        self._raw = http
        self.last_status = 0
        hooks = http.event_hooks
        http.event_hooks = {**hooks, "response": [*hooks["response"], self._note]}

    async def _note(self, response: httpx.Response) -> None:
        self.last_status = response.status_code

    @property
    def http(self) -> httpx.AsyncClient:
        return self._raw

    @property
    def services(self) -> Services:
        """The services behind the app (to drain jobs, flush, read a store)."""
        if not isinstance(self._raw, AppClient):
            raise TypeError("this driver speaks to a served process, not an app in this one")
        return self._raw.app.state.services

    # -- relations ------------------------------------------------------------------------

    async def follows(self, user_id: str, *targets: str) -> None:
        """``user_id`` follows each target, in order (each follow newer than the last), none
        of them followed before."""
        await self.follow_pairs(*((user_id, target) for target in targets))

    async def follow_pairs(self, *pairs: tuple[str, str]) -> None:
        """Each (follower, followed) pair follows, in order, none of them a follow before."""
        for user_id, target in pairs:
            assert (await self.follow(user_id, target)).created, (user_id, target)

    async def relation(self, user_id: str, other_id: str) -> RelationshipBody:
        return (await self.relationships(user_id, [other_id])).relationships[other_id]

    # -- answers whose status says what happened ----------------------------------------------

    async def publish(
        self,
        user_id: str,
        post_id: str,
        at: datetime,
        *,
        language: str | None = None,
        reblog: bool = False,
    ) -> PostBody:
        """202 for a post it created, 200 for one it had."""
        body = await super().publish(user_id, post_id, at, language=language, reblog=reblog)
        assert self.last_status == (202 if body.created else 200), (self.last_status, body)
        return body

    async def delete_post(self, user_id: str, post_id: str) -> PostDeletedBody:
        """202 while the post's removal runs, 200 for an unknown post."""
        body = await super().delete_post(user_id, post_id)
        assert self.last_status == (202 if body.deleted else 200), (self.last_status, body)
        return body

    async def erase(self, user_id: str) -> EraseBody:
        """202 while the erasure runs, 200 for a user that is not there."""
        body = await super().erase(user_id)
        assert self.last_status == (202 if body.state == "erasing" else 200), body
        return body

    # -- follow pages -----------------------------------------------------------------------

    async def ids(self, user_id: str, side: Side, **filters: bool) -> list[str]:
        """Every id of a list, newest first (friends: closest first), across all its pages."""
        listing: AsyncListing[Page[Item]] = getattr(self, side)(user_id, **filters)
        return [item.user_id async for item in listing]

    async def view(self, user_ids: Sequence[str]) -> dict[str, dict[str, object]]:
        """Everything the API shows of these users: counts and the three lists (a refused
        write must leave it as it was)."""
        shown: dict[str, dict[str, object]] = {}
        for user in user_ids:
            shown[user] = {"counts": await self.counts(user)}
            for side in ("followers", "following", "friends"):
                shown[user][side] = await self.ids(user, side)
        return shown

    async def shared(self, kind: Shared, user_id: str, other_id: str) -> tuple[int, list[str]]:
        """(total, ids) of a list two users share (``familiar_followers``: whom the first
        follows that follow the second), its first page of up to 200."""
        if kind == "familiar_followers":
            page = await self.familiar_followers(user_id, other_id, limit=200)
        else:
            page = await anext(getattr(self, kind)(user_id, other_id).pages())
        return page.total, page.items

    # -- timelines ------------------------------------------------------------------------

    async def timeline_of(self, reader: str, page_size: int = 50) -> list[tuple[str, str]]:
        """The whole timeline as (author, post) pairs, every page walked; newest first and no
        post twice, as every read must be."""
        items = [item async for item in self.timeline(reader, page_size=page_size)]
        times = [(item.at, item.author, item.post_id) for item in items]
        assert times == sorted(times, reverse=True), "not newest first"
        pairs = [(item.author, item.post_id) for item in items]
        assert len(pairs) == len(set(pairs)), f"a post shows twice: {pairs}"
        return pairs

    # -- background work done now -----------------------------------------------------------

    async def drain(self) -> None:
        """The jobs this process queued (status propagations, erasures, fan-outs) done."""
        await self.services.core.jobs.drain()

    async def settle(self) -> None:
        """Fan-outs done, the event stream's entries applied to the timelines and lists, and
        the subscriptions' due work done (as a worker's claims would do it)."""
        await self.services.core.jobs.drain()
        await apply_events(self.services)
        await apply_list_events(self.services)
        await self.services.core.jobs.drain()
        await self.sync_subscriptions()

    async def sync_subscriptions(self) -> None:
        """Every subscription's due work done now, started here as a worker would claim it
        (a job run here keeps its lease a while: started again, it runs with that lease)."""
        kind, jobs = build_subscription_sync(self.services.core), self.services.core.jobs
        for _ in range(20):
            await jobs.drain()
            due = await kind.due(100)
            if not due:
                return
            for key in due:
                await jobs.start(kind, key)
        raise AssertionError("subscriptions' work still due after 20 rounds")

    async def interact(self, *events: Event) -> None:
        """Record interactions and apply them to the affinities at once."""
        assert (await self.record_interactions(events)).accepted == len(events)
        assert self.last_status == 202
        await self.services.background.interaction_flusher.flush_all()

    async def suggested(self, user_id: str, limit: int = 50) -> dict[str, SuggestionItem]:
        """The user's suggestions by id, best first."""
        items = (await self.suggestions(user_id, limit=limit)).items
        return {item.user_id: item for item in items}

    async def affinity_of(self, user_id: str) -> dict[str, float]:
        return {i.user_id: i.affinity for i in (await self.affinities(user_id, limit=100)).items}


async def refused(answered: Awaitable[object], status: int, code: str) -> GraphError:
    """The error a call was answered with, which must have this status and code."""
    try:
        await answered
    except GraphError as error:
        assert (error.status, error.code) == (status, code), error
        assert error.message
        return error
    raise AssertionError(f"answered, where a {status} {code} was expected")


def assert_error(response: httpx.Response, status: int, code: str) -> ErrorDetail:
    """A raw answer is the one error shape, with this status and code."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    detail = ErrorDetail.model_validate(body["error"])
    assert detail.code == code, body
    assert detail.message
    return detail


def full_counts(
    followers: int,
    following: int,
    *,
    friends: int = 0,
    followers_active: int | None = None,
    following_active: int | None = None,
    celebrity: bool = False,
) -> CountsBody:
    """The counts of a user; active counts default to the totals (every user active)."""
    return CountsBody(
        followers=followers,
        following=following,
        followers_active=followers if followers_active is None else followers_active,
        following_active=following if following_active is None else following_active,
        friends=friends,
        celebrity=celebrity,
    )


def relationship(
    *,
    following: bool = False,
    followed_by: bool = False,
    blocking: bool = False,
    blocked_by: bool = False,
) -> RelationshipBody:
    return RelationshipBody(
        following=following,
        followed_by=followed_by,
        mutual=following and followed_by,
        blocking=blocking,
        blocked_by=blocked_by,
        # a follow's default options (none without a follow)
        notifying=False if following else None,
        showing_reblogs=True if following else None,
    )


async def walk(listing: AsyncListing[Page[ItemT]], page_size: int) -> list[ItemT]:
    """Every item of a paged list, asked ``page_size`` at a time: no page longer than that,
    and no page empty while another follows (``pages`` for lists whose bounded reads may)."""
    items: list[ItemT] = []
    async for page in listing.pages():
        assert len(page.items) <= page_size
        assert page.items or page.next_cursor is None, "an empty page with a next_cursor"
        items += page.items
    return items


async def pages(listing: AsyncListing[Page[ItemT]]) -> list[list[ItemT]]:
    """A list's pages, as walked."""
    return [page.items async for page in listing.pages()]


def assert_newest_first(items: Sequence[Item]) -> None:
    keys = [(i.since, i.user_id) for i in items]
    assert keys == sorted(keys, reverse=True), "not newest first"
    assert len(set(keys)) == len(keys)


def user_ids(items: Sequence[Item]) -> list[str]:
    return [item.user_id for item in items]


async def eventually(check: Callable[[], Awaitable[Any]], seconds: float = 30.0) -> None:
    """Wait until ``check`` answers something true (work another process or task does)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


# ``as_viewer`` (conftest): a driver reading with a product's service key for a viewer.
AsViewer = Callable[..., AbstractAsyncContextManager[Driver]]
