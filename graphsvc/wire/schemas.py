"""The JSON bodies of the HTTP API, shared by the routes (which validate and document them)
and by ``graphsvc.client`` (which returns them typed): one definition, so the client cannot
drift from the server. Plain pydantic: importing this module pulls in no server library.

Where a rule comes from a deployment's settings (a page's largest size, the interaction
kinds), the schema carries a mark that the server's OpenAPI document fills in
(``api/http/contract.py``); the client takes what the server says.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer

from graphsvc.wire.ids import USER_ID_PATTERN
from graphsvc.wire.scopes import Scope

if TYPE_CHECKING:
    import pandas

SETTINGS_MARK = "x-settings"
# Documented, and checked by the services (whose 422 names the parameter in the one shape).
ID_SCHEMA: dict[str, Any] = {"pattern": USER_ID_PATTERN, "minLength": 1, "maxLength": 64}
# A recommendation id as issued (opaque): documented here, checked by the services, whose 422
# names the field.
RECOMMENDATION_ID_SCHEMA: dict[str, Any] = {
    "pattern": r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$",
    "maxLength": 512,
}
RECOMMENDATION_ID_DOC = (
    "the recommendation_id of the suggestions answer this comes from: counted once for the "
    "ranker version that ranked it, for a target that answer served (a malformed, altered or another user's id is a 422 "
    "invalid_recommendation_id that changes nothing; one older than "
    "SUGGEST_RECOMMENDATION_TTL_SECONDS is accepted and not counted)"
)


def _iso_text(value: Any) -> Any:
    # pydantic would also take a number (seconds since the epoch); the contract says text
    if not isinstance(value, str):
        raise ValueError("an ISO-8601 date-time string is required")
    return value


IsoDateTime = Annotated[datetime, BeforeValidator(_iso_text)]


def _utc_text(moment: datetime) -> str:
    # the server's one time format (domain.model.iso_utc): six decimals always, and Z
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="microseconds") + "Z"


# A time the API answers: ISO-8601 UTC text on the wire, a timezone-aware datetime in Python.
UtcTime = Annotated[datetime, PlainSerializer(_utc_text, return_type=str, when_used="json")]


def settings_extra(**keywords: str) -> dict[str, Any]:
    """``json_schema_extra`` that takes keywords from settings: ``maximum="page_limit_max"``;
    ``id_list`` names the largest count of a comma-separated id list; ``enum_keys`` a dict
    setting whose keys are the allowed values."""
    return {SETTINGS_MARK: keywords}


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid_user_id"])
    message: str = Field(examples=["target_id 'bad id' is not a valid user id"])


class ErrorBody(BaseModel):
    error: ErrorDetail


class HealthBody(BaseModel):
    neo4j: str = Field(examples=["ok"])
    redis: str = Field(
        examples=["ok"], description="ok, or unavailable (reads are then served from Neo4j)"
    )


class ReadyBody(HealthBody):
    ranker: str = Field(
        examples=["ok"],
        description="ok, or stale: why the suggestion ranker is stale (the model trained on a "
        "graph that changed past RANKER_TRAIN_GROWTH, a failed training, none served); "
        "information only, the service still serves",
    )


class LiveBody(BaseModel):
    status: str = Field(examples=["ok"])


class Item(BaseModel):
    user_id: str
    since: UtcTime = Field(
        description="when the follow (in a list of blocks: the block) was made, ISO-8601 UTC",
        examples=["2026-11-22T10:00:00.000000Z"],
    )


class PageBody(BaseModel):
    items: list[Item]
    next_cursor: str | None = Field(
        description="pass as ?cursor= for the next page; null at the end"
    )


class ChangeItem(BaseModel):
    at: UtcTime = Field(
        description="when the follow was made or ended, ISO-8601 UTC",
        examples=["2026-11-22T10:00:00.000000Z"],
    )
    user_id: str = Field(description="the other user: the follower, or the one followed")
    op: Literal["follow", "unfollow"]
    cause: Literal["unfollow", "removed", "block"] | None = Field(
        default=None,
        description="why a follow ended, told to the user who ended it; the other user of "
        "the change is told `unfollow` when the follower ended it, nothing otherwise; anyone "
        "else nothing (null)",
    )


class ChangePageBody(BaseModel):
    items: list[ChangeItem]
    next_cursor: str = Field(
        description="pass as ?cursor= for what came after this page, now or later (a poll): "
        "given even when the page is empty"
    )
    more: bool = Field(description="whether another page is ready now")


class SeriesItem(BaseModel):
    start: UtcTime = Field(description="the bucket's start, ISO-8601 UTC")
    gained: int = Field(description="follows made in the bucket (those ended since included)")
    lost: int = Field(description="follows ended in the bucket")
    total: int = Field(description="the list's length at the bucket's end (now, for the open one)")


class SeriesBody(BaseModel):
    bucket: Literal["second", "minute", "hour", "day"]
    items: list[SeriesItem] = Field(description="every bucket of the span, oldest first")


class FamiliarBody(BaseModel):
    total: int | None = Field(
        description="how many the user follows who follow the target; null when the target's "
        "followers are hidden from the viewer"
    )
    items: list[str] = Field(description="the first FAMILIAR_SHOWN_MAX, newest follow first")
    hidden: bool = Field(description="the target's followers are hidden from the viewer")


class FamiliarManyBody(BaseModel):
    familiar: dict[str, FamiliarBody] = Field(description="per target, in the order asked")


class DistanceBody(BaseModel):
    distance: int | None = Field(
        description="follows from the user to the target: 1 (it follows the target), 2, 3; "
        "null: more than 3, or not found within the budget (then exact is false)"
    )
    exact: bool = Field(
        description="false when DISTANCE_EDGES_MAX stopped the search before it could tell"
    )
    edges_read: int = Field(description="follows the search read")


class IdPageBody(BaseModel):
    total: int = Field(
        description="size of the whole list: exact, or a lower bound when total_is_lower_bound"
    )
    items: list[str]
    next_cursor: str | None = Field(
        default=None,
        description="the next page's cursor; a page may hold fewer than `limit` items (even "
        "none) and still have one: the request examined as many entries as one may "
        "(COMMON_SCAN_MAX) before it filled up",
    )
    total_is_lower_bound: bool = Field(
        default=False,
        description="true when the list is too long to count on every request (common lists "
        "past COMMON_SCAN_MAX entries of the shorter list): then at least `total` users are "
        "in it",
    )


class FollowBody(BaseModel):
    following: bool = Field(description="false when the follow waits for approval (requested)")
    requested: bool = Field(
        default=False,
        description="the followed user is locked: a pending follow request was made (202), "
        "which it approves or rejects; withdrawn by an unfollow",
    )
    created: bool = Field(description="false when the follow (or the request) already existed")
    notifying: bool = Field(
        default=False, description="the follower gets a `posted` notification for each post"
    )
    showing_reblogs: bool = Field(
        default=True, description="the followed user's reblogs reach the home timeline"
    )
    languages: list[str] | None = Field(
        default=None,
        description="only posts in these languages (and those without one) reach the home "
        "timeline; null: every language",
    )
    options_changed: bool = Field(
        default=False, description="a repeated follow (or request) whose options it changed"
    )


class UnfollowBody(BaseModel):
    following: bool
    removed: bool = Field(description="false when there was no follow to remove")
    withdrawn: bool = Field(default=False, description="a pending follow request was withdrawn")


class FollowRequestBody(BaseModel):
    """An answer to a follow request."""

    following: bool = Field(description="the requester follows the user now")
    created: bool = Field(
        default=False, description="the approval made the follow (false: it existed already)"
    )
    removed: bool = Field(
        default=False, description="a rejection removed a pending request (false: none was)"
    )


class ApproveAllBody(BaseModel):
    approving: bool = Field(
        description="every pending request is being approved, in the background"
    )
    pending: int = Field(
        description="requests waiting when the approval started, as the user's incoming list "
        "and its counts' pending_requests count them (from requesters it is shown)"
    )


class RemoveFollowerBody(BaseModel):
    followed_by: bool = Field(description="whether the id still follows the user: false")
    removed: bool = Field(
        description="false when the id did not follow the user (a pending follow request of "
        "it is no follow: it stays pending)"
    )


AUDIENCE_DOC = (
    'an expression over users\' lists: {"followers": id} or {"following": id} (one user\'s '
    'list), {"and": [...]}, {"or": [...]}, {"not": {...}}; every alternative needs a list it '
    "does not negate; at most AUDIENCE_OPERANDS_MAX lists and AUDIENCE_CONJUNCTIONS_MAX "
    "alternatives once expanded"
)
AUDIENCE_EXAMPLE = {
    "and": [{"followers": "ada"}, {"followers": "bob"}, {"not": {"following": "carol"}}]
}


class AudienceIn(BaseModel):
    expr: dict[str, Any] = Field(description=AUDIENCE_DOC, examples=[AUDIENCE_EXAMPLE])


class AudiencePageIn(AudienceIn):
    limit: int | None = Field(
        default=None,
        description="page size, 1-PAGE_LIMIT_MAX (default PAGE_LIMIT_DEFAULT)",
        json_schema_extra={"minimum": 1, **settings_extra(maximum="page_limit_max")},
    )
    cursor: str | None = Field(
        default=None, description="next_cursor of the previous page; absent for the first"
    )


class AudienceCountBody(BaseModel):
    total: int = Field(
        description="users in the audience: exact, or those found among the entries examined "
        "when total_is_lower_bound"
    )
    total_is_lower_bound: bool
    estimate: int | None = Field(
        description="an estimate of the whole audience (the found share of the entries "
        "examined, scaled to the lists walked) when total_is_lower_bound; null when exact"
    )
    examined: int = Field(description="list entries the count read")


class AudiencePageBody(BaseModel):
    items: list[str] = Field(description="user ids in id order")
    next_cursor: str | None = Field(
        description="the next page's cursor; a page may be short (even empty) and still have "
        "one: its walk examined AUDIENCE_SCAN_MAX entries first; null at the end"
    )


class RemoveFollowersIn(BaseModel):
    # The bound is documented here and checked by the service, so a request breaking it gets
    # the service's too_many_ids, as any other caller does.
    ids: list[str] = Field(
        description="the followers to remove (1-REMOVE_FOLLOWERS_MAX_IDS; a repeated id "
        "counts once)",
        json_schema_extra={
            "minItems": 1,
            **settings_extra(maxItems="remove_followers_max_ids"),
            "items": {"type": "string", **ID_SCHEMA},
        },
        examples=[["bob", "carol"]],
    )


class RemoveFollowersBody(BaseModel):
    removed: dict[str, bool] = Field(
        description="each id asked for, once, in the order given: false when it did not "
        "follow the user (a pending follow request of it stays pending)"
    )


class RelationshipBody(BaseModel):
    following: bool = Field(description="the user follows this id")
    followed_by: bool = Field(description="this id follows the user")
    mutual: bool
    blocking: bool = Field(description="the user blocks this id")
    blocked_by: bool = Field(description="this id blocks the user")
    requested: bool = Field(default=False, description="the user asked to follow this id (pending)")
    requested_by: bool = Field(
        default=False, description="this id asked to follow the user (pending)"
    )
    muting: bool = Field(default=False, description="the user mutes this id (a mute in effect)")
    muting_expires_at: UtcTime | None = Field(
        default=None, description="when that mute expires, ISO-8601 UTC; null: never, or no mute"
    )
    notifying: bool | None = Field(
        default=None,
        description="the user's follow (or request) of this id rings its bell; null: neither",
    )
    showing_reblogs: bool | None = Field(
        default=None, description="this id's reblogs reach the user's home timeline"
    )
    languages: list[str] | None = Field(
        default=None,
        description="the languages of this id's posts the user's home timeline takes; null: "
        "every language, or no follow",
    )
    known_followers: FamiliarBody | None = Field(
        default=None,
        description="with known_followers=true (1-FAMILIAR_MAX_IDS ids): the people the user "
        "follows who follow this id, as /familiar-followers?ids= answers; absent otherwise",
    )


class RelationshipsBody(BaseModel):
    relationships: dict[str, RelationshipBody] = Field(description="keyed by the ids asked for")


class BlockBody(BaseModel):
    blocking: bool
    created: bool = Field(description="false when the block already existed")
    removed_follows: int = Field(description="follows removed by this block (0-2)")


class UnblockBody(BaseModel):
    blocking: bool
    removed: bool = Field(description="false when there was no block to remove")


_HIDDEN = "; null when the user hides its counts from the viewer (counts_hidden)"


class CountsBody(BaseModel):
    followers: int | None = Field(description="exact, every follower" + _HIDDEN)
    following: int | None = Field(description="exact, every followed user" + _HIDDEN)
    followers_active: int | None = Field(
        description="followers that are not suspended or spam" + _HIDDEN
    )
    following_active: int | None = Field(
        description="followed users that are not suspended or spam" + _HIDDEN
    )
    friends: int | None = Field(description="active mutual follows" + _HIDDEN)
    celebrity: bool | None = Field(description="followers >= CELEBRITY_FOLLOWERS" + _HIDDEN)
    pending_requests: int | None = Field(
        default=None,
        description="follow requests waiting for the user's answer: shown to the user itself "
        "only (null for anyone else)",
    )
    counts_hidden: bool = Field(
        default=False,
        description="the user's counts_visibility hides every count from the viewer (the "
        "owner, and an admin or internal key naming no viewer, always see them)",
    )


VisibilityName = Literal["public", "followers", "mutuals", "private"]
CountsVisibilityName = Literal["public", "private"]


class PrivacyBody(BaseModel):
    """A user's privacy settings (``PUT`` takes any of them; the others keep their values)."""

    followers_visibility: VisibilityName = Field(
        description="who sees the user's followers: everyone (public), its followers, its "
        "mutual follows, or itself alone (private)"
    )
    following_visibility: VisibilityName = Field(
        description="who sees whom the user follows, as followers_visibility"
    )
    counts_visibility: Literal["public", "private"] = Field(
        description="private: every count is null for anyone but the user"
    )
    discoverable: bool = Field(description="false: never suggested to others")
    locked: bool = Field(description="true: new follows wait for the user's approval")


