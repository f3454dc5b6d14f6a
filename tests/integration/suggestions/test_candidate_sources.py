"""The candidate sources of people you may know, one by one, on the real servers: what each
finds on a hand-made graph (the features it gives), that every exclusion holds for every source,
that the random walks reach beyond two hops through visible lists only and within their bound
whatever the degrees, that a hub's friends of friends are suggested rather than fills, and
`graphsvc ranker train`
(deterministic for a seed; a stored model is served by a running API without a restart)."""

from __future__ import annotations

import asyncio
import math
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from graphsvc.adapters.neo4j.queries import query
from graphsvc.bootstrap import Services
from graphsvc.domain.ranker.scoring import DEFAULT, Ranker
from graphsvc.services.suggestions import WIDEN
from graphsvc.wire.schemas import DismissBody, Reasons
from graphsvc.workers.ranker import examples as ranker_examples
from graphsvc.workers.ranker import training as ranker_training
from tests.support.driver import Driver, refused
from tests.support.hangs import bounded
from tests.support.ranker import (
    T0,
    TRAIN_USERS,
    generated_follows,
    held_since,
    load,
    newest_holdout_of,
)

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
MakeService = Callable[..., Services]

SOURCES = ("friends_of_friends", "follows_you", "co_followers", "three_hop", "walks")
EXCLUSIONS = ("followed", "blocked", "blocker", "spam", "dismissed", "muted", "self")
# Each source alone: walks off but for the walks' own graphs; three-hop candidates asked for
# (SUGGEST_THIN's default, set explicitly so the environment cannot turn them off) but for
# the walks', which reach three follows away themselves.
ONE_SOURCE: dict[str, Any] = {"suggest_thin": 50, "suggest_walks": 0}
WALKS_ALONE: dict[str, Any] = {"suggest_thin": 0, "suggest_walks": 64}
FILLS = {"trending", "popular"}


@pytest.fixture
async def driver(make_driver: MakeDriver) -> AsyncIterator[Driver]:
    """Every graph here is tiny: three-hop candidates are asked for, the walks are not (each
    source is tested alone; the walks by tests of their own)."""
    async with make_driver(**ONE_SOURCE) as graph:
        yield graph


