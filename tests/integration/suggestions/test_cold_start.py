"""The cold start on the real servers: the trending and popular lists the workers keep from
the event stream, and the suggestions of a user who follows nobody, filled from them.

The lists here live under a Redis prefix of this run and are counted by a consumer group of
this run, so other tests' follows before this module started count nowhere; follows made by
other tests while it runs may count, so rankings are asserted among this module's users.
Statuses, settings and erasures are changed through the suite's usual prefix (``driver``),
whose mirror the end of the module checks; their events reach this run's group all the same."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from graphsvc.adapters.neo4j.store import Neo4jStore
from graphsvc.bootstrap import Services
from tests.support.driver import Driver
from tests.support.run import RUN
from tests.support.stores import db_hits

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
PREFIX = f"cs{RUN}:"  # this run's lists, buckets and mirror
GROUP = f"charts-{RUN}"  # this run's consumer group: counts only what came after it


@pytest.fixture
async def cold(make_driver: MakeDriver) -> AsyncIterator[Driver]:
    async with make_driver(redis_prefix=PREFIX, cold_start_charts_consumer_group=GROUP) as graph:
        await graph.services.background.cold_start_charts.prepare()
        await counted(graph)
        yield graph


async def counted(driver: Driver) -> None:
    """Every event the group has not counted yet, counted (what the workers' consumer does)."""
    while await driver.services.background.cold_start_charts.consume():
        pass


async def refreshed(driver: Driver) -> tuple[list[str], list[str]]:
    """The events counted and both lists made (a worker's refresh round)."""
    await counted(driver)
    return await driver.services.background.cold_start_charts.refresh()


async def fans(driver: Driver, uid: UserIds, target: str, count: int) -> None:
    await driver.follow_pairs(*((uid("fan"), target) for _ in range(count)))


# -- trending ----------------------------------------------------------------------------------


async def test_trending_ranks_followers_gained_and_lists_only_active_discoverable_accounts(
    cold: Driver, driver: Driver, backends: Services, uid: UserIds
) -> None:
    rising, steady, old_star = uid("rising"), uid("steady"), uid("old_star")
    bot, suspended, hidden, erased = uid("bot"), uid("suspended"), uid("hidden"), uid("erased")
    # old_star: 30 followers from long ago (loaded: no event), one new one
    old = [uid("old_fan") for _ in range(30)]
    await backends.core.neo4j.bulk.load_users([old_star, *old])
    rows = [{"s": fan, "d": old_star, "t": 1_700_000_000_000_000 + n} for n, fan in enumerate(old)]
    assert await backends.core.neo4j.bulk.load_edges(rows) == len(old)
    await fans(cold, uid, old_star, 1)
    await fans(cold, uid, rising, 4)
    await fans(cold, uid, steady, 2)
    for target in (suspended, hidden, erased):
        await fans(cold, uid, target, 5)
    # the bot follows everyone: following many never makes an account trend
    await cold.follows(bot, *[uid("followed") for _ in range(8)])
    # an unfollow takes back what its follow gave
    quitter = uid("quitter")
    await cold.follow_pairs((quitter, steady))
    await cold.unfollow(quitter, steady)

    trending, _ = await refreshed(cold)
    assert [u for u in trending if u in {rising, steady, old_star}] == [rising, steady, old_star]
    assert {suspended, hidden, erased} <= set(trending)  # gained 5 each: listed while they may be
    assert bot not in trending

    await driver.set_status(suspended, "suspended")
    await driver.set_privacy(hidden, discoverable=False)
    await driver.erase(erased)
    await driver.drain()
    trending, _ = await refreshed(cold)
    assert not {suspended, hidden, erased, bot} & set(trending)
    assert [u for u in trending if u in {rising, steady, old_star}] == [rising, steady, old_star]
    stored, _ = await cold.services.core.redis.cold_start.read()
    assert stored == trending


async def test_an_event_counts_in_the_hour_it_happened_and_the_window_forgets_old_hours(
    cold: Driver, uid: UserIds
) -> None:
    """A follow delivered again lands in its own hour again (counted twice, forgotten with the
    bucket); a follow older than the window counts nowhere."""
    recent, stale = uid("recent"), uid("stale")
    hours = cold.services.settings.cold_start.cold_start_trending_hours
    now = time.time_ns() // 1_000
    old = now - (hours + 1) * 3_600 * 1_000_000
    events = [
        {"type": "follow", "src": uid("a"), "dst": recent, "version": str(now)},
        {"type": "follow", "src": uid("b"), "dst": stale, "version": str(old)},
        {"type": "follow", "src": uid("c"), "dst": stale, "version": str(old)},
    ]
    keeper = cold.services.background.cold_start_charts
    await cold.services.core.neo4j.bulk.load_users([recent, stale])
    await keeper.apply(events)
    trending, _ = await refreshed(cold)
    assert recent in trending and stale not in trending
    prefix = f"{PREFIX}{{pymk}}:gain:"
    client = cold.services.core.redis.client
    assert await client.zscore(f"{prefix}{now // 3_600_000_000}", recent) == 1
    ttl = await client.ttl(f"{prefix}{now // 3_600_000_000}")
    assert 0 < ttl <= (hours + 1) * 3_600


# -- popular -----------------------------------------------------------------------------------


async def test_popular_is_built_from_neo4j_then_kept_from_the_accounts_that_changed(
    cold: Driver, driver: Driver, uid: UserIds
) -> None:
    keeper, lists = cold.services.background.cold_start_charts, cold.services.core.redis.cold_start
    store = cold.services.core.neo4j.cold_start
    _, popular = await refreshed(cold)  # built from a scan of Neo4j when missing
    assert set(await store.listable(popular)) == set(popular)  # all may be listed
    # a small graph's scan: two accounts (what the scan found stays until the next rebuild);
    # other tests' follows may add their targets: the order is asserted among these
    big, small, star = uid("big"), uid("small"), uid("star")

    def mine(found: list[str]) -> list[str]:
        return [u for u in found if u in {big, small, star}]

    await fans(cold, uid, big, 5)
    await fans(cold, uid, small, 2)
    await counted(cold)
    hours = cold.services.settings.cold_start.cold_start_popular_rebuild_hours
    await lists.replace_popular([(big, 5), (small, 2)], hours * 3_600)
    await fans(cold, uid, star, 4)  # star passes small
    _, popular = await refreshed(cold)
    assert mine(popular) == [big, star, small]
    await driver.set_status(big, "suspended")  # a status event: big is checked again, and leaves
    await driver.drain()
    quitter = uid("quitter")
    await cold.follow_pairs((quitter, small), (uid("x"), small), (uid("y"), small))
    _, popular = await refreshed(cold)
    assert mine(popular) == [small, star]  # small: 5 now
    await cold.unfollow(quitter, small)
    _, popular = await keeper.refresh()  # not counted yet: nothing moved
    assert mine(popular) == [small, star]
    _, popular = await refreshed(cold)
    assert mine(popular) == sorted([star, small])  # 4 against 4: the smaller id first


async def test_an_account_that_hides_its_counts_is_neither_listed_nor_filled_in(
    cold: Driver, uid: UserIds
) -> None:
    """Both lists rank by follower counts, so an account's place between public neighbours
    would bracket a count it hides: it leaves both lists at the next refresh, a fill computed
    before then, and a list cached when it was filled in. Its settings are changed through
    this run's prefix (the mirror its requests read), and made public again at the end."""
    shy, newcomer = uid("shy"), uid("newcomer")
    lists = cold.services.core.redis.cold_start
    await fans(cold, uid, shy, 4)
    await counted(cold)
    hours = cold.services.settings.cold_start.cold_start_popular_rebuild_hours
    await lists.replace_popular([(shy, 4)], hours * 3_600)
    trending, popular = await refreshed(cold)
    assert shy in trending and shy in popular
    assert shy in await cold.suggested(newcomer)  # a fill, now cached

    await cold.set_privacy(shy, counts_visibility="private")
    assert shy not in await cold.suggested(newcomer)  # the cached list
    await cold.services.suggestions.cache.invalidate(newcomer)
    assert shy in (await lists.read())[0]  # not refreshed yet
    assert shy not in await cold.suggested(newcomer)  # computed now
    await cold.drain()
    trending, popular = await refreshed(cold)
    assert shy not in trending and shy not in popular

    await cold.set_privacy(shy, counts_visibility="public")
    await cold.drain()
    trending, popular = await refreshed(cold)
    assert shy in trending and shy in popular


# -- the cold start of a request ---------------------------------------------------------------


async def test_a_user_who_follows_nobody_gets_trending_then_popular_accounts(
    cold: Driver, uid: UserIds
) -> None:
    newcomer, rising, blocked = uid("newcomer"), uid("rising"), uid("blocked")
    await fans(cold, uid, rising, 3)
    await fans(cold, uid, blocked, 3)
    await cold.block(newcomer, blocked)
    trending, popular = await refreshed(cold)
    items = list((await cold.suggested(newcomer, limit=50)).values())
    sources = [item.sources for item in items]
    assert set(map(tuple, sources)) <= {("trending",), ("popular",)}
    assert sources == sorted(sources, key=lambda s: s != ["trending"])  # trending first
    shown = [item.user_id for item in items]
    listed = list(dict.fromkeys(trending + popular))
    assert shown == [u for u in listed if u in shown]  # in the lists' order
    assert rising in shown and blocked not in shown and newcomer not in shown
    assert all(item.reasons.mutual_count == 0 and item.reasons.via == [] for item in items)


async def test_before_the_first_refresh_the_cold_start_answers_with_what_exists(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    """A fresh Redis: no list yet, so no fill, and no scan of the graph instead."""
    async with make_driver(redis_prefix=f"cn{RUN}:") as fresh:
        assert await fresh.services.core.redis.cold_start.read() == ([], [])
        assert await fresh.suggested(uid("newcomer")) == {}


async def test_the_cold_start_request_reads_no_more_than_the_lists_it_filters(
    cold: Driver, backends: Services, uid: UserIds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every query a cold-start request runs, profiled: its work is bounded by the lists'
    size, far below the number of users the graph holds (loaded up to 20,000 when fewer), as a
    read of every user's degree would not be."""
    kept = cold.services.settings.cold_start.cold_start_charts_kept
    bound = 20 * 2 * kept  # a few index seeks and checks per listed account
    users = await user_count(backends)
    if users < 5 * bound:
        await backends.core.neo4j.bulk.load_users([uid("filler") for _ in range(5 * bound - users)])
    await fans(cold, uid, uid("rising"), 2)
    await refreshed(cold)
    ran: list[tuple[str, dict[str, Any]]] = []
    original = Neo4jStore.read

    async def recording(self: Neo4jStore, name: str, params: Any, **options: Any) -> Any:
        ran.append((name, dict(params)))
        return await original(self, name, params, **options)

    monkeypatch.setattr(Neo4jStore, "read", recording)
    assert await cold.suggested(uid("newcomer"))  # filled
    monkeypatch.undo()
    names = {name for name, _ in ran}
    assert "suggestions/suggest_filter" in names
    for name, params in ran:
        assert await db_hits(backends, name, params) < bound, name


async def user_count(services: Services) -> int:
    store = services.core.neo4j.store
    async with store.driver.session(database=store.database) as session:
        result = await session.run("MATCH (u:User) RETURN count(u) AS users")
        return (await result.single(strict=True))["users"]