class PrivacyRequest(BaseModel):
    """A partial update: the settings given change, the rest keep their values (strictly
    typed: ``0`` is no boolean)."""

    model_config = {"extra": "forbid", "strict": True}

    followers_visibility: VisibilityName | None = None
    following_visibility: VisibilityName | None = None
    counts_visibility: CountsVisibilityName | None = None
    discoverable: bool | None = None
    locked: bool | None = None


class MuteIn(BaseModel):
    model_config = {"strict": True}  # as the schema says: 0 is no boolean, "60" no number

    notifications: bool = Field(
        default=False, description="also mute the muted user's new-follower notifications"
    )
    duration_seconds: int | None = Field(
        default=None,
        ge=1,
        description="the mute expires this long from now (1 to MUTE_MAX_SECONDS); null: never",
        json_schema_extra=settings_extra(maximum="mute_max_seconds"),
    )


class MuteBody(BaseModel):
    muting: bool
    created: bool = Field(description="false when the mute existed (its options are set again)")
    expires_at: UtcTime | None = Field(description="ISO-8601 UTC; null: never")
    notifications: bool = Field(description="new-follower notifications are muted too")


class UnmuteBody(BaseModel):
    muting: bool
    removed: bool = Field(description="false when there was no mute in effect to remove")


class MuteItem(BaseModel):
    user_id: str
    since: UtcTime = Field(description="when the mute began, ISO-8601 UTC")
    expires_at: UtcTime | None = Field(description="ISO-8601 UTC; null: never")
    notifications: bool


