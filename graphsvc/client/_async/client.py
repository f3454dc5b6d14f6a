"""``AsyncGraphClient``: the same methods as ``GraphClient``, awaited (services)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from types import TracebackType
from typing import Any, TypedDict

import httpx

from graphsvc.client import _routes as route
from graphsvc.client._core import Call, ClientConfig, T, answer, wait_or_raise
from graphsvc.client._routes import PAGE_MAX, TIMELINE_PAGE, _u
from graphsvc.client.errors import GraphError, error_for
from graphsvc.client.listing import AsyncListing, PageT
from graphsvc.wire import schemas

log = logging.getLogger(__name__)


class NewFollower(TypedDict):
    """A ``follower`` event of the new-followers stream, or a ``follow_request`` one
    (``requested``: the user is locked, and the follower waits for its approval): a dict, as
    the event's JSON is."""

    follower: str
    since: str  # the follow's (or request's) time, ISO-8601 UTC
    event_id: str
    entry_id: str  # the stream entry: pass it as ``last_event_id`` to resume after it
    requested: bool


class AsyncGraphClient:
    """Each route method answers what ``GraphClient``'s does (its docstrings say what), awaited;
    a paged list is walked with ``async for`` (or ``pages()``)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        http: httpx.AsyncClient | None = None,
        **options: Any,
    ) -> None:
        """``http``: an httpx client to send every request through, as it is (its base URL,
        headers, transport and event hooks: an app in this process, a proxy, a recorder);
        ``base_url`` and ``api_key`` are then not used."""
        if http is not None:
            self.config = ClientConfig.resolve(str(http.base_url), None, **options)
            self._http = http
            return
        self.config = ClientConfig.resolve(base_url, api_key, **options)
        self._http = httpx.AsyncClient(
            base_url=self.config.base_url,
            headers=self.config.headers(),
            timeout=self.config.timeout,
        )

    async def _call(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, params=call.params or None, json=call.body
                )
                return answer(call, response)
            except (GraphError, httpx.TransportError) as exc:
                wait = wait_or_raise(call, exc, attempt, self.config)
            await asyncio.sleep(wait)
            attempt += 1

    def _list(self, call: Call[PageT], limit: int | None, progress: bool) -> AsyncListing[PageT]:
        return AsyncListing(lambda cursor: self._call(call.after(cursor)), limit, progress)

    # -- relations ------------------------------------------------------------------------

    async def follow(
        self, user_id: str, target_id: str, *, recommendation_id: str | None = None
    ) -> schemas.FollowBody:
        return await self._call(route.follow(user_id, target_id, recommendation_id))

    async def unfollow(self, user_id: str, target_id: str) -> schemas.UnfollowBody:
        return await self._call(route.unfollow(user_id, target_id))

    async def remove_follower(self, user_id: str, follower_id: str) -> schemas.RemoveFollowerBody:
        return await self._call(route.remove_follower(user_id, follower_id))

    async def remove_followers(
        self, user_id: str, ids: Iterable[str]
    ) -> schemas.RemoveFollowersBody:
        return await self._call(route.remove_followers(user_id, ids))

    async def block(self, user_id: str, target_id: str) -> schemas.BlockBody:
        return await self._call(route.block(user_id, target_id))

    async def unblock(self, user_id: str, target_id: str) -> schemas.UnblockBody:
        return await self._call(route.unblock(user_id, target_id))

    async def mute(
        self,
        user_id: str,
        target_id: str,
        *,
        notifications: bool = False,
        duration_seconds: int | None = None,
    ) -> schemas.MuteBody:
        return await self._call(route.mute(user_id, target_id, notifications, duration_seconds))

    async def unmute(self, user_id: str, target_id: str) -> schemas.UnmuteBody:
        return await self._call(route.unmute(user_id, target_id))

    def mutes(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.MutesBody]:
        return self._list(route.mutes(user_id, page_size), limit, progress)

    async def relationships(self, user_id: str, ids: Iterable[str]) -> schemas.RelationshipsBody:
        return await self._call(route.relationships(user_id, ids))

    # -- follow requests --------------------------------------------------------------------

    def follow_requests(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        """The requests waiting for the user's answer, newest first (its own list only)."""
        return self._list(route.follow_requests(user_id, page_size), limit, progress)

    def sent_follow_requests(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        """The requests the user made that still wait, newest first (its own list only)."""
        return self._list(route.sent_follow_requests(user_id, page_size), limit, progress)

    async def approve_follow_request(
        self, user_id: str, requester_id: str
    ) -> schemas.FollowRequestBody:
        """The requester follows the user now (a 404 ``no_follow_request`` when none waits)."""
        return await self._call(route.approve_follow_request(user_id, requester_id))

    async def reject_follow_request(
        self, user_id: str, requester_id: str
    ) -> schemas.FollowRequestBody:
        return await self._call(route.reject_follow_request(user_id, requester_id))

    async def approve_all_follow_requests(self, user_id: str) -> schemas.ApproveAllBody:
        """Approve every pending request in the background (progress: ``status``)."""
        return await self._call(route.approve_all_follow_requests(user_id))

    # -- privacy ----------------------------------------------------------------------------

    async def privacy(self, user_id: str) -> schemas.PrivacyBody:
        """Who sees the user's followers, following and counts; discoverable; locked."""
        return await self._call(route.privacy(user_id))

    async def set_privacy(self, user_id: str, **settings: Any) -> schemas.PrivacyBody:
        """Change the settings named (``followers_visibility="mutuals"``, ``locked=True``);
        the others keep their values. The settings now."""
        return await self._call(route.set_privacy(user_id, settings))

    # -- lists and counts -------------------------------------------------------------------

    async def counts(self, user_id: str) -> schemas.CountsBody:
        return await self._call(route.counts(user_id))

    def followers(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        not_followed_back: bool = False,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        call = route.followers(user_id, page_size, not_followed_back)
        return self._list(call, limit, progress)

    def following(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        not_following_back: bool = False,
        celebrities_only: bool = False,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        call = route.following(user_id, page_size, not_following_back, celebrities_only)
        return self._list(call, limit, progress)

    def friends(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        return self._list(route.friends(user_id, page_size), limit, progress)

    def blocks(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        return self._list(route.blocks(user_id, page_size), limit, progress)

    def common_following(
        self,
        user_id: str,
        other_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.IdPageBody]:
        return self._list(route.common_following(user_id, other_id, page_size), limit, progress)

    def common_followers(
        self,
        user_id: str,
        other_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.IdPageBody]:
        return self._list(route.common_followers(user_id, other_id, page_size), limit, progress)

    async def familiar_followers(
        self, viewer_id: str, target_id: str, *, limit: int = 20
    ) -> schemas.IdPageBody:
        return await self._call(route.familiar_followers(viewer_id, target_id, limit))

    # -- moderation -------------------------------------------------------------------------

    async def status(self, user_id: str) -> schemas.StatusBody:
        return await self._call(route.status(user_id))

    async def set_status(self, user_id: str, status: str) -> schemas.StatusBody:
        return await self._call(route.set_status(user_id, status))

    async def erase(self, user_id: str) -> schemas.EraseBody:
        return await self._call(route.erase(user_id))

    # -- people you may know ----------------------------------------------------------------

    async def record_interactions(
        self, events: Iterable[tuple[str, str, str, datetime]]
    ) -> schemas.AcceptedBody:
        return await self._call(route.record_interactions(events))

    async def suggestions(self, user_id: str, *, limit: int = 10) -> schemas.SuggestionsBody:
        return await self._call(route.suggestions(user_id, limit))

    async def similar(self, user_id: str, seed_id: str, *, limit: int = 10) -> schemas.SimilarBody:
        return await self._call(route.similar(user_id, seed_id, limit))

    async def dismiss(
        self, user_id: str, target_id: str, *, recommendation_id: str | None = None
    ) -> schemas.DismissBody:
        return await self._call(route.dismiss(user_id, target_id, recommendation_id))

    async def record_impressions(
        self, user_id: str, ids: Iterable[str], *, recommendation_id: str | None = None
    ) -> schemas.RecordedBody:
        """Shows of suggestions; with the answer's ``recommendation_id`` they count for the
        ranker version that ranked them."""
        return await self._call(route.record_impressions(user_id, ids, recommendation_id))

    async def suggestions_report(self) -> schemas.SuggestionsReportBody:
        """Online figures per ranker version beside offline precision (the ``internal``
        scope): what `graphsvc pymk report` prints; ``.to_pandas()`` for a notebook."""
        return await self._call(route.suggestions_report())

    # -- timelines ------------------------------------------------------------------------

    async def publish(self, user_id: str, post_id: str, at: datetime) -> schemas.PostBody:
        return await self._call(route.publish(user_id, post_id, at))

    async def post(self, user_id: str, post_id: str) -> schemas.PostBody:
        return await self._call(route.post(user_id, post_id))

    async def delete_post(self, user_id: str, post_id: str) -> schemas.PostDeletedBody:
        return await self._call(route.delete_post(user_id, post_id))

    def timeline(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = TIMELINE_PAGE,
        progress: bool = False,
    ) -> AsyncListing[schemas.TimelineBody]:
        return self._list(route.timeline(user_id, page_size), limit, progress)

    async def explain_suggestion(self, user_id: str, target_id: str) -> schemas.ExplanationBody:
        return await self._call(route.explain_suggestion(user_id, target_id))

    async def affinities(self, user_id: str, *, limit: int = 20) -> schemas.AffinitiesBody:
        return await self._call(route.affinities(user_id, limit))

    # -- the new-followers stream ----------------------------------------------------------

    async def new_followers(
        self, user_id: str, *, last_event_id: str | None = None
    ) -> AsyncIterator[NewFollower]:
        """The user's new followers as they follow (Server-Sent Events); pass the last
        ``entry_id`` as ``last_event_id`` to replay what came after it. A replay the server cut
        short (its ``gap`` event) is logged as a warning; a stream the server ends (a revoked
        key) raises the ``GraphError`` its ``closed`` event names."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        path = f"/v1/users/{_u(user_id)}/events"
        async with self._http.stream("GET", path, headers=headers, timeout=None) as response:
            if response.status_code >= 400:
                await response.aread()
                raise error_for(response.status_code, response.json(), dict(response.headers))
            event: dict[str, str] = {}
            async for line in response.aiter_lines():
                if not line:
                    kind, data = event.get("event"), json.loads(event.get("data") or "{}")
                    if kind in ("follower", "follow_request"):
                        yield NewFollower(
                            follower=data.get("follower") or data["requester"],
                            since=data["since"],
                            event_id=data["event_id"],
                            entry_id=event.get("id", ""),
                            requested=kind == "follow_request",
                        )
                    elif kind == "gap":
                        log.warning("new followers of %s: %s", user_id, data.get("message"))
                    elif kind == "closed":
                        raise GraphError(
                            data.get("message", "stream closed"), code=data.get("code", "")
                        )
                    event = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    event[name] = value.removeprefix(" ")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
