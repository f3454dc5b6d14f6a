"""``AsyncGraphClient``, the one hand-written client: ``GraphClient`` (``graphsvc/client/_sync``)
is generated from this file by ``python -m graphsvc.client._generate`` (``make generate``), so
the two cannot differ in a signature. Write what both must do here, in a form the generator
can turn into blocking code (``await`` and ``async`` are dropped, names mapped)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx

from graphsvc.client import _routes as route
from graphsvc.client._async.listing import AsyncListing
from graphsvc.client._core import (
    Call,
    ClientConfig,
    NewFollower,
    Notification,
    T,
    answer,
    wait_or_raise,
)
from graphsvc.client._routes import PAGE_MAX, TIMELINE_PAGE, _u
from graphsvc.client._walk import AsyncTotal, PageT
from graphsvc.client.analysis import AsyncAnalysis
from graphsvc.client.errors import GraphError, error_for, known_code
from graphsvc.wire import schemas

if TYPE_CHECKING:
    import pandas

log = logging.getLogger(__name__)


class AsyncGraphClient(AsyncAnalysis):
    """graphsvc over HTTP. ``base_url`` defaults to GRAPHSVC_URL, ``api_key`` to
    GRAPHSVC_API_KEY; connections are pooled; use it as a context manager or close it.
    A paged list is a listing: iterate it for every item, or walk ``pages()``."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.2,
        backoff_max: float = 5.0,
        viewer: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """``timeout``: seconds per request; ``max_retries``, ``backoff``, ``backoff_max``: the
        retries of what may be retried (see ``_core``); ``viewer``: the user every read is for
        (``X-Graph-Viewer``, with a service key). ``http``: an httpx client to send every request
        through, as it is (its base URL, headers, transport and event hooks: an app in this
        process, a proxy, a recorder); ``base_url``, ``api_key`` and ``viewer`` are then not used."""
        if http is not None:
            base_url, api_key, viewer = str(http.base_url), None, None
        self.config = ClientConfig.resolve(
            base_url,
            api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            backoff_max=backoff_max,
            viewer=viewer,
        )
        if http is not None:
            self._http = http
            return
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

    def _list(
        self,
        call: Call[PageT],
        limit: int | None,
        progress: bool,
        total: AsyncTotal | None = None,
    ) -> AsyncListing[PageT]:
        return AsyncListing(lambda cursor: self._call(call.after(cursor)), limit, progress, total)

    async def _length(self, user_id: str, side: str) -> int | None:
        """A whole list's length for a progress bar: the exact count (None where hidden)."""
        counts = await self.counts(user_id)
        return counts.followers if side == "followers" else counts.following

    # -- relations ------------------------------------------------------------------------

    async def follow(
        self,
        user_id: str,
        target_id: str,
        *,
        recommendation_id: str | None = None,
        notify: bool | None = None,
        reblogs: bool | None = None,
        languages: Iterable[str] | None = None,
    ) -> schemas.FollowBody:
        """Idempotent: ``created`` is false when the follow existed. ``notify``, ``reblogs``
        and ``languages`` (empty: every language) set the follow's options; None leaves one
        as it is, and a repeat that changed any says ``options_changed``."""
        call = route.follow(user_id, target_id, recommendation_id, notify, reblogs, languages)
        return await self._call(call)

    async def unfollow(self, user_id: str, target_id: str) -> schemas.UnfollowBody:
        return await self._call(route.unfollow(user_id, target_id))

    async def remove_follower(self, user_id: str, follower_id: str) -> schemas.RemoveFollowerBody:
        """The follower's unfollow of the user, asked by the user (idempotent)."""
        return await self._call(route.remove_follower(user_id, follower_id))

    async def remove_followers(
        self, user_id: str, ids: Iterable[str]
    ) -> schemas.RemoveFollowersBody:
        """1-100 followers (REMOVE_FOLLOWERS_MAX_IDS) removed at once: ``removed`` says, per
        id, whether it followed."""
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
        """Idempotent: a repeat sets the options again (``created`` false). Private: the
        muted user can tell nothing."""
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
        """The user's mutes in effect, newest first (its own key, or an operator's)."""
        return self._list(route.mutes(user_id, page_size), limit, progress)

    async def relationships(
        self, user_id: str, ids: Iterable[str], *, known_followers: bool = False
    ) -> schemas.RelationshipsBody:
        """How the user relates to 1-100 others; with ``known_followers`` (1-40 ids), also
        whom the user follows who follow each."""
        return await self._call(route.relationships(user_id, ids, known_followers))

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

    async def set_privacy(
        self,
        user_id: str,
        *,
        followers_visibility: schemas.VisibilityName | None = None,
        following_visibility: schemas.VisibilityName | None = None,
        counts_visibility: schemas.CountsVisibilityName | None = None,
        discoverable: bool | None = None,
        locked: bool | None = None,
    ) -> schemas.PrivacyBody:
        """Change the settings given (``followers_visibility="mutuals"``, ``locked=True``);
        the others keep their values. The settings now."""
        settings = {
            "followers_visibility": followers_visibility,
            "following_visibility": following_visibility,
            "counts_visibility": counts_visibility,
            "discoverable": discoverable,
            "locked": locked,
        }
        return await self._call(route.set_privacy(user_id, settings))

    # -- follow pages and counts -------------------------------------------------------------

    async def counts(self, user_id: str) -> schemas.CountsBody:
        return await self._call(route.counts(user_id))

    def followers(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        not_followed_back: bool = False,
        since_after: datetime | None = None,
        since_before: datetime | None = None,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        """Who follows the user, newest first, across every page (``limit``: stop early);
        ``since_after`` / ``since_before``: only follows made in that window."""
        call = route.followers(user_id, page_size, not_followed_back, since_after, since_before)
        windowed = since_after is not None or since_before is not None
        filtered = not_followed_back or windowed
        whole = None if filtered else lambda: self._length(user_id, "followers")
        return self._list(call, limit, progress, whole)

    def following(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        not_following_back: bool = False,
        celebrities_only: bool = False,
        since_after: datetime | None = None,
        since_before: datetime | None = None,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        """Whom the user follows, newest first, across every page; the filters as the route's
        (``since_after`` / ``since_before``: only follows made in that window)."""
        call = route.following(
            user_id, page_size, not_following_back, celebrities_only, since_after, since_before
        )
        windowed = since_after is not None or since_before is not None
        filtered = not_following_back or celebrities_only or windowed
        whole = None if filtered else lambda: self._length(user_id, "following")
        return self._list(call, limit, progress, whole)

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
        """Whom the user blocks, newest block first: read as the user itself (or an admin key)."""
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
        """People the viewer follows who follow the target: one page."""
        return await self._call(route.familiar_followers(viewer_id, target_id, limit))

    async def changes(
        self,
        user_id: str,
        side: str = "followers",
        *,
        since: datetime | None = None,
        cursor: str | None = None,
        page_size: int = PAGE_MAX,
    ) -> schemas.ChangePageBody:
        """One page of who followed and unfollowed the user (``side="following"``: whom it
        followed and unfollowed), oldest first, from ``since`` or after ``cursor``. Keep the
        page's ``next_cursor`` and ask with it later for what came since (a poll)."""
        return await self._call(route.changes(user_id, side, since, page_size).after(cursor))

    def changes_since(
        self,
        user_id: str,
        side: str = "followers",
        *,
        since: datetime | None = None,
        limit: int | None = None,
        progress: bool = False,
    ) -> AsyncListing[schemas.ChangePageBody]:
        """Every change of the list from ``since`` (default: all kept) to now, oldest first,
        across pages; ``to_pandas()`` gives them as a DataFrame."""
        call = route.changes(user_id, side, since, PAGE_MAX)

        async def fetch(cursor: str | None) -> schemas.ChangePageBody:
            page = await self._call(call.after(cursor))
            # the walk ends at the last page ready now (a poll would go on with the cursor)
            return page if page.more else page.model_copy(update={"next_cursor": None})

        return AsyncListing(fetch, limit, progress)

    async def series(
        self,
        user_id: str,
        side: str = "followers",
        *,
        bucket: str = "hour",
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> schemas.SeriesBody:
        """Gained, lost and the total at each bucket's end (``bucket``: second, minute,
        hour or day),
        from the bucket holding ``start`` to the one holding ``end`` (default: now)."""
        return await self._call(route.series(user_id, side, bucket, start, end))

    async def series_frame(
        self,
        user_id: str,
        side: str = "followers",
        *,
        bucket: str = "hour",
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> pandas.DataFrame:
        """The series as a DataFrame indexed by each bucket's start (UTC): ``gained``,
        ``lost``, ``total`` columns, ready to plot (pandas imported on first use)."""
        import pandas

        found = await self.series(user_id, side, bucket=bucket, start=start, end=end)
        frame = pandas.DataFrame([item.model_dump() for item in found.items])
        if frame.empty:
            return pandas.DataFrame(columns=["gained", "lost", "total"])
        return frame.set_index("start")

    async def distance(self, user_id: str, target_id: str) -> schemas.DistanceBody:
        """How many follows lead from the user to the target (1-3; None: more, or not found
        within the server's budget, then ``exact`` is false)."""
        return await self._call(route.distance(user_id, target_id))

    async def familiar_followers_many(
        self, viewer_id: str, target_ids: Iterable[str]
    ) -> schemas.FamiliarManyBody:
        """For many targets in one call (1-40, FAMILIAR_MAX_IDS): per target, how many the
        viewer follows who follow it, and the first few; ``hidden`` where the target's
        followers are hidden from the client's viewer."""
        return await self._call(route.familiar_followers_many(viewer_id, target_ids))

    async def count_audience(self, expr: dict[str, Any]) -> schemas.AudienceCountBody:
        """How many users an expression over lists names, e.g.
        ``{"and": [{"followers": "a"}, {"followers": "b"}, {"not": {"followers": "c"}}]}``:
        exact, or a lower bound with an ``estimate`` past the server's bound."""
        return await self._call(route.count_audience(expr))

    def audience(
        self,
        expr: dict[str, Any],
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.AudiencePageBody]:
        """The users an expression over lists names, in id order, across every page."""

        async def fetch(cursor: str | None) -> schemas.AudiencePageBody:
            return await self._call(route.audience_page(expr, page_size, cursor))

        return AsyncListing(fetch, limit, progress)

    # -- curated lists ------------------------------------------------------------------------

    async def create_list(
        self,
        user_id: str,
        name: str,
        *,
        description: str = "",
        private: bool = False,
        purpose: str = "curate",
        exclusive: bool = False,
    ) -> schemas.ListBody:
        """A new list of the user's (``purpose``: curate or moderation; an ``exclusive``
        curate list takes its members' posts out of the owner's home timeline). Not retried
        after a lost answer: a second try would make a second list."""
        call = route.create_list(user_id, name, description, private, purpose, exclusive)
        return await self._call(call)

    async def get_list(self, user_id: str, list_id: str) -> schemas.ListBody:
        """One list, as the viewer may see it (NotFound for a list it may not)."""
        return await self._call(route.get_list(user_id, list_id))

    async def update_list(
        self,
        user_id: str,
        list_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        private: bool | None = None,
        exclusive: bool | None = None,
    ) -> schemas.ListBody:
        """Rename, describe, make private or public, exclusive or not; what is not given is
        kept."""
        call = route.update_list(user_id, list_id, name, description, private, exclusive)
        return await self._call(call)

    async def delete_list(self, user_id: str, list_id: str) -> schemas.ListDeletedBody:
        return await self._call(route.delete_list(user_id, list_id))

    def lists(
        self,
        user_id: str,
        *,
        member: str | None = None,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.ListsBody]:
        """The user's lists the viewer may see, newest first; with ``member``, only those that
        hold that user."""
        return self._list(route.lists(user_id, member, page_size), limit, progress)

    def list_timeline(
        self,
        user_id: str,
        list_id: str,
        *,
        limit: int | None = None,
        page_size: int = TIMELINE_PAGE,
        progress: bool = False,
    ) -> AsyncListing[schemas.TimelineBody]:
        """The posts of a list's members, newest first, as the viewer may read them."""
        return self._list(route.list_timeline(user_id, list_id, page_size), limit, progress)

    def list_members(
        self,
        user_id: str,
        list_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.PageBody]:
        """A list's active members, newest first."""
        return self._list(route.list_members(user_id, list_id, page_size), limit, progress)

    async def change_list_members(
        self,
        user_id: str,
        list_id: str,
        *,
        add: Iterable[str] = (),
        remove: Iterable[str] = (),
    ) -> schemas.MembersChangeBody:
        """Add and remove members in one change, all or nothing."""
        return await self._call(route.change_list_members(user_id, list_id, add, remove))

    async def follow_list(self, user_id: str, list_id: str) -> schemas.ListFollowBody:
        """Follow a curate list the user may see, to read its timeline."""
        return await self._call(route.follow_list(user_id, list_id))

    async def unfollow_list(self, user_id: str, list_id: str) -> schemas.ListFollowBody:
        return await self._call(route.unfollow_list(user_id, list_id))

    def followed_lists(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.FollowedListsBody]:
        """The lists the user follows and may still see, newest follow first."""
        return self._list(route.followed_lists(user_id, page_size), limit, progress)

    async def subscribe_list(
        self, user_id: str, list_id: str, action: str
    ) -> schemas.SubscriptionBody:
        """Mute or block (``action``) every member of a moderation list, kept current as it
        changes; the work runs in the background (``state``: applying, then applied)."""
        return await self._call(route.subscribe_list(user_id, list_id, action))

    async def get_list_subscription(self, user_id: str, list_id: str) -> schemas.SubscriptionBody:
        return await self._call(route.get_list_subscription(user_id, list_id))

    async def unsubscribe_list(self, user_id: str, list_id: str) -> schemas.UnsubscribedBody:
        """End a subscription: exactly what it did is undone, in the background."""
        return await self._call(route.unsubscribe_list(user_id, list_id))

    def list_subscriptions(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.SubscriptionsBody]:
        """The user's subscriptions to moderation lists, newest first."""
        return self._list(route.list_subscriptions(user_id, page_size), limit, progress)

    async def except_list_member(
        self, user_id: str, list_id: str, target_id: str, *, excepted: bool = True
    ) -> schemas.ExceptionBody:
        """Except a member from a subscription (``excepted=False``: end the exception)."""
        return await self._call(route.except_list_member(user_id, list_id, target_id, excepted))

    def subscription_exceptions(
        self,
        user_id: str,
        list_id: str,
        *,
        limit: int | None = None,
        page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> AsyncListing[schemas.ExceptionsBody]:
        """The members a subscription leaves alone, by id."""
        call = route.subscription_exceptions(user_id, list_id, page_size)
        return self._list(call, limit, progress)

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
        """(actor, target, kind, at) events, 1-1,000 a call."""
        return await self._call(route.record_interactions(events))

    async def suggestions(self, user_id: str, *, limit: int = 10) -> schemas.SuggestionsBody:
        return await self._call(route.suggestions(user_id, limit))

    async def similar(self, user_id: str, seed_id: str, *, limit: int = 10) -> schemas.SimilarBody:
        """Accounts similar to ``seed_id`` for the user (right after it followed the seed)."""
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
        scope): what `graphsvc ranker report` prints; ``.to_pandas()`` for a notebook."""
        return await self._call(route.suggestions_report())

    # -- timelines ------------------------------------------------------------------------

    async def publish(
        self,
        user_id: str,
        post_id: str,
        at: datetime,
        *,
        language: str | None = None,
        reblog: bool = False,
    ) -> schemas.PostBody:
        """Publish a post's id and time (idempotent); ``mode`` says push or pull. Its
        ``language`` and whether it is a ``reblog`` are what followers' options filter by."""
        return await self._call(route.publish(user_id, post_id, at, language, reblog))

    async def post(self, user_id: str, post_id: str) -> schemas.PostBody:
        """A post's state and fan-out progress (``mode``, ``followers`` and ``pushed`` are
        None, with ``counts_hidden``, where the author hides its counts from the viewer)."""
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
        """The home timeline, newest first, across pages (``limit``: stop early)."""
        return self._list(route.timeline(user_id, page_size), limit, progress)

    async def explain_suggestion(self, user_id: str, target_id: str) -> schemas.ExplanationBody:
        """Why the target is, or is not, suggested to the user (the ``internal`` scope)."""
        return await self._call(route.explain_suggestion(user_id, target_id))

    async def affinities(self, user_id: str, *, limit: int = 20) -> schemas.AffinitiesBody:
        """Whom the user is closest to (the ``internal`` scope)."""
        return await self._call(route.affinities(user_id, limit))

    # -- portable relations ------------------------------------------------------------------

    async def export_relations(self, user_id: str, kind: str) -> schemas.ExportBody:
        """The user's follows, blocks, mutes or lists (``kind``), newest first, as JSON rows
        (the API also writes Mastodon's CSV: ``GET .../exports/{kind}``)."""
        return await self._call(route.export_relations(user_id, kind))

    async def import_relations(
        self, user_id: str, kind: str, rows: Sequence[dict[str, Any]], *, mode: str = "merge"
    ) -> schemas.ImportBody:
        """Import rows as ``export_relations`` writes them (``mode``: merge or overwrite); the
        worker applies them: follow ``import_status`` until its ``state`` is done."""
        return await self._call(route.import_relations(user_id, kind, rows, mode))

    async def import_status(self, user_id: str, kind: str, import_id: str) -> schemas.ImportBody:
        return await self._call(route.import_status(user_id, kind, import_id))

    # -- moves -------------------------------------------------------------------------------

    async def add_alias(self, user_id: str, old: str) -> schemas.AliasBody:
        """``user_id`` names ``old`` as an account it is also known as (``old`` may then move
        to it)."""
        return await self._call(route.add_alias(user_id, old))

    async def aliases(self, user_id: str) -> schemas.AliasesBody:
        return await self._call(route.aliases(user_id))

    async def move(self, user_id: str, target: str) -> schemas.MoveBody:
        """Move ``user_id`` to ``target`` (which names it as an alias): its followers follow
        the target instead, in the background; ``move_state`` says how far it got."""
        return await self._call(route.move(user_id, target))

    async def move_state(self, user_id: str) -> schemas.MoveBody:
        return await self._call(route.move_state(user_id))

    # -- the Server-Sent Events streams ------------------------------------------------------

    async def new_followers(
        self, user_id: str, *, last_event_id: str | None = None
    ) -> AsyncIterator[NewFollower]:
        """The user's new followers as they follow (Server-Sent Events); pass the last
        ``entry_id`` as ``last_event_id`` to replay what came after it. A replay the server cut
        short (its ``gap`` event) is logged as a warning; a stream the server ends (a revoked
        key) raises the ``GraphError`` its ``closed`` event names."""
        path = f"/v1/users/{_u(user_id)}/events"
        async for kind, entry_id, data in self._events(path, last_event_id):
            if kind in ("follower", "follow_request"):
                yield NewFollower(
                    follower=data.get("follower") or data["requester"],
                    since=datetime.fromisoformat(data["since"]),
                    event_id=data["event_id"],
                    entry_id=entry_id,
                    requested=kind == "follow_request",
                )

    async def notifications(
        self, user_id: str, *, last_event_id: str | None = None
    ) -> AsyncIterator[Notification]:
        """The user's notifications as they are rung (Server-Sent Events): a ``posted`` one
        for each new post of an author whose bell it rings; resumed, gaps and ends as
        ``new_followers``."""
        path = f"/v1/users/{_u(user_id)}/notifications"
        async for kind, entry_id, data in self._events(path, last_event_id):
            if kind == "posted":
                yield Notification(
                    author=data["author"],
                    post_id=data["post_id"],
                    at=datetime.fromisoformat(data["at"]),
                    entry_id=entry_id,
                )

    async def _events(
        self, path: str, last_event_id: str | None
    ) -> AsyncIterator[tuple[str, str, dict[str, Any]]]:
        """(event, id, data) of a Server-Sent Events stream; a ``gap`` logged, a ``closed``
        raised as the ``GraphError`` it names."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        async with self._http.stream("GET", path, headers=headers, timeout=None) as response:
            if response.status_code >= 400:
                await response.aread()
                raise error_for(
                    response.status_code,
                    response.json(),
                    dict(response.headers),
                    "GET",
                    str(response.request.url),
                )
            event: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line.startswith(":"):
                    continue
                if line:
                    name, _, value = line.partition(":")
                    event[name] = value.removeprefix(" ")
                    continue
                kind, data = event.get("event", ""), json.loads(event.get("data") or "{}")
                if kind == "gap":
                    log.warning("%s: %s", path, data.get("message"))
                elif kind == "closed":
                    raise GraphError(
                        data.get("message", "stream closed"),
                        code=known_code(data.get("code", "")),
                        server_code=data.get("code"),
                        method="GET",
                        url=str(response.request.url),
                    )
                elif kind:
                    yield kind, event.get("id", ""), data
                event = {}

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
