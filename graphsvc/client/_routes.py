"""Every public route's request, written once: its path, query, body, the model of its answer
and whether a lost answer may be retried. ``GraphClient`` runs each as it comes and
``AsyncGraphClient`` awaits it, one method per route with the same signature in both (a unit
test holds them to it), so the two clients cannot differ in what they ask. The defaults
(``limit``, ``page_size``) live in the clients' signatures, where callers read them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from graphsvc.client._core import Call
from graphsvc.client.errors import BadRequest
from graphsvc.wire import schemas
from graphsvc.wire.ids import ID_RULE, is_user_id, quoted

PAGE_MAX = 200  # the server's default PAGE_LIMIT_MAX; a smaller one is answered with a 422
TIMELINE_PAGE = 50


def _u(user_id: str) -> str:
    """An id as one path segment. An id the server would refuse is refused here, before
    anything is sent: an id of dots would be removed by httpx's URL normalisation and
    ``unfollow("alice", "..")`` would reach ``DELETE /v1/users/alice``."""
    if not isinstance(user_id, str) or not is_user_id(user_id):
        raise BadRequest(
            f"{quoted(user_id)} is not a valid id: use {ID_RULE}", code="invalid_user_id"
        )
    return quote(user_id, safe="")


def _user(user_id: str, *rest: str) -> str:
    return "/".join([f"/v1/users/{_u(user_id)}", *rest])


# -- relations ----------------------------------------------------------------------------


def _carried(recommendation_id: str | None) -> dict[str, Any]:
    """The query of a request that may carry a recommendation id (absent: none)."""
    return {} if recommendation_id is None else {"recommendation_id": recommendation_id}


def follow(
    user_id: str,
    target_id: str,
    recommendation_id: str | None,
    notify: bool | None = None,
    reblogs: bool | None = None,
    languages: Iterable[str] | None = None,
) -> Call[schemas.FollowBody]:
    query = _carried(recommendation_id)
    for name, flag in (("notify", notify), ("reblogs", reblogs)):
        if flag is not None:
            query[name] = "true" if flag else "false"
    if languages is not None:
        query["languages"] = ",".join(languages)
    return Call("PUT", _user(user_id, "following", _u(target_id)), query, model=schemas.FollowBody)


def unfollow(user_id: str, target_id: str) -> Call[schemas.UnfollowBody]:
    return Call("DELETE", _user(user_id, "following", _u(target_id)), model=schemas.UnfollowBody)


def remove_follower(user_id: str, follower_id: str) -> Call[schemas.RemoveFollowerBody]:
    return Call(
        "DELETE", _user(user_id, "followers", _u(follower_id)), model=schemas.RemoveFollowerBody
    )


def remove_followers(user_id: str, ids: Iterable[str]) -> Call[schemas.RemoveFollowersBody]:
    return Call(
        "POST",
        _user(user_id, "followers", "remove"),
        body={"ids": list(ids)},
        model=schemas.RemoveFollowersBody,
    )


def block(user_id: str, target_id: str) -> Call[schemas.BlockBody]:
    return Call("PUT", _user(user_id, "blocks", _u(target_id)), model=schemas.BlockBody)


def unblock(user_id: str, target_id: str) -> Call[schemas.UnblockBody]:
    return Call("DELETE", _user(user_id, "blocks", _u(target_id)), model=schemas.UnblockBody)


def mute(
    user_id: str, target_id: str, notifications: bool, duration_seconds: int | None
) -> Call[schemas.MuteBody]:
    body = {"notifications": notifications, "duration_seconds": duration_seconds}
    return Call("PUT", _user(user_id, "mutes", _u(target_id)), body=body, model=schemas.MuteBody)


def unmute(user_id: str, target_id: str) -> Call[schemas.UnmuteBody]:
    return Call("DELETE", _user(user_id, "mutes", _u(target_id)), model=schemas.UnmuteBody)


def mutes(user_id: str, page_size: int) -> Call[schemas.MutesBody]:
    return Call("GET", _user(user_id, "mutes"), _page(page_size), model=schemas.MutesBody)


def relationships(
    user_id: str, ids: Iterable[str], known_followers: bool = False
) -> Call[schemas.RelationshipsBody]:
    query = {"ids": ",".join(ids), **({"known_followers": "true"} if known_followers else {})}
    return Call("GET", _user(user_id, "relationships"), query, model=schemas.RelationshipsBody)


# -- follow requests ----------------------------------------------------------------------


def follow_requests(user_id: str, page_size: int) -> Call[schemas.PageBody]:
    return Call("GET", _user(user_id, "follow-requests"), _page(page_size), model=schemas.PageBody)


def sent_follow_requests(user_id: str, page_size: int) -> Call[schemas.PageBody]:
    path = _user(user_id, "follow-requests", "sent")
    return Call("GET", path, _page(page_size), model=schemas.PageBody)


def approve_follow_request(user_id: str, requester_id: str) -> Call[schemas.FollowRequestBody]:
    path = _user(user_id, "follow-requests", _u(requester_id))
    return Call("PUT", path, model=schemas.FollowRequestBody)


def reject_follow_request(user_id: str, requester_id: str) -> Call[schemas.FollowRequestBody]:
    path = _user(user_id, "follow-requests", _u(requester_id))
    return Call("DELETE", path, model=schemas.FollowRequestBody)


def approve_all_follow_requests(user_id: str) -> Call[schemas.ApproveAllBody]:
    path = _user(user_id, "follow-requests", "approve-all")
    return Call("POST", path, model=schemas.ApproveAllBody)


# -- privacy ------------------------------------------------------------------------------


def privacy(user_id: str) -> Call[schemas.PrivacyBody]:
    return Call("GET", _user(user_id, "privacy"), model=schemas.PrivacyBody)


def set_privacy(user_id: str, settings: dict[str, Any]) -> Call[schemas.PrivacyBody]:
    try:
        body = schemas.PrivacyRequest(**settings).model_dump(exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadRequest(
            f"{'.'.join(map(str, first['loc']))}: {first['msg']}", code="invalid_argument"
        ) from None
    return Call("PUT", _user(user_id, "privacy"), body=body, model=schemas.PrivacyBody)


# -- follow pages and counts --------------------------------------------------------------


def counts(user_id: str) -> Call[schemas.CountsBody]:
    return Call("GET", _user(user_id, "counts"), model=schemas.CountsBody)


def _page(page_size: int, **filters: bool) -> dict[str, Any]:
    """A page's query: its size, and the filters asked for (an unset one is not sent)."""
    return {"limit": page_size, **{name: "true" for name, on in filters.items() if on}}


