"""The explainer of people you may know, on the real servers: a suggested target's rank,
sources and feature contributions (they sum to its score, whose logistic is the served
score); a target that is not suggested is named the first exclusion that removed it; internal
keys only."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable

import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.ranker.scoring import FEATURES
from tests.support.driver import Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]
FILLS = {"trending", "popular"}


@pytest.fixture
async def driver(make_driver: MakeDriver) -> AsyncIterator[Driver]:
    async with make_driver(suggest_thin=50) as graph:
        yield graph


async def test_a_suggested_target_is_explained_feature_by_feature(
    driver: Driver, uid: UserIds
) -> None:
    me, m1, m2, c, d = uid("me"), uid("m1"), uid("m2"), uid("c"), uid("d")
    await driver.follow_pairs((me, m1), (me, m2), (m1, c), (m2, c), (m1, d))
    served = list((await driver.suggested(me)).values())
    ranked = [item for item in served if not FILLS & set(item.sources)]
    assert {item.user_id for item in ranked} >= {c, d}
    for rank, item in enumerate(ranked, start=1):  # the candidates come before the fills
        why = await driver.explain_suggestion(me, item.user_id)
        assert (why.suggested, why.rank, why.excluded) == (True, rank, None)
        assert why.sources == item.sources
        assert why.model_version == 0  # no model trained under this test's name: the default
        assert [f.name for f in why.features] == list(FEATURES)
        assert why.score is not None and why.probability is not None
        total = why.intercept + sum(f.contribution for f in why.features)
        assert total == pytest.approx(why.score)
        assert why.probability == pytest.approx(1 / (1 + math.exp(-why.score)))
        assert why.probability == pytest.approx(item.score)  # never shown: undiscounted
        assert (why.impressions.shows, why.impressions.factor) == (0, 1.0)
        for f in why.features:
            assert f.contribution == pytest.approx(f.weight * f.transformed)
    why = await driver.explain_suggestion(me, c)
    raw = {f.name: f.raw for f in why.features}
    assert raw["paths"] == 2  # through m1 and m2
    assert why.rank == 1 and "friends_of_friends" in why.sources


async def test_shows_beyond_the_free_ones_are_the_discount(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    me, m, c = uid("me"), uid("m"), uid("c")
    async with make_driver(suggest_thin=50, suggest_impressions_free=1) as driver:
        await driver.follow_pairs((me, m), (m, c))
        assert c in await driver.suggested(me)  # served, so its shows count
        for _ in range(3):
            await driver.record_impressions(me, [c])
        why = await driver.explain_suggestion(me, c)
        decay = driver.services.settings.suggestions.suggest_impression_decay
        assert (why.impressions.shows, why.impressions.factor) == (3, pytest.approx(decay**2))


@pytest.mark.parametrize("exclusion", ["followed", "blocked", "blocker", "muted", "dismissed"])
async def test_an_excluded_target_is_named_its_exclusion(
    driver: Driver, uid: UserIds, exclusion: str
) -> None:
    me, m, c = uid("me"), uid("m"), uid("c")
    await driver.follow_pairs((me, m), (m, c))
    assert (await driver.explain_suggestion(me, c)).suggested
    if exclusion == "followed":
        await driver.follow(me, c)
    elif exclusion == "blocked":
        await driver.block(me, c)
    elif exclusion == "blocker":
        await driver.block(c, me)
    elif exclusion == "muted":
        await driver.mute(me, c)
    else:
        await driver.dismiss(me, c)
    why = await driver.explain_suggestion(me, c)
    expected = "blocked" if exclusion == "blocker" else exclusion
    assert (why.suggested, why.rank, why.excluded) == (False, None, expected)
    assert (why.sources, why.features, why.score) == ([], [], None)


async def test_a_target_no_source_reaches_and_an_unknown_one(driver: Driver, uid: UserIds) -> None:
    me, m, c, stranger = uid("me"), uid("m"), uid("c"), uid("stranger")
    await driver.follow_pairs((me, m), (m, c), (stranger, m))
    assert (await driver.explain_suggestion(me, stranger)).excluded == "not_reached"
    assert (await driver.explain_suggestion(me, uid("nobody"))).excluded == "unknown_user"
    assert (await driver.explain_suggestion(me, me)).excluded == "self"
    assert (await driver.explain_suggestion(me, m)).excluded == "followed"


async def test_the_explainer_is_refused_without_the_internal_scope(
    backends: Services, make_driver: MakeDriver, uid: UserIds
) -> None:
    me = uid("me")
    key = (await backends.access.create(frozenset({Scope.READ, Scope.WRITE}))).token
    async with make_driver(key=key) as reader:
        await refused(reader.explain_suggestion(me, uid("c")), 403, "missing_scope")