class MutesBody(BaseModel):
    items: list[MuteItem]
    next_cursor: str | None = Field(
        description="pass as ?cursor= for the next page; null at the end"
    )


class StatusRequest(BaseModel):
    status: Literal["active", "suspended", "spam"]


class StatusBody(BaseModel):
    user_id: str
    exists: bool
    status: str
    fanout_pending: bool = Field(description="counts depending on the status still updating")
    erasing: bool = Field(description="the user is being erased")
    approving_requests: bool = Field(
        default=False, description="its pending follow requests are being approved"
    )
    progress: dict[str, int] | None = Field(
        default=None, description="edges done by this process's running job, when it has one"
    )


class EraseBody(BaseModel):
    user_id: str
    state: Literal["erasing", "absent"]


class InteractionIn(BaseModel):
    actor: str = Field(examples=["alice"], json_schema_extra=ID_SCHEMA)
    target: str = Field(examples=["bob"], json_schema_extra=ID_SCHEMA)
    kind: str = Field(
        description="a kind of INTERACTION_WEIGHTS",
        examples=["message"],
        json_schema_extra=settings_extra(enum_keys="interaction_weights"),
    )
    at: IsoDateTime = Field(
        description="when it happened (ISO-8601; UTC if no zone; not in the future)"
    )