async def rows_of(driver: Driver, me: str) -> dict[str, dict[str, Any]]:
    """The candidates with their features, as the ranker gets them (no cache)."""
    rows = await driver.services.suggestions.candidates.rows(me, now=time.time_ns() // 1_000)
    return {row["id"]: row for row in rows}


async def graph_for(
    driver: Driver, uid: UserIds, source: str, *, itself: bool = False
) -> tuple[str, str]:
    """(me, candidate): a graph where only ``source`` finds the candidate (``itself``: the
    candidate is me, so the source's paths lead back to me)."""
    me = uid("me")
    cand = me if itself else uid(source)
    if source == "friends_of_friends":
        m = uid("m")
        await driver.follow_pairs((me, m), (m, cand))
    elif source == "follows_you":
        await driver.follow_pairs((cand, me))
    elif source == "co_followers":
        x, w = uid("x"), uid("w")  # w follows x as I do: what w follows is a candidate
        await driver.follow_pairs((me, x), (w, x), (w, cand))
    elif source == "walks":  # three follows away, with three-hop candidates not asked for
        a, b = uid("a"), uid("b")
        await driver.follow_pairs((me, a), (a, b), (b, cand))
    else:
        a, b = uid("a"), uid("b")
        await driver.follow_pairs((me, a), (a, b), (b, cand))
    return me, cand


# -- 1. what each source finds -------------------------------------------------------------------


async def test_friends_of_friends(driver: Driver, uid: UserIds) -> None:
    me, m, c = uid("me"), uid("m"), uid("c")
    await driver.follow_pairs((me, m), (m, c))
    row = (await rows_of(driver, me))[c]
    assert row["sources"] == ["friends_of_friends"]
    assert (row["paths"], row["via"], row["follows_you"], row["cof"]) == (1, [m], 0.0, 0.0)
    # m: 1 follower and 1 follow, so degree 2
    assert row["ra"] == pytest.approx(0.5)
    assert row["aa"] == pytest.approx(1 / math.log(4))
    item = (await driver.suggested(me))[c]
    assert item.sources == ["friends_of_friends"]
    assert item.reasons == Reasons(mutual_count=1, via=[m])


async def test_follows_you(driver: Driver, uid: UserIds) -> None:
    me, f = uid("me"), uid("f")
    await driver.follow_pairs((f, me))
    row = (await rows_of(driver, me))[f]
    assert row["sources"] == ["follows_you"]
    assert (row["follows_you"], row["paths"], row["via"], row["cof"]) == (1.0, 0, [], 0.0)
    item = (await driver.suggested(me))[f]
    assert item.sources == ["follows_you"]
    assert item.reasons == Reasons(mutual_count=0, via=[])


async def test_co_followers(driver: Driver, uid: UserIds) -> None:
    me, x, w, v = uid("me"), uid("x"), uid("w"), uid("v")
    await driver.follow_pairs((me, x), (w, x), (w, v))
    rows = await rows_of(driver, me)
    assert set(rows) == {v}  # x: already followed; w: on no path from me, and not my follower
    row = rows[v]
    assert row["sources"] == ["co_followers"]
    # similarity of w: 1 / followers(x) = 1/2; shared over w's 2 follows
    assert row["cof"] == pytest.approx(0.25)
    assert (row["cof_paths"], row["paths"], row["follows_you"]) == (1, 0, 0.0)
    assert (await driver.suggested(me))[v].sources == ["co_followers"]


async def test_three_hop_for_a_thin_neighbourhood(
    driver: Driver, make_service: MakeService, uid: UserIds
) -> None:
    me, a, b, t = uid("me"), uid("a"), uid("b"), uid("t")
    await driver.follow_pairs((me, a), (a, b), (b, t))
    rows = await rows_of(driver, me)
    assert set(rows) == {b, t}
    assert rows[b]["sources"] == ["friends_of_friends"]
    row = rows[t]
    assert row["sources"] == ["three_hop"]
    # reach of b: 1 / degree(a) = 1/2; over degree(b) = 2
    assert row["hop3"] == pytest.approx(0.25)
    assert (row["hop3_paths"], row.get("paths", 0), row["via"]) == (1, 0, [])
    assert (await driver.suggested(me))[t].sources == ["three_hop"]
    # not thin (SUGGEST_THIN=1 and 1 candidate found closer): no three-hop candidates at all
    thick = make_service(suggest_thin=1, suggest_walks=0)
    assert [r["id"] for r in await thick.suggestions.candidates.rows(me, now=0)] == [b]


async def test_the_candidate_reads_are_planned_again_after_neo4j_was_lost(
    driver: Driver, uid: UserIds
) -> None:
    """A Neo4j that restarted forgot its plans: the next request plans the candidate reads
    again first, once for everyone waiting, and is then answered as before."""
    me, m, c = uid("me"), uid("m"), uid("c")
    await driver.follow_pairs((me, m), (m, c))
    candidates = driver.services.suggestions.candidates
    candidates.plans.lost()
    assert candidates.plans.due
    assert set(await rows_of(driver, me)) == {c}
    assert not candidates.plans.due


# -- 2. every exclusion holds for every source ---------------------------------------------------


async def exclude(driver: Driver, me: str, cand: str, exclusion: str) -> None:
    if exclusion == "followed":
        await driver.follows(me, cand)
    elif exclusion in ("blocked", "blocker"):
        a, b = (me, cand) if exclusion == "blocked" else (cand, me)
        await driver.block(a, b)
    elif exclusion == "spam":
        await driver.set_status(cand, "spam")
        await driver.drain()
    elif exclusion == "dismissed":
        assert await driver.dismiss(me, cand) == DismissBody(dismissed=True, created=True)
    elif exclusion == "muted":
        assert (await driver.mute(me, cand)).created
    else:
        raise AssertionError(exclusion)


@pytest.mark.parametrize("exclusion", EXCLUSIONS)
@pytest.mark.parametrize("source", SOURCES)
async def test_every_exclusion_holds_for_every_source(
    make_driver: MakeDriver, uid: UserIds, source: str, exclusion: str
) -> None:
    async with make_driver(**(WALKS_ALONE if source == "walks" else ONE_SOURCE)) as driver:
        await excluded_from(driver, uid, source, exclusion)


async def excluded_from(driver: Driver, uid: UserIds, source: str, exclusion: str) -> None:
    """The candidate ``source`` alone finds is gone once ``exclusion`` holds."""
    if exclusion == "self":
        if source == "follows_you":  # I cannot follow myself, so I am never my own follower
            me = uid("me")
            await refused(driver.follow(me, me), 403, "self_follow")
            assert me not in await driver.suggested(me)
            return
        me, _ = await graph_for(driver, uid, source, itself=True)
        assert me not in await rows_of(driver, me)
        assert me not in await driver.suggested(me)
        return
    me, cand = await graph_for(driver, uid, source)
    # before: the candidate is there, found by this source alone (no cache is filled)
    assert (await rows_of(driver, me))[cand]["sources"] == [source]
    await exclude(driver, me, cand, exclusion)
    assert cand not in await driver.suggested(me)  # neither ranked nor a fill
    assert cand not in await rows_of(driver, me)


# -- 3. random walks: beyond two hops, within lists the user may see, bounded ----------------------


async def test_walks_reach_three_follows_away(make_driver: MakeDriver, uid: UserIds) -> None:
    me, a, b, c = uid("me"), uid("a"), uid("b"), uid("c")
    async with make_driver(**WALKS_ALONE) as driver:
        await driver.follow_pairs((me, a), (a, b), (b, c))
        rows = await rows_of(driver, me)
        assert set(rows) == {b, c}  # a: followed
        assert rows[b]["sources"] == ["friends_of_friends", "walks"]
        assert rows[c]["sources"] == ["walks"]  # three follows away, found by the walks alone
        assert (rows[c]["paths"], rows[c]["via"]) == (0, [])
        # every walk passes a before b (or restarts), and b before c
        assert 0 < rows[c]["walk"] <= rows[b]["walk"] < 1
        again = await rows_of(driver, me)  # the same walks for the same user
        assert {k: r["walk"] for k, r in again.items()} == {k: r["walk"] for k, r in rows.items()}
        assert (await driver.suggested(me))[c].sources == ["walks"]


async def test_walks_move_only_through_lists_the_user_may_see(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    """A walk reads b's following only where I may see it (as friends of friends read m's): a
    following shown to b's followers is hidden from me, who does not follow b."""
    me, a, b, c = uid("me"), uid("a"), uid("b"), uid("c")
    async with make_driver(**WALKS_ALONE) as driver:
        await driver.follow_pairs((me, a), (a, b), (b, c))
        assert "walks" in (await rows_of(driver, me))[c]["sources"]
        for hidden in ("private", "followers", "mutuals"):
            await driver.set_privacy(b, following_visibility=hidden)
            assert c not in await rows_of(driver, me), hidden
            assert c not in await driver.suggested(me)
        await driver.set_privacy(b, following_visibility="public")
        await driver.set_status(b, "spam")  # an inactive user is never a step of a walk
        await driver.drain()
        assert c not in await rows_of(driver, me)


HUB_MUTUALS = 12_000
SMALL_WALKS = {"suggest_walks": 4, "suggest_walk_steps": 3, "suggest_walk_fanout": 8}


async def candidate_hits(services: Services, me: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The db hits Neo4j counts for the candidate query the service sends for ``me`` (PROFILE
    of the same query with the same parameters)."""
    store = services.core.neo4j.store
    sent: dict[str, Any] = {}
    read = store.read

    async def noting(name: str, params: dict[str, Any], **options: Any) -> Any:
        if name == "suggestions/candidates":
            sent.update(params)
        return await read(name, params, **options)

    monkeypatch.setattr(store, "read", noting)
    await services.suggestions.candidates.rows(me, now=time.time_ns() // 1_000)
    async with store.driver.session(database=store.database) as session:
        summary = await (
            await session.run("PROFILE " + query("suggestions/candidates"), sent)
        ).consume()
    assert summary.profile is not None
    return profile_hits(summary.profile)


def profile_hits(plan: dict[str, Any]) -> int:
    return plan.get("dbHits", 0) + sum(profile_hits(child) for child in plan.get("children", []))


async def test_walks_are_bounded_whatever_the_degrees(
    backends: Services,
    make_service: MakeService,
    uid: UserIds,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user who follows a hub following 12,000 users who all follow it back: every walk
    steps through the hub, and reads at most SUGGEST_WALK_FANOUT of its follows. The walks'
    share of the candidate query's work (its db hits with walks, against without) stays within
    walks x steps x (fanout + a constant), far below the hub's degree."""
    hub = uid("hub")
    fans = [uid(f"fan{n}") for n in range(HUB_MUTUALS)]
    pairs = [pair for fan in fans for pair in ((fan, hub), (hub, fan))]
    rows = [{"s": s, "d": d, "t": T0 + n} for n, (s, d) in enumerate(pairs)]
    assert await load(backends, [hub, *fans], rows) == len(rows)
    me = fans[0]

    walking = make_service(suggest_thin=0, **SMALL_WALKS)
    found = {row["id"]: row for row in await walking.suggestions.candidates.rows(me, now=0)}
    assert [i for i, row in found.items() if "walks" in row["sources"]]  # they did walk
    with_walks = await candidate_hits(walking, me, monkeypatch)
    without = await candidate_hits(make_service(suggest_thin=0, suggest_walks=0), me, monkeypatch)
    steps = SMALL_WALKS["suggest_walks"] * SMALL_WALKS["suggest_walk_steps"]
    bound = steps * (3 * SMALL_WALKS["suggest_walk_fanout"] + 20)
    assert 0 < with_walks - without <= bound < HUB_MUTUALS


# -- 4. a hub's friends of friends, not fills ----------------------------------------------------

HUB_FANS = 3_000
CLIQUE = 5


@pytest.mark.parametrize(
    "shared",
    [
        pytest.param(False, id="an-outsider-per-fan"),
        pytest.param(True, id="an-outsider-per-clique"),
    ],
)
async def test_a_hub_gets_friends_of_friends_not_fills(
    driver: Driver, backends: Services, uid: UserIds, shared: bool
) -> None:
    """A hub following 3,000 users who all follow it back, in cliques of 5, each also
    following an outsider the hub does not follow (its own, or its clique's): the hub's
    suggestions are outsiders, friends of friends among them, and never fills while
    friend-of-friend candidates exist."""
    hub = uid("hub")
    fans = [uid(f"fan{n}") for n in range(HUB_FANS)]
    fans_per_outsider = CLIQUE if shared else 1
    outsiders = [uid(f"out{n}") for n in range(HUB_FANS // fans_per_outsider)]
    owners: dict[str, set[str]] = defaultdict(set)
    pairs = []
    for n, fan in enumerate(fans):
        outsider = outsiders[n // fans_per_outsider]
        owners[outsider].add(fan)
        pairs += [(fan, hub), (hub, fan), (fan, outsider)]
        clique = range(n - n % CLIQUE, n - n % CLIQUE + CLIQUE)
        pairs += [(fan, fans[k]) for k in clique if k != n]
    rows = [{"s": s, "d": d, "t": T0 + n} for n, (s, d) in enumerate(pairs)]
    assert await load(backends, [hub, *fans, *outsiders], rows) == len(rows)

    items = list((await driver.suggested(hub)).values())
    assert [i for i in items if FILLS & set(i.sources)] == []
    assert len(items) == 50
    assert {i.user_id for i in items} <= set(outsiders)
    mutual = [i for i in items if "friends_of_friends" in i.sources]
    assert mutual
    for item in mutual:
        assert item.reasons.mutual_count == fans_per_outsider
        assert len(item.reasons.via) == min(3, fans_per_outsider)
        assert set(item.reasons.via) <= owners[item.user_id]
    # friend-of-friend candidates: one outsider per expanded follow of the hub; when the first
    # SUGGEST_INTERMEDIARIES follows yield fewer than 50, WIDEN times as many are expanded
    settings = backends.settings
    expanded = settings.suggestions.suggest_intermediaries
    if expanded // fans_per_outsider < 50:
        expanded = min(HUB_FANS, expanded * WIDEN)
    rows_found = await rows_of(driver, hub)
    by_paths = [r for r in rows_found.values() if "friends_of_friends" in r["sources"]]
    assert len(by_paths) == min(
        settings.suggestions.suggest_candidates, expanded // fans_per_outsider
    )


# -- 5. ranker train---------------------------------------------------------------------------------


@pytest.fixture
async def ranker_graph(backends: Services, uid: UserIds) -> list[dict[str, Any]]:
    users = [uid(f"g{n}") for n in range(TRAIN_USERS)]
    made = generated_follows(users, seed=3)
    rows = [{"s": s, "d": d, "t": T0 + n * 1_000_000} for n, (s, d) in enumerate(made)]
    assert await load(backends, users, rows) == len(rows)
    return rows


async def test_ranker_training_is_deterministic_for_a_seed(
    make_service: MakeService,
    uid: UserIds,
    ranker_graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services = make_service(ranker_model_name=uid("model"))
    newest_holdout_of(services, ranker_graph, monkeypatch)
    cutoff = sorted(row["t"] for row in ranker_graph)[-math.ceil(len(ranker_graph) * 0.1)]
    held = held_since(ranker_graph, cutoff)
    assert len(held) > 200  # so `users=200` samples

    async def run(seed: int) -> ranker_training.TrainingReport:
        training = services.background.ranker_training.train(seed=seed, users=200, store=False)
        return await bounded(training, 300, f"a training of seed {seed}")

    first, again, other = await run(7), await run(7), await run(8)
    assert first.version == 0  # not stored
    assert first.users == 200 and first.candidates > 1_000
    assert first.positives >= ranker_examples.MIN_POSITIVES
    assert first.holdout == "newest"  # the graph's times are real
    sample = ranker_examples.sampled(sorted(held), 200, 7)
    assert first.held == sum(len(held[u]) for u in sample)  # the sampled users' held follows
    exact = {f"{name} (exact)" for name in ranker_examples.SINGLE}
    assert set(first.validation) == {
        "model",
        "the built-in default",
        *ranker_examples.SINGLE,
        *exact,
    }
    assert set(first.bands) <= {"thin", "median", "hub-adjacent"}
    assert sum(int(row["users"]) for row in first.bands.values()) == 200
    assert first.validation["model"] > 0
    # the generator's signals: a quarter of the later follows are follow-backs (the
    # candidates that follow the user get a model of their own, likelier at their mean than
    # the others at theirs), most of the rest close a triangle
    assert first.model.followers is not None
    assert first.model.followers.intercept > first.model.intercept
    assert first.weights["ra"] > 0 and first.weights["paths"] >= 0  # evidence: never negative
    same = ("users", "candidates", "positives", "held", "validation", "weights")
    assert {k: getattr(again, k) for k in same} == {k: getattr(first, k) for k in same}
    assert other.weights != first.weights  # another seed: other users, another model
    name = services.settings.suggestions.ranker_model_name
    assert (await services.core.neo4j.ranker_models.state(name)).serving.served == 0
    assert await services.core.neo4j.ranker_models.recent(name, 10) == []


async def test_a_stored_model_is_served_by_a_running_api(
    make_driver: MakeDriver,
    make_service: MakeService,
    uid: UserIds,
    ranker_graph: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = uid("model")
    me = ranker_graph[0]["s"]
    async with make_driver(ranker_model_name=name, ranker_refresh_seconds=0.1) as driver:
        source = driver.services.suggestions.ranker
        before = await driver.suggested(me)
        assert len(before) == 50
        assert await source.ranker() == DEFAULT

        trainer = make_service(ranker_model_name=name)
        newest_holdout_of(trainer, ranker_graph, monkeypatch)
        report = await trainer.background.ranker_training.train(seed=7, users=200, force=True)
        assert report.version == 1  # the model's name is this test's own
        assert report.promoted
        assert (await trainer.core.neo4j.ranker_models.serving(name)).served == 1

        await asyncio.sleep(0.3)  # > RANKER_REFRESH_SECONDS
        await driver.services.suggestions.cache.invalidate(me)  # else served from the cache
        after = await driver.suggested(me)
        served = await source.ranker()  # the one the suggestions were ranked by
        assert served.version == report.version
        assert served.weights == report.weights
        assert served.trained["seed"] == 7
        assert isinstance(served, Ranker) and served != DEFAULT
        assert [i.score for i in after.values()] != [i.score for i in before.values()]