def _window(since_after: datetime | None, since_before: datetime | None) -> dict[str, str]:
    """A time window's bounds as the query sends them (ISO-8601); None: unbounded."""
    bounds = {"since_after": since_after, "since_before": since_before}
    return {name: moment.isoformat() for name, moment in bounds.items() if moment is not None}


def followers(
    user_id: str,
    page_size: int,
    not_followed_back: bool,
    since_after: datetime | None = None,
    since_before: datetime | None = None,
) -> Call[schemas.PageBody]:
    params = _page(page_size, not_followed_back=not_followed_back)
    params.update(_window(since_after, since_before))
    return Call("GET", _user(user_id, "followers"), params, model=schemas.PageBody)


def following(
    user_id: str,
    page_size: int,
    not_following_back: bool,
    celebrities_only: bool,
    since_after: datetime | None = None,
    since_before: datetime | None = None,
) -> Call[schemas.PageBody]:
    params = _page(
        page_size, not_following_back=not_following_back, celebrities_only=celebrities_only
    )
    params.update(_window(since_after, since_before))
    return Call("GET", _user(user_id, "following"), params, model=schemas.PageBody)


def friends(user_id: str, page_size: int) -> Call[schemas.PageBody]:
    return Call("GET", _user(user_id, "friends"), _page(page_size), model=schemas.PageBody)


def blocks(user_id: str, page_size: int) -> Call[schemas.PageBody]:
    return Call("GET", _user(user_id, "blocks"), _page(page_size), model=schemas.PageBody)


def common_following(user_id: str, other_id: str, page_size: int) -> Call[schemas.IdPageBody]:
    return Call(
        "GET",
        _user(user_id, "common-following", _u(other_id)),
        _page(page_size),
        model=schemas.IdPageBody,
    )


def common_followers(user_id: str, other_id: str, page_size: int) -> Call[schemas.IdPageBody]:
    return Call(
        "GET",
        _user(user_id, "common-followers", _u(other_id)),
        _page(page_size),
        model=schemas.IdPageBody,
    )


