"""What one write key can make the stores hold, and what the budgets do when Redis refuses, on
the real servers: per-key budgets metered in-process when Redis refuses them; tombstones of
deleted posts kept per author, capped; shows counted only of served suggestions, capped;
interactions that never create users, capped per pair and day."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphsvc.adapters.neo4j.suggestions import AppliedInteractions
from graphsvc.adapters.redis.multiplexed import Multiplexed
from graphsvc.api.app import create_app
from graphsvc.bootstrap import Connections, Services, build
from graphsvc.domain.affinity import aggregate
from graphsvc.domain.model import Suggestion
from graphsvc.settings import Settings
from graphsvc.wire.schemas import RecordedBody
from tests.support.driver import Driver, refused
from tests.support.helpers import ThrowawayRedis, app_client
from tests.support.run import new_user_id
from tests.support.stores import tombstones
from tests.support.times import at, now

MakeService = Callable[..., Services]
MakeDriver = Callable[..., Driver]
UserIds = Callable[[str], str]


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


# -- per-key budgets ------------------------------------------------------------------------------


async def test_budgets_are_metered_in_process_when_redis_refuses_them(
    server_settings: Settings, connections: Connections, service_key: str, tmp_path: Path
) -> None:
    """A Redis out of memory answers every INCR with an error: the budgets are then spent in
    the API process (the same limits, a 429 past them), not switched off. The budgets are
    spent on the multiplexed connections, which here reach a Redis of the test's own that
    refuses every write; the mirror's pool keeps the shared one."""
    refusing = ThrowawayRedis(tmp_path / "redis")
    refusing.start()
    settings = server_settings.with_values(
        rate_limits_enabled=True, rate_limit_reads="3 per 60 seconds"
    )
    refused_at = server_settings.with_values(redis_url=refusing.url, redis_cluster=False)
    multiplexed = Multiplexed.for_settings(refused_at.redis)
    try:
        with refusing.client() as admin:
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", "1")  # every write is refused: OOM
        services = build(settings, replace(connections, multiplexed=multiplexed))
        async with app_client(create_app(services.settings, services), service_key) as http:
            before = metric((await http.get("/metrics")).text, "graphsvc_rate_limit_local_total")
            url = f"/v1/users/{new_user_id()}/counts"
            answers = [await http.get(url) for _ in range(5)]
            assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
            assert answers[0].headers["ratelimit-limit"] == "3"
            assert answers[0].headers["ratelimit-remaining"] == "2"
            refused = answers[3].json()["error"]
            assert refused["code"] == "rate_limited", refused
            after = metric((await http.get("/metrics")).text, "graphsvc_rate_limit_local_total")
            assert after == before + 5
    finally:
        if multiplexed is not None:
            await multiplexed.aclose()
        refusing.kill9()


# -- tombstones of deleted posts ------------------------------------------------------------------