class AcceptedBody(BaseModel):
    accepted: int = Field(description="events buffered; affinity reflects them within seconds")


class AffinityItem(BaseModel):
    user_id: str
    affinity: float


class AffinitiesBody(BaseModel):
    items: list[AffinityItem]


class Reasons(BaseModel):
    mutual_count: int = Field(description="people you follow who follow them")
    via: list[str] = Field(description="up to 3 of those, closest to you first")


class SuggestionItem(BaseModel):
    user_id: str
    score: float = Field(description="the ranker's probability that the user follows them")
    reasons: Reasons
    sources: list[str] = Field(
        description="which sources found them: friends_of_friends, follows_you (a follower "
        "you do not follow), co_followers (followed by people who follow what you follow), "
        "walks (visited by random walks from you), three_hop, and to fill a short list "
        "trending (gaining the most followers lately) and popular (the most followed)"
    )


class FeatureContribution(BaseModel):
    name: str
    raw: float = Field(
        description="the value the candidate queries gave; for a target that hides its counts, "
        "the count features' (followers, follows, paths_share) are the model's centre"
    )
    transformed: float = Field(description="as the model sees it: log-scaled, standardised")
    weight: float
    contribution: float = Field(description="weight x transformed: its part of the score")


class ImpressionDiscount(BaseModel):
    shows: int = Field(description="how often the target was shown to the user")
    factor: float = Field(description="what its probability is multiplied by when served")


