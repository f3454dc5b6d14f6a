"""What users do with suggestions, fed back per ranker version, on the real servers: every answer carries a signed
recommendation id naming the ranker version that computed its list (a cached list too);
follows, shows and dismissals carrying it count for that version, a follow once whatever is
retried or replayed; an id that is forged, malformed or another user's is a 422 that changes
nothing; and `graphsvc ranker report` prints what the counters hold."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time
from collections.abc import Callable

from prometheus_client import REGISTRY

from graphsvc.adapters.neo4j.ranker_models import NewModel
from graphsvc.adapters.redis.client import open_redis, redis_breaker
from graphsvc.adapters.redis.feedback_counters import FeedbackCounters
from graphsvc.bootstrap import Services
from graphsvc.domain.cursor import CursorCodec
from graphsvc.domain.ranker.online_figures import VersionFigures
from graphsvc.domain.ranker.scoring import DEFAULT
from graphsvc.services.relations import Relations
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.settings import Settings
from tests.support.driver import Driver, assert_error
from tests.support.helpers import cli, free_port, server_env

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
MakeService = Callable[..., Services]


async def neighbourhood(driver: Driver, uid: UserIds) -> tuple[str, list[str]]:
    """A user whose friends follow four others: its suggestions, friends of friends."""
    me, a, b = uid("me"), uid("a"), uid("b")
    others = [uid(f"fof{n}") for n in range(4)]
    await driver.follows(me, a, b)
    await driver.follows(a, *others[:2])
    await driver.follows(b, *others[2:])
    return me, others


async def store_version(service: Services, precision: float) -> int:
    """A new version of the service's model (the default's weights, scaled), with the
    precision@10 it measured offline; served from the next refresh on."""
    name = service.settings.suggestions.ranker_model_name
    body = {**DEFAULT.as_json(), "weights": {k: 2 * w for k, w in DEFAULT.weights.items()}}
    metrics = {"precision_at_10": {"model": precision, "default": 0.01}}
    served = (await service.core.neo4j.ranker_models.serving(name)).served
    new = NewModel(
        json.dumps(body),
        json.dumps(metrics),
        time.time_ns() // 1_000,
        0,
        promote=True,
        expected=served,
        why="made by a test",
    )
    version, promoted = await service.core.neo4j.ranker_models.save(name, new)
    assert promoted
    assert (await service.suggestions.ranker.refresh()).version == version
    return version


def not_counted(reason: str) -> float:
    """graphsvc_recommendations_not_counted_total{reason} in this process."""
    labels = {"reason": reason}
    found = REGISTRY.get_sample_value("graphsvc_recommendations_not_counted_total", labels)
    return found or 0.0


def by_version(figures: list[VersionFigures]) -> dict[int, VersionFigures]:
    return {f.version: f for f in figures}


def version_of(recommendation_id: str) -> int:
    """The version an id names (its payload is readable, only not forgeable)."""
    body = recommendation_id.split(".")[0]
    return int(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).split(b"|")[1])


async def test_a_follow_counts_once_for_the_version_that_ranked_the_list(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    async with make_driver(ranker_model_name=uid("model"), ranker_refresh_seconds=3600) as d:
        feedback = d.services.feedback
        me, (c, e, f, g) = await neighbourhood(d, uid)
        first = await d.suggestions(me, limit=4)  # by the built-in default, and cached
        assert {i.user_id for i in first.items} == {c, e, f, g}  # the rest: the cold start's
        assert version_of(first.recommendation_id) == 0
        version = await store_version(d.services, precision=0.25)
        cached = await d.suggestions(me, limit=4)  # cached: the version it was computed with
        assert version_of(cached.recommendation_id) == 0
        await d.services.suggestions.cache.invalidate(me)
        fresh = await d.suggestions(me, limit=4)
        assert version_of(fresh.recommendation_id) == version == 1

        rid = fresh.recommendation_id
        assert (await d.follow(me, c, recommendation_id=rid)).created
        assert not (await d.follow(me, c, recommendation_id=rid)).created  # a retry
        await d.unfollow(me, c)
        assert (await d.follow(me, c, recommendation_id=rid)).created  # the id replayed
        assert (await d.follow(me, e, recommendation_id=first.recommendation_id)).created
        assert (await d.follow(me, f)).created  # no id: counts nowhere
        figures = by_version(await feedback.report())

    assert set(figures) == {0, 1}
    v0, v1 = figures[0], figures[1]
    assert (v0.answers, v0.items, v0.follows) == (2, 8, 1)
    assert (v1.answers, v1.items, v1.follows) == (1, 4, 1)
    assert v1.offline_precision_at_10 == 0.25 and v0.offline_precision_at_10 is None
    assert v1.precision_served == 0.25 and v1.precision_shown is None  # nothing shown yet


async def test_an_id_counts_only_for_the_targets_its_answer_served(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    """A valid id sent with a target its answer did not serve is accepted (the follow, show
    or dismissal is made) and counts nothing: no version gains what it did not serve."""
    async with make_driver(ranker_model_name=uid("model")) as d:
        me, others = await neighbourhood(d, uid)
        answer = await d.suggestions(me, limit=2)
        served = [item.user_id for item in answer.items]
        unserved = [user for user in others if user not in served]
        assert len(served) == len(unserved) == 2
        rid, before = answer.recommendation_id, not_counted("not_served")
        assert (await d.follow(me, served[0], recommendation_id=rid)).created
        assert (await d.follow(me, unserved[0], recommendation_id=rid)).created
        assert (await d.follow(me, uid("stranger"), recommendation_id=rid)).created
        # Both were suggested lately (the list computed): both shows count for the discount.
        shown = await d.record_impressions(me, [served[1], unserved[1]], recommendation_id=rid)
        assert (shown.recorded, shown.ignored) == (2, 0)
        assert (await d.dismiss(me, unserved[1], recommendation_id=rid)).created
        assert (await d.dismiss(me, served[1], recommendation_id=rid)).created
        figures = by_version(await d.services.feedback.report())
    assert figures == {0: VersionFigures(0, answers=1, items=2, shown=1, follows=1, dismissals=1)}
    assert not_counted("not_served") == before + 4


async def test_a_forged_malformed_or_foreign_id_is_a_422_that_changes_nothing(
    make_driver: MakeDriver, make_service: MakeService, uid: UserIds
) -> None:
    name = uid("model")
    async with make_driver(ranker_model_name=name) as d:
        feedback = d.services.feedback
        me, (c, *_) = await neighbourhood(d, uid)
        other, _ = await neighbourhood(d, uid)
        mine = (await d.suggestions(me)).recommendation_id
        theirs = (await d.suggestions(other)).recommendation_id
        body, mac = mine.split(".")
        elsewhere = make_service(ranker_model_name=name, cursor_secret="another-secret-of-16+")
        bad = {
            "garbage": "not-an-id",
            "edited": f"{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{mac}",
            "another signer": elsewhere.feedback.issue(me, 0, [c]),
            "a cursor": CursorCodec(d.services.settings.pages.cursor_secret).encode_at(me, 1, me),
            "another user's": theirs,
            "empty": "",
        }
        before = await feedback.counters.counts()
        for why, rid in bad.items():
            query = {"recommendation_id": rid}
            answered = await d.http.put(f"/v1/users/{me}/following/{c}", params=query)
            detail = assert_error(answered, 422, "invalid_recommendation_id")
            assert "recommendation_id" in detail.message, why
            answered = await d.http.delete(f"/v1/users/{me}/suggestions/{c}", params=query)
            assert_error(answered, 422, "invalid_recommendation_id")
            shown = {"ids": [c], "recommendation_id": rid}
            answered = await d.http.post(f"/v1/users/{me}/suggestions/impressions", json=shown)
            assert_error(answered, 422, "invalid_recommendation_id")
        assert await feedback.counters.counts() == before  # no follow, show or dismissal counted
        assert not (await d.relation(me, c)).following
        assert await d.services.impressions.store.shows(me, [c]) == {c: 0}
        assert c in await d.suggested(me)  # not dismissed
        assert (await d.follow(me, c, recommendation_id=mine)).created  # the real one works


async def test_an_expired_id_is_accepted_but_not_counted(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    async with make_driver(
        ranker_model_name=uid("model"), suggest_recommendation_ttl_seconds=1
    ) as d:
        me, (c, e, *_) = await neighbourhood(d, uid)
        rid = (await d.suggestions(me)).recommendation_id
        before = not_counted("expired")
        await asyncio.sleep(1.1)  # past SUGGEST_RECOMMENDATION_TTL_SECONDS
        assert (await d.follow(me, c, recommendation_id=rid)).created
        assert (await d.dismiss(me, e, recommendation_id=rid)).created
        figures = by_version(await d.services.feedback.report())
    assert (figures[0].follows, figures[0].dismissals) == (0, 0)
    assert not_counted("expired") == before + 2


async def test_served_items_shows_and_dismissals_are_counted(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    async with make_driver(ranker_model_name=uid("model")) as d:
        me, others = await neighbourhood(d, uid)
        feedback = d.services.feedback
        first = await d.suggestions(me, limit=3)
        rid = first.recommendation_id
        c, e, g = (item.user_id for item in first.items)
        (f,) = set(others) - {c, e, g}
        shown = await d.record_impressions(me, [c, e, uid("never")], recommendation_id=rid)
        assert (shown.recorded, shown.ignored) == (2, 1)
        await d.record_impressions(me, [c], recommendation_id=rid)
        await d.record_impressions(me, [f])  # no id: the discount only
        assert (await d.dismiss(me, g, recommendation_id=rid)).created
        assert not (await d.dismiss(me, g, recommendation_id=rid)).created  # a repeat
        await d.suggestions(me, limit=2)  # from the cache
        figures = by_version(await feedback.report())
    assert figures == {0: VersionFigures(0, answers=2, items=5, shown=3, follows=0, dismissals=1)}


async def test_a_redis_failure_never_fails_the_follow(
    service: Services, server_settings: Settings, uid: UserIds
) -> None:
    """The follow is made and answered; the count is lost, and says so in a metric."""
    dead = server_settings.with_values(
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
        redis_cluster=False,
        redis_connect_timeout=0.5,
    )
    client = open_redis(dead.redis)
    try:
        breaker = redis_breaker(retry_seconds=60)
        counters = FeedbackCounters(client, dead.redis, dead.suggestions)
        feedback = SuggestionFeedback(
            counters,
            service.core.neo4j.ranker_models,
            breaker,
            dead.suggestions,
            service.settings.pages,
        )
        settings = service.settings
        relations = Relations(
            service.core.neo4j.edges,
            service.core.writes,
            settings.writes,
            settings.pages,
            feedback,
            service.core.neo4j.subscriptions,
        )
        me, target = uid("me"), uid("target")
        before = not_counted("redis")
        result = await relations.follow(me, target, feedback.issue(me, 0, [target]))
        assert result.following and result.created
        assert breaker.open
        assert not_counted("redis") == before + 1
        assert (await service.relations.relationships(me, [target]))[0].following
    finally:
        await client.aclose()


async def test_the_report_prints_what_the_counters_hold(
    make_driver: MakeDriver, server_settings: Settings, uid: UserIds
) -> None:
    name = uid("model")
    async with make_driver(ranker_model_name=name, ranker_refresh_seconds=3600) as d:
        me, (c, *_) = await neighbourhood(d, uid)
        await store_version(d.services, precision=0.5)
        rid = (await d.suggestions(me, limit=4)).recommendation_id
        await d.record_impressions(me, [c], recommendation_id=rid)
        await d.follow(me, c, recommendation_id=rid)
        over_http = await d.suggestions_report()
    assert over_http.model == name
    assert [v.model_dump() for v in over_http.versions] == [
        {
            "version": 1,
            "answers": 1,
            "items": 4,
            "shown": 1,
            "follows": 1,
            "dismissals": 0,
            "precision_shown": 1.0,
            "precision_served": 0.25,
            "offline_precision_at_10": 0.5,
        }
    ]

    env = server_env(server_settings, RANKER_MODEL_NAME=name, DEVELOPMENT="1")
    printed = await asyncio.to_thread(report_process, env, "--json")
    assert json.loads(printed) == over_http.model_dump()
    table = (await asyncio.to_thread(report_process, env)).splitlines()
    assert table[1].split() == [
        "version",
        "answers",
        "items",
        "shown",
        "follows",
        "dismissals",
        "per_shown",
        "per_served",
        "offline_p@10",
    ]
    assert table[2].split() == ["1", "1", "4", "1", "1", "0", "1.0000", "0.2500", "0.5000"]


def report_process(env: dict[str, str], *options: str) -> str:
    return cli(env, "ranker", "report", *options)


def test_the_report_of_an_unreachable_redis_is_one_line(server_settings: Settings) -> None:
    env = server_env(server_settings, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    result = subprocess.run(
        [sys.executable, "-m", "graphsvc.ops.cli", "ranker", "report", "--json"],
        env={**env, "REDIS_CLUSTER": "0", "REDIS_CONNECT_TIMEOUT": "0.5", "DEVELOPMENT": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("graphsvc ranker: redis: ConnectionError"), result.stderr
    assert result.stdout == ""