def distance(user_id: str, target_id: str) -> Call[schemas.DistanceBody]:
    return Call("GET", _user(user_id, "distance", _u(target_id)), model=schemas.DistanceBody)


def familiar_followers_many(
    viewer_id: str, target_ids: Iterable[str]
) -> Call[schemas.FamiliarManyBody]:
    ids = list(target_ids)
    for target in ids:
        _u(target)  # each refused here as a path id would be
    return Call(
        "GET",
        _user(viewer_id, "familiar-followers"),
        {"ids": ",".join(ids)},
        model=schemas.FamiliarManyBody,
    )


def familiar_followers(viewer_id: str, target_id: str, limit: int) -> Call[schemas.IdPageBody]:
    return Call(
        "GET",
        _user(viewer_id, "familiar-followers", _u(target_id)),
        {"limit": limit},
        model=schemas.IdPageBody,
    )


def _side(side: str) -> str:
    """One of a user's two lists, as a path segment; anything else is refused here."""
    if side not in ("followers", "following"):
        raise BadRequest(f"side must be 'followers' or 'following', got {side!r}")
    return side


def _moment(moment: datetime | None) -> dict[str, Any]:
    """A moment as the query sends it (ISO-8601; one without a zone is UTC's); None: none."""
    return {} if moment is None else {"since": moment.isoformat()}


def changes(
    user_id: str, side: str, since: datetime | None, page_size: int
) -> Call[schemas.ChangePageBody]:
    return Call(
        "GET",
        _user(user_id, _side(side), "changes"),
        {"limit": page_size, **_moment(since)},
        model=schemas.ChangePageBody,
    )


def series(
    user_id: str, side: str, bucket: str, start: datetime | None, end: datetime | None
) -> Call[schemas.SeriesBody]:
    bounds = {"from": start, "to": end}
    query = {name: moment.isoformat() for name, moment in bounds.items() if moment is not None}
    return Call(
        "GET",
        _user(user_id, _side(side), "series"),
        {"bucket": bucket, **query},
        model=schemas.SeriesBody,
    )


def count_audience(expr: dict[str, Any]) -> Call[schemas.AudienceCountBody]:
    return Call("POST", "/v1/audiences/count", body={"expr": expr}, model=schemas.AudienceCountBody)


def audience_page(
    expr: dict[str, Any], page_size: int, cursor: str | None
) -> Call[schemas.AudiencePageBody]:
    """The page after ``cursor``, which this route takes in its body (a read: retried as
    any read is)."""
    body = {"expr": expr, "limit": page_size, **({"cursor": cursor} if cursor else {})}
    return Call("POST", "/v1/audiences/page", body=body, model=schemas.AudiencePageBody)


# -- curated lists ------------------------------------------------------------------------


def _list_path(user_id: str, list_id: str, *rest: str) -> str:
    return _user(user_id, "lists", _u(list_id), *rest)


def create_list(
    user_id: str, name: str, description: str, private: bool, purpose: str, exclusive: bool
) -> Call[schemas.ListBody]:
    body = {
        "name": name,
        "description": description,
        "private": private,
        "purpose": purpose,
        "exclusive": exclusive,
    }
    path = _user(user_id, "lists")
    return Call("POST", path, body=body, model=schemas.ListBody, idempotent=False)


def get_list(user_id: str, list_id: str) -> Call[schemas.ListBody]:
    return Call("GET", _list_path(user_id, list_id), model=schemas.ListBody)


def update_list(
    user_id: str,
    list_id: str,
    name: str | None,
    description: str | None,
    private: bool | None,
    exclusive: bool | None,
) -> Call[schemas.ListBody]:
    changes = {
        "name": name,
        "description": description,
        "private": private,
        "exclusive": exclusive,
    }
    body = {field: value for field, value in changes.items() if value is not None}
    return Call("PATCH", _list_path(user_id, list_id), body=body, model=schemas.ListBody)


def delete_list(user_id: str, list_id: str) -> Call[schemas.ListDeletedBody]:
    return Call("DELETE", _list_path(user_id, list_id), model=schemas.ListDeletedBody)