class ExplanationBody(BaseModel):
    user_id: str
    target_id: str
    suggested: bool = Field(description="among the 50 the next computation keeps")
    rank: int | None = Field(
        description="1-based: in the kept list, else among every candidate ranked; null when "
        "the target was no candidate"
    )
    sources: list[str] = Field(description="the sources that found the target")
    excluded: str | None = Field(
        description="why a target is not suggested: the first exclusion that removed it (self, "
        "unknown_user, inactive, erasing, not_discoverable, followed, follow_requested, "
        "blocked, muted, dismissed), ranked_below_kept, or not_reached (no source reached it "
        "within the bounds); null when suggested"
    )
    model_version: int = Field(description="the ranker's version (0: the built-in default)")
    features: list[FeatureContribution] = Field(description="empty when no candidate")
    intercept: float
    score: float | None = Field(description="log-odds: the intercept plus the contributions")
    probability: float | None = Field(description="the score's logistic: the served score")
    impressions: ImpressionDiscount
    counts_hidden: bool = Field(
        default=False,
        description="the target hides its counts, so its count features were scored at the "
        "model's centre: they add nothing, whatever the counts",
    )


class SuggestionsBody(BaseModel):
    items: list[SuggestionItem]
    recommendation_id: str = Field(
        description="signed id of this answer (the ranker version, the user, when, the users "
        "served): send it back with a follow, impressions or a dismissal of its suggestions so "
        "they count for that version"
    )

    def to_pandas(self) -> pandas.DataFrame:
        """One row per suggestion, reasons flattened (pandas, an optional extra of the client)."""
        import pandas

        return pandas.DataFrame(
            [
                {
                    "user_id": s.user_id,
                    "score": s.score,
                    "mutual_count": s.reasons.mutual_count,
                    "via": s.reasons.via,
                    "sources": s.sources,
                }
                for s in self.items
            ]
        )


class SimilarReasons(BaseModel):
    seed: str = Field(description="the account they are similar to")
    shared_followers: int = Field(
        description="of the seed's newest followers read (SUGGEST_SIMILAR_FOLLOWERS), those who "
        "follow them too"
    )


class SimilarItem(BaseModel):
    user_id: str
    score: float = Field(
        description="co-follow similarity: the shared followers (each weighed down by how "
        "many it follows) over the square root of their followers"
    )
    reasons: SimilarReasons
    sources: list[str] = Field(description="similar_to")


class SimilarBody(BaseModel):
    items: list[SimilarItem]


class DismissBody(BaseModel):
    dismissed: bool
    created: bool = Field(description="false when it was dismissed before")


class ImpressionsIn(BaseModel):
    # The 1-50 bound is documented here and checked by the service, so a request breaking it
    # gets the service's too_many_ids, as any other caller does.
    ids: list[str] = Field(
        description="the suggested users shown (1-50; a repeated id counts once)",
        json_schema_extra={"minItems": 1, "maxItems": 50, "items": {"type": "string", **ID_SCHEMA}},
        examples=[["bob", "carol"]],
    )
    recommendation_id: str | None = Field(
        default=None, description=RECOMMENDATION_ID_DOC, json_schema_extra=RECOMMENDATION_ID_SCHEMA
    )


