"""Interaction-weighted affinity as served: after a flush, a user's interactions with a friend
raise the candidates reached through that friend, under the built-in ranker and under a model
trained on a graph without any interaction (which can learn nothing about affinity itself):
the paths through the friend weigh more, and every ranker keeps a positive weight on them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime

from graphsvc.adapters.neo4j.ranker_models import NewModel
from graphsvc.domain.ranker.scoring import FEATURES, Ranker
from graphsvc.workers.ranker.examples import Example
from graphsvc.workers.ranker.fit import fit
from tests.support.driver import Driver

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


def trained_without_interactions() -> Ranker:
    """A model fitted on candidates that never had an interaction: paths predict a follow."""
    rng = random.Random(11)
    examples = []
    for u in range(30):
        vectors, labels = [], []
        for _ in range(40):
            raw = {name: 0.0 for name in FEATURES}
            raw["paths"] = float(rng.randint(0, 6))
            raw["ra"] = raw["paths"] / rng.randint(2, 40)
            raw["aa"] = raw["paths"] / 3.0
            raw["followers"], raw["follows"] = rng.randint(1, 500), rng.randint(1, 500)
            raw["paths_share"] = raw["paths"] / (1 + raw["followers"])
            vectors.append([raw[name] for name in FEATURES])
            labels.append(int(rng.random() < raw["paths"] / 8))
        examples.append(Example(f"u{u}", [str(n) for n in range(40)], vectors, labels, 3))
    model = fit(examples, 1)
    assert model.weights["affinity_ra"] == 0.0 and model.weights["follower_affinity"] == 0.0
    return model


async def scores(driver: Driver, me: str) -> dict[str, float]:
    await driver.services.suggestions.cache.invalidate(me)
    return {uid: item.score for uid, item in (await driver.suggested(me)).items()}


async def raised(driver: Driver, uid: UserIds) -> None:
    """A fresh neighbourhood: `behind` is reached through `close` alone, `elsewhere` through
    b and c (two paths beat one); then 40 messages to `close`, flushed, lift `behind` past."""
    me, close, b, c = uid("me"), uid("close"), uid("b"), uid("c")
    behind, elsewhere = uid("behind"), uid("elsewhere")
    await driver.follow_pairs(
        (me, close), (me, b), (me, c), (close, behind), (b, elsewhere), (c, elsewhere)
    )
    before = await scores(driver, me)
    assert before[elsewhere] > before[behind]
    await driver.interact(*[(me, close, "message", datetime.now(UTC))] * 40)
    after = await scores(driver, me)
    assert after[behind] > before[behind]
    assert after[behind] > after[elsewhere]  # it moved past
    assert after[elsewhere] == before[elsewhere]


async def test_interactions_with_a_friend_raise_the_candidates_behind_that_friend(
    make_driver: MakeDriver, uid: UserIds
) -> None:
    name = uid("model")
    settings = {
        "ranker_model_name": name,
        "ranker_refresh_seconds": 0.05,
        "interactions_pair_daily_max": 10_000,
    }
    async with make_driver(**settings) as driver:
        source = driver.services.suggestions.ranker
        assert (await source.refresh()).version == 0  # the built-in default
        await raised(driver, uid)

        models = driver.services.core.neo4j.ranker_models
        body = dataclasses.replace(trained_without_interactions(), trained={"edges": 6})
        new = NewModel(json.dumps(body.as_json()), "{}", 0, 6, True, 0, "a test's")
        version, promoted = await models.save(name, new)
        assert promoted
        await asyncio.sleep(0.1)
        assert (await source.refresh()).version == version
        await raised(driver, uid)