def lists(user_id: str, member: str | None, page_size: int) -> Call[schemas.ListsBody]:
    query = {**_page(page_size), **({"member": member} if member is not None else {})}
    return Call("GET", _user(user_id, "lists"), query, model=schemas.ListsBody)


def list_timeline(user_id: str, list_id: str, page_size: int) -> Call[schemas.TimelineBody]:
    path = _list_path(user_id, list_id, "timeline")
    return Call("GET", path, _page(page_size), model=schemas.TimelineBody)


def follow_list(user_id: str, list_id: str) -> Call[schemas.ListFollowBody]:
    path = _user(user_id, "followed-lists", _u(list_id))
    return Call("PUT", path, model=schemas.ListFollowBody)


def unfollow_list(user_id: str, list_id: str) -> Call[schemas.ListFollowBody]:
    path = _user(user_id, "followed-lists", _u(list_id))
    return Call("DELETE", path, model=schemas.ListFollowBody)


def followed_lists(user_id: str, page_size: int) -> Call[schemas.FollowedListsBody]:
    path = _user(user_id, "followed-lists")
    return Call("GET", path, _page(page_size), model=schemas.FollowedListsBody)


def _subscription_path(user_id: str, list_id: str, *rest: str) -> str:
    return _user(user_id, "list-subscriptions", _u(list_id), *rest)


def subscribe_list(user_id: str, list_id: str, action: str) -> Call[schemas.SubscriptionBody]:
    path = _subscription_path(user_id, list_id)
    return Call("PUT", path, body={"action": action}, model=schemas.SubscriptionBody)


def get_list_subscription(user_id: str, list_id: str) -> Call[schemas.SubscriptionBody]:
    return Call("GET", _subscription_path(user_id, list_id), model=schemas.SubscriptionBody)


def unsubscribe_list(user_id: str, list_id: str) -> Call[schemas.UnsubscribedBody]:
    return Call("DELETE", _subscription_path(user_id, list_id), model=schemas.UnsubscribedBody)


def list_subscriptions(user_id: str, page_size: int) -> Call[schemas.SubscriptionsBody]:
    path = _user(user_id, "list-subscriptions")
    return Call("GET", path, _page(page_size), model=schemas.SubscriptionsBody)


def except_list_member(
    user_id: str, list_id: str, target_id: str, excepted: bool
) -> Call[schemas.ExceptionBody]:
    path = _subscription_path(user_id, list_id, "exceptions", _u(target_id))
    return Call("PUT" if excepted else "DELETE", path, model=schemas.ExceptionBody)


def subscription_exceptions(
    user_id: str, list_id: str, page_size: int
) -> Call[schemas.ExceptionsBody]:
    path = _subscription_path(user_id, list_id, "exceptions")
    return Call("GET", path, _page(page_size), model=schemas.ExceptionsBody)


def list_members(user_id: str, list_id: str, page_size: int) -> Call[schemas.PageBody]:
    path = _list_path(user_id, list_id, "members")
    return Call("GET", path, _page(page_size), model=schemas.PageBody)


def change_list_members(
    user_id: str, list_id: str, add: Iterable[str], remove: Iterable[str]
) -> Call[schemas.MembersChangeBody]:
    body = {"add": list(add), "remove": list(remove)}
    path = _list_path(user_id, list_id, "members")
    return Call("POST", path, body=body, model=schemas.MembersChangeBody)


# -- moderation ---------------------------------------------------------------------------


def status(user_id: str) -> Call[schemas.StatusBody]:
    return Call("GET", _user(user_id, "status"), model=schemas.StatusBody)


def set_status(user_id: str, status: str) -> Call[schemas.StatusBody]:
    return Call("PUT", _user(user_id, "status"), body={"status": status}, model=schemas.StatusBody)


def erase(user_id: str) -> Call[schemas.EraseBody]:
    return Call("DELETE", _user(user_id), model=schemas.EraseBody)


# -- people you may know ------------------------------------------------------------------


def record_interactions(
    events: Iterable[tuple[str, str, str, datetime]],
) -> Call[schemas.AcceptedBody]:
    body = [{"actor": a, "target": t, "kind": k, "at": at.isoformat()} for a, t, k, at in events]
    return Call("POST", "/v1/interactions", body=body, model=schemas.AcceptedBody, idempotent=False)


def suggestions(user_id: str, limit: int) -> Call[schemas.SuggestionsBody]:
    return Call(
        "GET", _user(user_id, "suggestions"), {"limit": limit}, model=schemas.SuggestionsBody
    )