class VersionFiguresBody(BaseModel):
    version: int = Field(description="the ranker version (0: the built-in default)")
    answers: int = Field(description="answers of suggestions served")
    items: int = Field(description="suggestions in them (a page's size, before privacy checks)")
    shown: int = Field(description="shows recorded as impressions carrying its ids")
    follows: int = Field(description="follows made carrying its ids, each counted once")
    dismissals: int = Field(description="new dismissals carrying its ids")
    precision_shown: float | None = Field(description="follows per item shown")
    precision_served: float | None = Field(description="follows per item served")
    offline_precision_at_10: float | None = Field(
        description="the stored model's precision@10 on its validation users (none for 0)"
    )


class SuggestionsReportBody(BaseModel):
    model: str = Field(description="the ranker's name (RANKER_MODEL_NAME)")
    versions: list[VersionFiguresBody]

    def to_pandas(self) -> pandas.DataFrame:
        """One row per version (pandas, an optional extra of the client)."""
        import pandas

        return pandas.DataFrame([v.model_dump() for v in self.versions])


class RecordedBody(BaseModel):
    recorded: int = Field(description="distinct users whose show was counted")
    ignored: int = Field(
        default=0,
        description="distinct users whose show was not counted: not suggested to this user "
        "lately (SUGGEST_SERVED_SECONDS), or past SUGGEST_IMPRESSIONS_MAX",
    )


class KeyRequest(BaseModel):
    scopes: list[Scope] = Field(min_length=1, max_length=4, examples=[["read", "write"]])
    user: str | None = Field(
        default=None,
        pattern=USER_ID_PATTERN,
        description="bind the key to this acting user (omit for a service key)",
    )
    name: str = Field(default="", max_length=100, examples=["timeline service"])


class KeyBody(BaseModel):
    id: str
    scopes: list[Scope]
    user: str | None
    name: str
    created: UtcTime = Field(description="ISO-8601 UTC")
    revoked: bool


class NewKeyBody(KeyBody):
    key: str = Field(description="the key itself: shown in this response only, never again")


class KeysBody(BaseModel):
    items: list[KeyBody]


class RevokeBody(BaseModel):
    id: str
    revoked: bool
    changed: bool = Field(description="false when the key was already revoked")


class PostIn(BaseModel):
    at: IsoDateTime = Field(
        description="when it was posted (ISO-8601; UTC if no zone; at most "
        "TIMELINE_MAX_FUTURE_SECONDS ahead of the server's clock)",
        examples=["2026-11-23T10:00:00Z"],
    )
    language: str | None = Field(
        default=None,
        strict=True,
        description="its language, an ISO 639 code (two or three lowercase letters): "
        "followers who keep only some languages of the author read it only in those",
        json_schema_extra={"pattern": "^[a-z]{2,3}$"},
    )
    reblog: bool = Field(
        default=False,
        strict=True,  # as the schema says: 0 is no boolean
        description="a reblog of another post: followers who turned the author's reblogs off "
        "do not read it",
    )


class PostBody(BaseModel):
    post_id: str
    author: str
    at: UtcTime | None = Field(description="the post's time, ISO-8601 UTC (null once deleted)")
    mode: Literal["push", "pull", ""] | None = Field(
        description="push: fanned out into followers' home timelines; pull: merged on read (the "
        "author is a celebrity); empty once deleted" + _HIDDEN
    )
    state: Literal["fanning_out", "done", "published", "deleting", "deleted"] = Field(
        description="published: fanning_out or done, for a viewer the author hides its counts "
        "from (how long a fan-out runs tells how many followers it walks)"
    )
    followers: int | None = Field(description="followers the fan-out has walked so far" + _HIDDEN)
    pushed: int | None = Field(
        description="home timelines it was pushed into (active readers)" + _HIDDEN
    )
    language: str | None = Field(default=None, description="as published (null: none said)")
    reblog: bool = Field(default=False, description="as published")
    created: bool | None = Field(
        default=None, description="on publish: false when the post existed already"
    )
    counts_hidden: bool = Field(
        default=False,
        description="the author's counts_visibility hides mode, followers and pushed from the "
        "viewer (the author, and an admin or internal key naming no viewer, always see them)",
    )


class PostDeletedBody(BaseModel):
    deleted: bool = Field(description="false for an unknown post")
    state: Literal["deleting", "absent"]