async def test_tombstones_live_in_the_authors_slot_capped_oldest_first(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    author, other = uid("author"), uid("other")
    async with make_driver(timeline_tombstones_max=3, timeline_tombstone_days=2) as api:
        services = api.services
        for n in range(5):
            assert (await api.publish(author, f"p{n}", at(n))).created
        assert (await api.publish(other, "q0", at(0))).created
        assert (await api.delete_post(other, "q0")).deleted
        for n in range(5):
            assert (await api.delete_post(author, f"p{n}")).deleted
        await api.drain()
        assert await tombstones(services, author) == 3  # p2, p3, p4: the newest deletions
        assert await tombstones(services, other) == 1  # per author: another's do not count
        key = services.core.redis.author_posts.key("pd", author)
        assert f"{{{author}}}" in key  # the author's slot
        assert 2 * 86_400 - 10 <= await services.core.redis.client.ttl(key) <= 2 * 86_400
        for n in (2, 3, 4):  # remembered: the id stays deleted
            await refused(api.publish(author, f"p{n}", at(n)), 409, "post_deleted")
            assert (await api.post(author, f"p{n}")).state == "deleted"
        # the oldest deletion was forgotten: its id is free for a new post
        assert (await api.publish(author, "p0", at(9))).created
        await api.drain()


# -- shows of suggestions -------------------------------------------------------------------------


async def test_only_shows_of_served_suggestions_count(driver: Driver, uid: UserIds) -> None:
    me, friend, a, b = uid("me"), uid("friend"), uid("a"), uid("b")
    await driver.follow_pairs((me, friend), (friend, a), (friend, b))
    (top,) = [item.user_id for item in (await driver.suggestions(me, limit=1)).items]
    other = b if top == a else a  # suggested to me (in the cached list), beyond the limit
    made_up = [uid("made-up") for _ in range(20)]
    ignored = 'graphsvc_impressions_ignored_total{reason="not_served"}'
    before = metric((await driver.http.get("/metrics")).text, ignored)
    recorded = await driver.record_impressions(me, [top, other, *made_up])
    assert driver.last_status == 202
    assert recorded == RecordedBody(recorded=2, ignored=20)
    services = driver.services
    stored = await services.core.redis.client.hgetall(services.core.redis.impressions.key(me))
    assert stored == {top: "1", other: "1"}  # made-up ids store nothing
    after = metric((await driver.http.get("/metrics")).text, ignored)
    assert after == before + 20
    # another user was served nothing: its shows count nothing
    recorded = await driver.record_impressions(friend, [a])
    assert recorded == RecordedBody(recorded=0, ignored=1)


async def test_shows_are_kept_for_at_most_the_cap_of_targets_per_user(
    make_service: MakeService, uid: UserIds
) -> None:
    """Past SUGGEST_IMPRESSIONS_MAX targets, the counts of targets no longer served go first;
    while every counted target is still served, a new one is ignored."""
    service = make_service(suggest_impressions_max=2, suggest_served_seconds=1)
    impressions, store = service.impressions, service.core.redis.impressions
    me, a, b, c = uid("me"), uid("a"), uid("b"), uid("c")
    await impressions.served(me, [Suggestion(t, 1.0, 0, [], []) for t in (a, b, c)])
    assert await impressions.record(me, [a, b]) == (2, 0)
    assert await impressions.record(me, [a, c]) == (1, 1)  # a counts; c: no room
    assert await store.shows(me, [a, b, c]) == {a: 2, b: 1, c: 0}
    await asyncio.sleep(1.1)  # a and b are no longer served
    await impressions.served(me, [Suggestion(c, 1.0, 0, [], [])])
    assert await impressions.record(me, [c]) == (1, 0)
    assert await store.shows(me, [a, b, c]) == {a: 0, b: 0, c: 1}
    assert await impressions.record(me, [a]) == (0, 1)  # served too long ago
    assert await service.core.redis.client.hlen(store.key(me)) == 1


# -- interactions ---------------------------------------------------------------------------------


async def apply_now(services: Services, pairs: list[dict[str, object]]) -> AppliedInteractions:
    """Apply aggregated pairs at once, outside the buffer (the checkpoint stays where it is):
    what a flush reports, whichever process flushes the shared buffer."""
    store = services.core.neo4j.suggestions
    while True:
        checkpoint = await store.interactions_checkpoint()
        done = await store.apply_interactions(
            pairs,
            checkpoint=checkpoint,
            last=checkpoint,
            half_life_us=1_000_000,
            daily_max=services.settings.bounds.interactions_pair_daily_max,
        )
        if done.applied:
            return done


async def user_exists(services: Services, user_id: str) -> bool:
    return await services.moderation.user_state(user_id) is not None


async def test_interactions_with_unknown_users_are_dropped_and_counted_never_created(
    driver: Driver, uid: UserIds
) -> None:
    me, friend = uid("me"), uid("friend")
    made_up = [uid("made-up") for _ in range(3)]
    await driver.follows(me, friend)
    services = driver.services
    events = [(me, friend, "like", now())]
    events += [(me, t, "message", now()) for t in made_up]
    events += [(made_up[0], me, "like", now())]
    await driver.interact(*events)  # all five accepted, then flushed
    for user in made_up:
        assert not await user_exists(services, user)
    found = await services.interactions.affinities(me, 10)
    assert found == [(friend, pytest.approx(2.0, rel=1e-4))]
    pairs = aggregate([(me, made_up[1], 5.0, 1), (made_up[2], me, 2.0, 1), (me, friend, 1.0, 1)], 1)
    assert await apply_now(services, pairs) == AppliedInteractions(True, unknown=2)
    assert not await user_exists(services, made_up[1])


async def test_the_weight_one_pair_gains_per_day_is_capped(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    me, friend, other = uid("me"), uid("friend"), uid("other")
    async with make_driver(interactions_pair_daily_max=12) as driver:
        await driver.follow_pairs((me, friend), (other, me))
        services = driver.services
        await driver.interact(*[(me, friend, "message", now())] * 100)
        await driver.interact((me, friend, "like", now()), *[(other, me, "message", now())] * 2)
        # me -> friend: 500 sent, 12 kept, nothing more that day; other -> me: 10, under the cap
        found = dict(await services.interactions.affinities(me, 10))
        assert found == {
            friend: pytest.approx(12.0, rel=1e-4),
            other: pytest.approx(10.0, rel=1e-4),
        }
        today = int(datetime.now(UTC).timestamp() // 86_400)
        pairs = aggregate([(me, friend, 1.0, 1)], 1, day=today)
        assert await apply_now(services, pairs) == AppliedInteractions(True, capped=1)
        # a loader's history is not capped
        micros = int(datetime.now(UTC).timestamp() * 1_000_000)
        await services.interactions.record_raw([(other, friend, 50.0, micros)])
        await services.background.interaction_flusher.flush_all()
        assert await services.interactions.affinities(other, 10) == [
            (friend, pytest.approx(50.0, rel=1e-4)),
            (me, pytest.approx(10.0, rel=1e-4)),
        ]