def similar(user_id: str, seed_id: str, limit: int) -> Call[schemas.SimilarBody]:
    return Call(
        "GET",
        _user(user_id, "suggestions", "similar", _u(seed_id)),
        {"limit": limit},
        model=schemas.SimilarBody,
    )


def dismiss(
    user_id: str, target_id: str, recommendation_id: str | None
) -> Call[schemas.DismissBody]:
    return Call(
        "DELETE",
        _user(user_id, "suggestions", _u(target_id)),
        _carried(recommendation_id),
        model=schemas.DismissBody,
    )


def record_impressions(
    user_id: str, ids: Iterable[str], recommendation_id: str | None
) -> Call[schemas.RecordedBody]:
    return Call(
        "POST",
        _user(user_id, "suggestions", "impressions"),
        body={"ids": list(ids), **_carried(recommendation_id)},
        model=schemas.RecordedBody,
        idempotent=False,
    )


# -- timelines ----------------------------------------------------------------------------


def publish(
    user_id: str, post_id: str, at: datetime, language: str | None = None, reblog: bool = False
) -> Call[schemas.PostBody]:
    body: dict[str, Any] = {"at": at.isoformat()}
    if language is not None:
        body["language"] = language
    if reblog:
        body["reblog"] = True
    return Call("PUT", _user(user_id, "posts", _u(post_id)), body=body, model=schemas.PostBody)


def post(user_id: str, post_id: str) -> Call[schemas.PostBody]:
    return Call("GET", _user(user_id, "posts", _u(post_id)), model=schemas.PostBody)


def delete_post(user_id: str, post_id: str) -> Call[schemas.PostDeletedBody]:
    return Call("DELETE", _user(user_id, "posts", _u(post_id)), model=schemas.PostDeletedBody)


def timeline(user_id: str, page_size: int) -> Call[schemas.TimelineBody]:
    return Call("GET", _user(user_id, "timeline"), _page(page_size), model=schemas.TimelineBody)


def suggestions_report() -> Call[schemas.SuggestionsReportBody]:
    return Call("GET", "/v1/internal/suggestions/report", model=schemas.SuggestionsReportBody)


def explain_suggestion(user_id: str, target_id: str) -> Call[schemas.ExplanationBody]:
    return Call(
        "GET",
        f"/v1/internal/users/{_u(user_id)}/suggestions/explain/{_u(target_id)}",
        model=schemas.ExplanationBody,
    )


def affinities(user_id: str, limit: int) -> Call[schemas.AffinitiesBody]:
    return Call(
        "GET",
        f"/v1/internal/users/{_u(user_id)}/affinities",
        {"limit": limit},
        model=schemas.AffinitiesBody,
    )


# -- portable relations ------------------------------------------------------------------------


def export_relations(user_id: str, kind: str) -> Call[schemas.ExportBody]:
    return Call(
        "GET", _user(user_id, "exports", kind), {"format": "json"}, model=schemas.ExportBody
    )


def import_relations(
    user_id: str, kind: str, rows: Sequence[dict[str, Any]], mode: str
) -> Call[schemas.ImportBody]:
    return Call(
        "POST",
        _user(user_id, "imports", kind),
        {"mode": mode},
        body=list(rows),
        model=schemas.ImportBody,
    )


def import_status(user_id: str, kind: str, import_id: str) -> Call[schemas.ImportBody]:
    path = _user(user_id, "imports", kind, _u(import_id))
    return Call("GET", path, model=schemas.ImportBody)


# -- moves -------------------------------------------------------------------------------------


def add_alias(user_id: str, old: str) -> Call[schemas.AliasBody]:
    return Call("PUT", _user(user_id, "aliases", _u(old)), model=schemas.AliasBody)


def aliases(user_id: str) -> Call[schemas.AliasesBody]:
    return Call("GET", _user(user_id, "aliases"), model=schemas.AliasesBody)


def move(user_id: str, target: str) -> Call[schemas.MoveBody]:
    return Call("POST", _user(user_id, "move"), body={"target": target}, model=schemas.MoveBody)


def move_state(user_id: str) -> Call[schemas.MoveBody]:
    return Call("GET", _user(user_id, "move"), model=schemas.MoveBody)