class TimelineItem(BaseModel):
    post_id: str
    author: str
    at: UtcTime = Field(description="ISO-8601 UTC")


class TimelineBody(BaseModel):
    items: list[TimelineItem]
    next_cursor: str | None = Field(description="null on the last page")


NON_BLANK = r"\S"  # some character that is not a blank (a name is trimmed, then must remain)
LIST_ID_SCHEMA: dict[str, Any] = {"pattern": r"^[0-9a-f]{20}$", "minLength": 20, "maxLength": 20}


class ListIn(BaseModel):
    model_config = {"strict": True}

    # The lengths are documented here and checked by the service, whose 409 names the bound.
    name: str = Field(
        description="1 to LIST_NAME_MAX characters (surrounding blanks dropped)",
        json_schema_extra={
            "minLength": 1,
            "pattern": NON_BLANK,
            **settings_extra(maxLength="list_name_max"),
        },
        examples=["Graph people"],
    )
    description: str = Field(
        default="",
        description="up to LIST_DESCRIPTION_MAX characters",
        json_schema_extra=settings_extra(maxLength="list_description_max"),
    )
    private: bool = Field(
        default=False, description="true: the list and its members are the owner's alone"
    )
    purpose: Literal["curate", "moderation"] = Field(
        default="curate",
        description="curate: people to read; moderation: people to keep away (blocks between "
        "the owner and a member leave it be)",
    )
    exclusive: bool = Field(
        default=False,
        description="a curate list only: its members' posts are read in the list's timeline, "
        "no longer in the owner's home timeline",
    )


class ListPatchIn(BaseModel):
    # At least one field; a field left out is kept (no field takes null).
    model_config = {"strict": True, "json_schema_extra": {"minProperties": 1}}

    name: str = Field(
        default=None,  # type: ignore[assignment]  # left out: kept
        description="a new name (1 to LIST_NAME_MAX characters)",
        json_schema_extra={"pattern": NON_BLANK, **settings_extra(maxLength="list_name_max")},
    )
    description: str = Field(
        default=None,  # type: ignore[assignment]
        description="a new description (up to LIST_DESCRIPTION_MAX characters)",
        json_schema_extra=settings_extra(maxLength="list_description_max"),
    )
    private: bool = Field(
        default=None,  # type: ignore[assignment]
        description="make it private (true) or public (false)",
    )
    exclusive: bool = Field(
        default=None,  # type: ignore[assignment]
        description="a curate list: its members' posts leave the owner's home timeline (true) "
        "or come back (false)",
    )


class ListBody(BaseModel):
    id: str = Field(json_schema_extra=LIST_ID_SCHEMA)
    owner: str
    name: str
    description: str
    private: bool
    purpose: Literal["curate", "moderation"]
    members: int = Field(description="active members (suspended and spam accounts left out)")
    exclusive: bool | None = Field(
        description="whether its members' posts leave the owner's home timeline; the owner's "
        "alone to know (null for anyone else)"
    )
    created_at: UtcTime = Field(description="ISO-8601 UTC")
    updated_at: UtcTime = Field(description="the last change of the list or its members")


class ListsBody(BaseModel):
    items: list[ListBody]
    next_cursor: str | None = Field(description="null on the last page")


class FollowedListBody(ListBody):
    followed_at: UtcTime = Field(description="when the user followed the list")


class FollowedListsBody(BaseModel):
    items: list[FollowedListBody]
    next_cursor: str | None = Field(description="null on the last page")


class ListFollowBody(BaseModel):
    following: bool
    changed: bool = Field(description="false when the follow already was (or was not) there")


class SubscriptionIn(BaseModel):
    model_config = {"strict": True}

    action: Literal["mute", "block"] = Field(
        description="what the subscription does to every member of the list", examples=["block"]
    )


class SubscriptionBody(BaseModel):
    list_id: str = Field(json_schema_extra=LIST_ID_SCHEMA)
    owner: str | None = Field(description="the list's owner; null once the list lapsed")
    name: str | None = Field(description="the list's name; null once the list lapsed")
    action: Literal["mute", "block"]
    since: UtcTime = Field(description="when the user subscribed")
    state: Literal["applying", "applied", "lapsed"] = Field(
        description="applying while its work is due; applied when it matches the list; lapsed "
        "when the user may no longer see the list (what it did is undone)"
    )
    applied: int = Field(description="people it mutes or blocks now")
    refused: int = Field(description="members a bound (MAX_BLOCKS, MAX_MUTES) kept it from")
    exceptions: int = Field(description="members it leaves alone")


