"""Domain errors: each knows its HTTP status and a stable machine-readable code.

The service layer raises these; the API turns them into ``{"error": {"code", "message"}}``
without knowing which use case failed. Adapters never raise them for HTTP reasons.

Which status: 422 when the request breaks the published contract (the OpenAPI schema states
every id pattern, bound and enum, so a caller or generated SDK can check before sending);
400 for an opaque token the schema cannot describe (a tampered cursor), but for a
recommendation_id, an optional field the request works without, whose 422 names it; 403 when a
well-formed request is refused by a rule the schema cannot state (acting on oneself, a
block, a suspension, an event dated in the future); 409 for a conflict with the present
state; 429 and 503 to retry later.
"""

from __future__ import annotations

import math


class GraphError(Exception):
    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers


class InvalidUserId(GraphError):
    status = 422
    code = "invalid_user_id"


class SelfAction(GraphError):
    status = 403
    code = "self_action"


class SelfFollow(SelfAction):
    code = "self_follow"


class FutureEvent(GraphError):
    status = 403
    code = "event_in_future"


class InvalidLimit(GraphError):
    status = 422
    code = "invalid_limit"


class InvalidCursor(GraphError):
    status = 400
    code = "invalid_cursor"


class InvalidRecommendationId(GraphError):
    """A recommendation_id the service did not issue to this user: malformed, altered, or
    issued to another user. A field of the request like any other (not a page's position, as
    a cursor is), so a 422 naming it; the request changes nothing."""

    status = 422
    code = "invalid_recommendation_id"


class TooManyIds(GraphError):
    status = 422
    code = "too_many_ids"


class InvalidStatus(GraphError):
    status = 422
    code = "invalid_status"


class Blocked(GraphError):
    status = 403
    code = "blocked"


class UserSuspended(GraphError):
    status = 403
    code = "user_suspended"


class UserErasing(GraphError):
    status = 409
    code = "user_erasing"


class UnknownUser(GraphError):
    """A user the graph does not know, named where only a known user makes sense (the target
    of a dismissal): users are created by follows and blocks only."""

    status = 404
    code = "unknown_user"


class NoFollowRequest(GraphError):
    """An approval of a follow request that is not pending (nor already a follow)."""

    status = 404
    code = "no_follow_request"


class FollowRequestLimit(GraphError):
    """A follow request past FOLLOW_REQUESTS_MAX waiting ones: a conflict with the present
    state, as the following limit is."""

    status = 409
    code = "request_limit"


class FollowingLimit(GraphError):
    status = 409
    code = "following_limit"


class BlockLimit(GraphError):
    status = 409
    code = "block_limit"


class MuteLimit(GraphError):
    status = 409
    code = "mute_limit"


class InvalidDuration(GraphError):
    """A mute's duration_seconds past MUTE_MAX_SECONDS (the schema states the bound)."""

    status = 422
    code = "invalid_duration"


class FollowRateLimit(GraphError):
    status = 429
    code = "follow_rate_limit"


class InvalidInteraction(GraphError):
    status = 422
    code = "invalid_interaction"


class InvalidPost(GraphError):
    """A bad post id or time: both are 422s, the time included, as every body's bad field is."""

    status = 422
    code = "invalid_post"


class InvalidOptions(GraphError):
    """A follow's options or a post's language the schema's patterns let through (too many
    languages), or that a caller sent past the schema."""

    status = 422
    code = "invalid_options"


class InvalidImport(GraphError):
    """An import body that is no CSV or JSON of its kind, or holds more than IMPORT_MAX_ROWS
    rows (a bad row alone is no error: it is refused in the import's result)."""

    status = 422
    code = "invalid_import"


class ImportNotFound(GraphError):
    status = 404
    code = "import_not_found"


class MoveRefused(GraphError):
    """A move a rule refuses: the target does not name the account (not_aliased), moved
    itself, is suspended or being erased, or the account moved too recently (cooldown)."""

    status = 409
    code = "move_refused"


class AliasLimit(GraphError):
    status = 409
    code = "alias_limit"


class PostConflict(GraphError):
    status = 409
    code = "post_conflict"


class PostDeleted(GraphError):
    status = 409
    code = "post_deleted"


class UnknownPost(GraphError):
    status = 404
    code = "post_not_found"


class Overloaded(GraphError):
    status = 503
    code = "overloaded"


class GraphTimeout(Overloaded):
    """A graph statement ran past its transaction timeout and Neo4j cut it off (nothing it
    would have written stands): the request asked for more work than one statement may do,
    or the graph database is too busy. A 503 to retry later."""

    code = "graph_timeout"

    def __init__(self, seconds: float, setting: str) -> None:
        super().__init__(
            f"the graph database did not answer within the {seconds:g} s transaction timeout "
            f"({setting}); retry later",
            {"Retry-After": str(max(1, math.ceil(seconds)))},
        )
        self.seconds = seconds


class StoreWarming(Overloaded):
    """A store is back after an outage and the process is preparing it again (Neo4j planning
    the write statements it forgot): a 503 to retry in a moment."""

    code = "store_warming"


class QueueFull(Overloaded):
    """The background work queue is at its bound: the request is refused before it changes
    anything, to be retried once workers have caught up."""

    code = "queue_full"


class InvalidEventId(GraphError):
    """A Last-Event-ID that is no stream entry id: an opaque token the server handed out, so a
    400 as a tampered cursor is."""

    status = 400
    code = "invalid_last_event_id"


class StreamLimit(GraphError):
    status = 429
    code = "stream_limit"


class InvalidTimeRange(GraphError):
    """A time bound that cannot be served: a range that ends before it starts, or changes
    asked since a moment older than what is kept (the answer would silently miss the
    unfollows already forgotten)."""

    status = 400
    code = "invalid_time_range"


class SinceTooOld(InvalidTimeRange):
    """Changes asked since before CHANGES_RETENTION: the ended follows of then are forgotten,
    so the answer could not be whole."""

    code = "since_too_old"


class ListNotFound(GraphError):
    """No such list of that owner, or none the viewer may see: a private list and the lists
    of an owner who blocks the viewer answer as an unknown one does, so a 404 tells nothing
    of them."""

    status = 404
    code = "list_not_found"


class ListLimit(GraphError):
    """The owner has LIST_OWNER_MAX lists already."""

    status = 409
    code = "list_limit"


class ListFollowLimit(GraphError):
    """The user follows LIST_FOLLOWS_MAX lists already."""

    status = 409
    code = "list_follow_limit"


class SubscriptionLimit(GraphError):
    """The user has LIST_SUBSCRIPTIONS_MAX subscriptions already."""

    status = 409
    code = "subscription_limit"


class SubscriptionNotFound(GraphError):
    """The user has no subscription to that list."""

    status = 404
    code = "subscription_not_found"


class ListPurposeConflict(GraphError):
    """What the request asks of a list its purpose does not allow: a curate list is followed and
    read, a moderation list subscribed to."""

    status = 409
    code = "list_purpose"


class NotListMember(GraphError):
    """A subscription's exception names someone its list does not hold."""

    status = 409
    code = "not_list_member"


class ListMemberLimit(GraphError):
    """The members an addition would leave in a list pass LIST_MEMBERS_MAX."""

    status = 409
    code = "list_member_limit"


class ListTextTooLong(GraphError):
    """A name past LIST_NAME_MAX or a description past LIST_DESCRIPTION_MAX characters."""

    status = 409
    code = "list_text_too_long"


class InvalidList(GraphError):
    """A list request the contract refuses: an empty name, nothing to change, a malformed
    list id."""

    status = 422
    code = "invalid_list"
