"""Every public route, written once. Each method describes its request and hands it to
``_call`` (one answer) or ``_list`` (a paged list); ``GraphClient`` runs them as they come,
``AsyncGraphClient`` returns awaitables, so the two clients cannot differ in what they ask."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import quote

from graphsvc import schemas
from graphsvc.client._core import Call
from graphsvc.client.errors import BadRequest
from graphsvc.domain.errors import quoted
from graphsvc.domain.ids import ID_RULE, is_user_id

PAGE_MAX = 200  # the server's default PAGE_LIMIT_MAX; a smaller one is answered with a 422


def _u(user_id: str) -> str:
    """An id as one path segment. An id the server would refuse is refused here, before
    anything is sent: an id of dots would be removed by httpx's URL normalisation and
    ``unfollow("alice", "..")`` would reach ``DELETE /v1/users/alice``."""
    if not isinstance(user_id, str) or not is_user_id(user_id):
        raise BadRequest(
            f"{quoted(user_id)} is not a valid id: use {ID_RULE}", code="invalid_user_id"
        )
    return quote(user_id, safe="")


class Routes:
    def _call(self, call: Call) -> Any:
        raise NotImplementedError

    def _list(self, call: Call, limit: int | None, progress: bool) -> Any:
        raise NotImplementedError

    # -- relations ------------------------------------------------------------------------

    def follow(self, user_id: str, target_id: str) -> Any:
        """Follow (idempotent): ``FollowBody(following, created)``."""
        return self._call(Call("PUT", f"/v1/users/{_u(user_id)}/following/{_u(target_id)}",
                               model=schemas.FollowBody))  # fmt: skip

    def unfollow(self, user_id: str, target_id: str) -> Any:
        return self._call(Call("DELETE", f"/v1/users/{_u(user_id)}/following/{_u(target_id)}",
                               model=schemas.UnfollowBody))  # fmt: skip

    def block(self, user_id: str, target_id: str) -> Any:
        return self._call(Call("PUT", f"/v1/users/{_u(user_id)}/blocks/{_u(target_id)}",
                               model=schemas.BlockBody))  # fmt: skip

    def unblock(self, user_id: str, target_id: str) -> Any:
        return self._call(Call("DELETE", f"/v1/users/{_u(user_id)}/blocks/{_u(target_id)}",
                               model=schemas.UnblockBody))  # fmt: skip

    def relationships(self, user_id: str, ids: Iterable[str]) -> Any:
        """How the user relates to 1-100 others: ``RelationshipsBody``."""
        params = {"ids": ",".join(ids)}
        return self._call(Call("GET", f"/v1/users/{_u(user_id)}/relationships", params,
                               model=schemas.RelationshipsBody))  # fmt: skip

    # -- lists and counts -------------------------------------------------------------------

    def counts(self, user_id: str) -> Any:
        return self._call(Call("GET", f"/v1/users/{_u(user_id)}/counts",
                               model=schemas.CountsBody))  # fmt: skip

    def followers(
        self, user_id: str, *, limit: int | None = None, page_size: int = PAGE_MAX,
        not_followed_back: bool = False, progress: bool = False,
    ) -> Any:  # fmt: skip
        """Who follows the user, newest first, across every page (``limit``: stop early)."""
        params: dict[str, Any] = {"limit": page_size}
        if not_followed_back:
            params["not_followed_back"] = "true"
        call = Call("GET", f"/v1/users/{_u(user_id)}/followers", params, model=schemas.PageBody)
        return self._list(call, limit, progress)

    def following(
        self, user_id: str, *, limit: int | None = None, page_size: int = PAGE_MAX,
        not_following_back: bool = False, celebrities_only: bool = False, progress: bool = False,
    ) -> Any:  # fmt: skip
        params: dict[str, Any] = {"limit": page_size}
        if not_following_back:
            params["not_following_back"] = "true"
        if celebrities_only:
            params["celebrities_only"] = "true"
        call = Call("GET", f"/v1/users/{_u(user_id)}/following", params, model=schemas.PageBody)
        return self._list(call, limit, progress)

    def friends(
        self, user_id: str, *, limit: int | None = None, page_size: int = PAGE_MAX,
        progress: bool = False,
    ) -> Any:  # fmt: skip
        call = Call("GET", f"/v1/users/{_u(user_id)}/friends", {"limit": page_size},
                    model=schemas.PageBody)  # fmt: skip
        return self._list(call, limit, progress)

    def common_following(
        self, user_id: str, other_id: str, *, limit: int | None = None,
        page_size: int = PAGE_MAX, progress: bool = False,
    ) -> Any:  # fmt: skip
        call = Call("GET", f"/v1/users/{_u(user_id)}/common-following/{_u(other_id)}",
                    {"limit": page_size}, model=schemas.IdPageBody)  # fmt: skip
        return self._list(call, limit, progress)

    def common_followers(
        self, user_id: str, other_id: str, *, limit: int | None = None,
        page_size: int = PAGE_MAX, progress: bool = False,
    ) -> Any:  # fmt: skip
        call = Call("GET", f"/v1/users/{_u(user_id)}/common-followers/{_u(other_id)}",
                    {"limit": page_size}, model=schemas.IdPageBody)  # fmt: skip
        return self._list(call, limit, progress)

    def familiar_followers(self, viewer_id: str, target_id: str, *, limit: int = 20) -> Any:
        """People the viewer follows who follow the target: ``IdPageBody`` (one page)."""
        return self._call(Call("GET",
                               f"/v1/users/{_u(viewer_id)}/familiar-followers/{_u(target_id)}",
                               {"limit": limit}, model=schemas.IdPageBody))  # fmt: skip

    # -- moderation -------------------------------------------------------------------------

    def status(self, user_id: str) -> Any:
        return self._call(Call("GET", f"/v1/users/{_u(user_id)}/status", model=schemas.StatusBody))

    def set_status(self, user_id: str, status: str) -> Any:
        return self._call(Call("PUT", f"/v1/users/{_u(user_id)}/status", body={"status": status},
                               model=schemas.StatusBody))  # fmt: skip

    def erase(self, user_id: str) -> Any:
        return self._call(Call("DELETE", f"/v1/users/{_u(user_id)}", model=schemas.EraseBody))

    # -- people you may know ----------------------------------------------------------------

    def record_interactions(self, events: Iterable[tuple[str, str, str, datetime]]) -> Any:
        """(actor, target, kind, at) events, 1-1,000 a call: ``AcceptedBody``."""
        body = [
            {"actor": a, "target": t, "kind": k, "at": at.isoformat()} for a, t, k, at in events
        ]
        return self._call(Call("POST", "/v1/interactions", body=body, model=schemas.AcceptedBody,
                               idempotent=False))  # fmt: skip

    def suggestions(self, user_id: str, *, limit: int = 10) -> Any:
        return self._call(Call("GET", f"/v1/users/{_u(user_id)}/suggestions", {"limit": limit},
                               model=schemas.SuggestionsBody))  # fmt: skip

    def dismiss(self, user_id: str, target_id: str) -> Any:
        return self._call(Call("DELETE", f"/v1/users/{_u(user_id)}/suggestions/{_u(target_id)}",
                               model=schemas.DismissBody))  # fmt: skip

    def record_impressions(self, user_id: str, ids: Iterable[str]) -> Any:
        return self._call(Call("POST", f"/v1/users/{_u(user_id)}/suggestions/impressions",
                               body={"ids": list(ids)}, model=schemas.RecordedBody,
                               idempotent=False))  # fmt: skip

    # -- timelines ------------------------------------------------------------------------

    def publish(self, user_id: str, post_id: str, at: datetime) -> Any:
        """Publish a post's id and time (idempotent): ``PostBody`` (``mode`` push or pull)."""
        return self._call(Call("PUT", f"/v1/users/{_u(user_id)}/posts/{_u(post_id)}",
                               body={"at": at.isoformat()}, model=schemas.PostBody))  # fmt: skip

    def post(self, user_id: str, post_id: str) -> Any:
        """A post's state and fan-out progress: ``PostBody``."""
        return self._call(Call("GET", f"/v1/users/{_u(user_id)}/posts/{_u(post_id)}",
                               model=schemas.PostBody))  # fmt: skip

    def delete_post(self, user_id: str, post_id: str) -> Any:
        return self._call(Call("DELETE", f"/v1/users/{_u(user_id)}/posts/{_u(post_id)}",
                               model=schemas.PostDeletedBody))  # fmt: skip

    def timeline(
        self, user_id: str, *, limit: int | None = None, page_size: int = 50,
        progress: bool = False,
    ) -> Any:  # fmt: skip
        """The home timeline, newest first, across pages (``limit``: stop early)."""
        call = Call("GET", f"/v1/users/{_u(user_id)}/timeline", {"limit": page_size},
                    model=schemas.TimelineBody)  # fmt: skip
        return self._list(call, limit, progress)

    def affinities(self, user_id: str, *, limit: int = 20) -> Any:
        """Whom the user is closest to (the ``internal`` scope)."""
        return self._call(Call("GET", f"/v1/internal/users/{_u(user_id)}/affinities",
                               {"limit": limit}, model=schemas.AffinitiesBody))  # fmt: skip