class SubscriptionsBody(BaseModel):
    items: list[SubscriptionBody]
    next_cursor: str | None = Field(description="null on the last page")


class UnsubscribedBody(BaseModel):
    unsubscribed: bool = Field(description="false when there was no subscription")


class ExceptionBody(BaseModel):
    excepted: bool
    changed: bool = Field(description="false when it already was (or was not) excepted")


class ExceptionsBody(BaseModel):
    items: list[str] = Field(description="the excepted members' ids, in id order")
    next_cursor: str | None = Field(description="null on the last page")


class ListDeletedBody(BaseModel):
    deleted: bool = Field(description="false when the owner had no such list")


class MembersIn(BaseModel):
    # The bound is documented here and checked by the service (too_many_ids).
    add: list[str] = Field(
        default_factory=list,
        description="users to add (a member already in is left as it is)",
        json_schema_extra={
            **settings_extra(maxItems="list_batch_max"),
            "items": {"type": "string", **ID_SCHEMA},
        },
        examples=[["bob", "carol"]],
    )
    remove: list[str] = Field(
        default_factory=list,
        description="members to remove (a user not in the list is ignored); add and remove "
        "name at most LIST_BATCH_MAX users together",
        json_schema_extra={
            **settings_extra(maxItems="list_batch_max"),
            "items": {"type": "string", **ID_SCHEMA},
        },
        examples=[["dave"]],
    )


class MembersRefused(BaseModel):
    user_id: str
    reason: Literal["blocked", "erasing"]


class MembersChangeBody(BaseModel):
    added: list[str]
    removed: list[str]
    refused: list[MembersRefused] = Field(
        description="users not added: blocked (a curate list, and a block between the user and "
        "the owner), erasing (the user is being erased)"
    )
    members: int = Field(description="active members after the change")


class RefusedRowBody(BaseModel):
    row: int = Field(description="the row's line in the file (CSV), or its position (JSON)")
    value: str = Field(description="the row as sent, or the account it names")
    reason: str = Field(
        description="malformed, unknown_user, self, blocked, suspended, erasing, limit, or "
        "the error code of the rule that refused it"
    )
    message: str


class ImportBody(BaseModel):
    id: str = Field(description="the import's id: the same import sent again has the same id")
    kind: Literal["following", "blocks", "mutes", "lists"]
    mode: Literal["merge", "overwrite"]
    rows: int = Field(description="the file's data rows")
    state: Literal["queued", "running", "done"]
    done: int = Field(description="rows handled so far (applied or refused)")
    applied: int = Field(
        description="rows applied (a follow, block, mute or member made, or already there)"
    )
    removed: int = Field(description="entries an overwrite removed (the file did not hold them)")
    refused: list[RefusedRowBody] = Field(description="each row not applied, and why")


class ExportBody(BaseModel):
    kind: Literal["following", "blocks", "mutes", "lists"]
    items: list[dict[str, Any]] = Field(
        description="newest first; following: {account, show_reblogs, notify, languages}; "
        "blocks: {account}; mutes: {account, hide_notifications}; lists: {list, account}"
    )


class AliasBody(BaseModel):
    alias: bool = Field(description="the user names this account as one it is also known as")
    created: bool = Field(default=False, description="false when it named it already")


class UnaliasBody(BaseModel):
    alias: bool
    removed: bool = Field(description="false when the user did not name this account")


class AliasItem(BaseModel):
    user_id: str
    since: UtcTime


class AliasesBody(BaseModel):
    items: list[AliasItem] = Field(description="newest first, ALIASES_MAX at most")


class MoveIn(BaseModel):
    model_config = {"strict": True, "extra": "forbid"}

    target: str = Field(
        description="the account to move to; it must name this one as an alias first",
        json_schema_extra=ID_SCHEMA,
    )


class MoveBody(BaseModel):
    moved_to: str | None = Field(description="the account it moved to; null: it never moved")
    moved_at: UtcTime | None
    state: Literal["none", "moving", "done"] = Field(
        description="moving: its followers are being moved to the new account"
    )
    followers_moved: int = Field(description="followers the move took so far")
    created: bool | None = Field(default=None, description="the move is new (POST only)")
