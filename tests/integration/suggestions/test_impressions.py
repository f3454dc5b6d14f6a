"""Impression discounting of people you may know, on the real Redis: shows are counted per
user and target, a target shown beyond SUGGEST_IMPRESSIONS_FREE times sinks, a bad request
counts nothing, and a Redis outage serves the list undiscounted. Shows count only for
suggestions served to the user (``served`` notes them as serving a list does)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from graphsvc.adapters.redis.client import open_redis, redis_breaker
from graphsvc.adapters.redis.feedback_counters import FeedbackCounters
from graphsvc.adapters.redis.impressions import ImpressionStore
from graphsvc.bootstrap import Services
from graphsvc.domain.errors import InvalidUserId, SelfAction, TooManyIds
from graphsvc.domain.impressions import discount_factor, rerank
from graphsvc.domain.model import Suggestion
from graphsvc.services.impressions import Impressions
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.settings import Settings
from graphsvc.wire.schemas import RecordedBody
from tests.support.driver import Driver, assert_error
from tests.support.helpers import free_port

UserIds = Callable[[str], str]
MakeService = Callable[..., Services]


def suggestion(user_id: str, score: float) -> Suggestion:
    return Suggestion(user_id, score, 1, ["via"], ["friends_of_friends"])


async def served(service: Services, user_id: str, *target_ids: str) -> None:
    """Note the targets as served to the user, as serving a list of suggestions does."""
    await service.impressions.served(user_id, [suggestion(t, 1.0) for t in target_ids])


# -- the policy (pure) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shows", "expected"),
    [(0, 8.0), (1, 8.0), (3, 8.0), (4, 4.0), (5, 2.0), (6, 1.0)],
)
def test_the_first_free_shows_cost_nothing_then_each_halves(shows: int, expected: float) -> None:
    assert 8.0 * discount_factor(shows, free=3, decay=0.5) == expected


def test_a_decay_of_one_never_discounts() -> None:
    assert discount_factor(100, free=1, decay=1.0) == 1.0


def test_rerank_sinks_the_overshown_and_keeps_ties_in_order() -> None:
    items = [
        suggestion("a", 10.0),
        suggestion("b", 6.0),
        suggestion("c", 6.0),
        suggestion("d", 3.0),
    ]
    ranked = rerank(items, {"a": 5, "c": 3, "zz": 9}, free=3, decay=0.5)  # a: 10 -> 2.5
    assert [(s.user_id, s.score) for s in ranked] == [
        ("b", 6.0),
        ("c", 6.0),
        ("d", 3.0),
        ("a", 2.5),
    ]
    assert items[0].score == 10.0  # the given objects are not changed
    assert ranked[0] is items[1]  # an undiscounted suggestion is passed through as is
    assert ranked[3].via == ["via"] and ranked[3].mutual_count == 1


def test_rerank_of_nothing_shown_is_the_given_order() -> None:
    items = [suggestion("a", 1.0), suggestion("b", 1.0), suggestion("c", 0.0)]
    assert rerank(items, {}, free=3, decay=0.5) == items
    assert rerank([], {"a": 9}, free=3, decay=0.5) == []


# -- counting shows in Redis ----------------------------------------------------------------------


async def test_recording_counts_each_show_and_keeps_the_key_for_the_configured_days(
    make_service: MakeService, uid: UserIds
) -> None:
    service = make_service(suggest_impressions_days=2)
    me, a, b, never = uid("me"), uid("a"), uid("b"), uid("never")
    await served(service, me, a, b, never)
    assert await service.impressions.record(me, [a, b]) == (2, 0)
    assert await service.impressions.record(me, [a, a]) == (1, 0)  # a repeated id is one show
    assert await service.impressions.record(me, [a]) == (1, 0)
    store = service.core.redis.impressions
    assert await store.shows(me, [a, b, never]) == {a: 3, b: 1, never: 0}
    assert await store.shows(uid("other"), [a]) == {a: 0}  # counts are per user
    ttl = await service.core.redis.client.ttl(store.key(me))
    assert 2 * 86_400 - 10 <= ttl <= 2 * 86_400


async def test_a_target_shown_beyond_the_free_shows_sinks_below_an_undisturbed_one(
    make_service: MakeService, uid: UserIds
) -> None:
    service = make_service(suggest_impressions_free=2, suggest_impression_decay=0.5)
    me, top, second, third = uid("me"), uid("top"), uid("second"), uid("third")
    found = [suggestion(top, 10.0), suggestion(second, 4.0), suggestion(third, 2.0)]
    await service.impressions.served(me, found)
    for _ in range(2):  # free shows: nothing moves
        await service.impressions.record(me, [top, second, third])
    assert await service.impressions.rerank(me, found) == found
    for _ in range(2):  # top and third 4 times: 10 -> 2.5, 2 -> 0.5; second still 2 shows
        await service.impressions.record(me, [top, third])
    await service.impressions.record(me, [second])  # second 3 times: 4 -> 2
    ranked = await service.impressions.rerank(me, found)
    assert [(s.user_id, s.score) for s in ranked] == [(top, 2.5), (second, 2.0), (third, 0.5)]
    # another user's shows of the same targets do not touch this user's order
    assert await service.impressions.rerank(uid("fresh"), found) == found


async def test_redis_down_serves_the_list_undiscounted_and_trips_the_breaker(
    server_settings: Settings, backends: Services, uid: UserIds
) -> None:
    dead = server_settings.with_values(
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
        redis_cluster=False,
        redis_connect_timeout=0.5,
    )
    client = open_redis(dead.redis)
    try:
        breaker = redis_breaker(retry_seconds=60)
        store = ImpressionStore(client, dead.redis, dead.suggestions, dead.bounds)
        counters = FeedbackCounters(client, dead.redis, dead.suggestions)
        feedback = SuggestionFeedback(
            counters, backends.core.neo4j.suggestions, breaker, dead.suggestions, dead.pages
        )
        impressions = Impressions(store, breaker, dead.suggestions, feedback)
        found = [suggestion(uid("a"), 3.0), suggestion(uid("b"), 1.0)]
        assert await impressions.rerank(uid("me"), found) is found
        assert breaker.open
        assert await impressions.rerank(uid("me"), found) is found  # skipped while open
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("targets", "error", "expected"),
    [
        ([], TooManyIds, "1 to 50 users, got 0"),
        ([f"x{n}" for n in range(51)], TooManyIds, "got 51"),
        (["ok", "bad id"], InvalidUserId, "ids item 'bad id'"),
        (["ok", "SELF"], SelfAction, "cannot be shown itself"),
    ],
)
async def test_bad_records_raise_and_count_nothing(
    service: Services, uid: UserIds, targets: list[str], error: type, expected: str
) -> None:
    me = uid("me")
    targets = [me if t == "SELF" else t for t in targets]
    with pytest.raises(error, match=expected):
        await service.impressions.record(me, targets)
    assert not await service.core.redis.client.exists(service.core.redis.impressions.key(me))


# -- the route ------------------------------------------------------------------------------------


async def test_the_route_records_shows_with_202(driver: Driver, uid: UserIds) -> None:
    me, a, b = uid("me"), uid("a"), uid("b")
    await served(driver.services, me, a, b)
    assert await driver.record_impressions(me, [a, b, a]) == RecordedBody(recorded=2, ignored=0)
    assert driver.last_status == 202
    assert await driver.record_impressions(me, [a]) == RecordedBody(recorded=1, ignored=0)
    store = driver.services.core.redis.impressions
    assert await store.shows(me, [a, b]) == {a: 2, b: 1}


@pytest.mark.parametrize(
    ("body", "code", "expected"),
    [
        ({"ids": []}, "too_many_ids", "1 to 50 users, got 0"),
        ({"ids": [f"x{n}" for n in range(51)]}, "too_many_ids", "got 51"),
        ({"ids": ["ok", "bad id"]}, "invalid_user_id", "'bad id' is not a valid user id"),
        ({"ids": ["ok", "SELF"]}, "self_action", "cannot be shown itself"),
        ({"ids": "ok"}, "invalid_request", "ids"),
        ({}, "invalid_request", "ids"),
        ({"ids": ["ok", 7]}, "invalid_request", "ids.1"),
    ],
)
async def test_bad_impression_requests_are_refused_naming_the_problem_and_count_nothing(
    driver: Driver, uid: UserIds, body: dict, code: str, expected: str
) -> None:
    """422 for what breaks the schema; 403 for a rule it cannot state (showing oneself)."""
    me = uid("me")
    if body.get("ids") and isinstance(body["ids"], list):
        body = {"ids": [me if t == "SELF" else t for t in body["ids"]]}
    response = await driver.http.post(f"/v1/users/{me}/suggestions/impressions", json=body)
    error = assert_error(response, 403 if code == "self_action" else 422, code)
    assert expected in error.message, error
    store = driver.services.core.redis.impressions
    assert not await driver.services.core.redis.client.exists(store.key(me))


async def test_a_bad_user_in_the_path_is_422(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/users/bad%20id/suggestions/impressions", json={"ids": ["a"]})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_user_id"
