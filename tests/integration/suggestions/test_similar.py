"""Accounts similar to a seed, on the real servers: what the seed's followers also follow, with
the exclusions and privacy rules of the user's own suggestions."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from graphsvc.wire.schemas import SimilarItem
from tests.support.driver import Driver, refused

UserIds = Callable[[str], str]
EXCLUSIONS = (
    "followed",
    "requested",
    "blocked",
    "blocker",
    "dismissed",
    "muted",
    "suspended",
    "undiscoverable",
)


async def similar(driver: Driver, user_id: str, seed_id: str) -> dict[str, SimilarItem]:
    items = (await driver.similar(user_id, seed_id, limit=50)).items
    return {item.user_id: item for item in items}


async def seeded(driver: Driver, uid: UserIds) -> tuple[str, str, str, str, str]:
    """(me, seed, a, b, w1): me follows the seed; of its followers w1, w2 and w3, two follow
    a and one follows b."""
    me, seed, a, b = uid("me"), uid("seed"), uid("a"), uid("b")
    w1, w2, w3 = uid("w1"), uid("w2"), uid("w3")
    await driver.follow_pairs((w1, seed), (w2, seed), (w3, seed), (me, seed))
    await driver.follow_pairs((w1, a), (w2, a), (w3, b))
    return me, seed, a, b, w1


async def test_similar_accounts_are_those_the_seeds_followers_follow(
    driver: Driver, uid: UserIds
) -> None:
    me, seed, a, b, _ = await seeded(driver, uid)
    found = await similar(driver, me, seed)
    assert list(found) == [a, b]  # a: shared by two followers; neither the seed nor me
    assert found[a].reasons.seed == seed and found[a].reasons.shared_followers == 2
    assert found[b].reasons.shared_followers == 1
    assert found[a].sources == ["similar_to"]
    assert found[a].score > found[b].score > 0
    assert [i.user_id for i in (await driver.similar(me, seed, limit=1)).items] == [a]
    # a seed nobody follows: nothing similar, and no error
    assert await similar(driver, me, a) == {}


@pytest.mark.parametrize("exclusion", EXCLUSIONS)
async def test_every_exclusion_of_suggestions_holds(
    driver: Driver, uid: UserIds, exclusion: str
) -> None:
    me, seed, a, _, _ = await seeded(driver, uid)
    assert a in await similar(driver, me, seed)
    if exclusion == "followed":
        await driver.follows(me, a)
    elif exclusion == "requested":
        await driver.set_privacy(a, locked=True)
        assert (await driver.follow(me, a)).requested  # a pending request, no follow
    elif exclusion in ("blocked", "blocker"):
        await driver.block(*((me, a) if exclusion == "blocked" else (a, me)))
    elif exclusion == "dismissed":
        await driver.dismiss(me, a)
    elif exclusion == "muted":
        await driver.mute(me, a)
    elif exclusion == "suspended":
        await driver.set_status(a, "suspended")
        await driver.drain()
    else:
        await driver.set_privacy(a, discoverable=False)
    assert a not in await similar(driver, me, seed)


async def test_the_seeds_followers_are_read_only_where_the_user_may_see_them(
    driver: Driver, uid: UserIds
) -> None:
    me, seed, a, _, _ = await seeded(driver, uid)
    stranger = uid("stranger")  # does not follow the seed
    await driver.set_privacy(seed, followers_visibility="followers")
    assert a in await similar(driver, me, seed)
    assert await similar(driver, stranger, seed) == {}
    await driver.set_privacy(seed, followers_visibility="mutuals")
    assert await similar(driver, me, seed) == {}  # the seed does not follow me
    await driver.follows(seed, me)
    assert a in await similar(driver, me, seed)
    await driver.set_privacy(seed, followers_visibility="private")
    assert await similar(driver, me, seed) == {}
    assert a in await similar(driver, seed, seed)  # its own list: always seen


async def test_a_followers_follows_are_read_only_where_the_user_may_see_them(
    driver: Driver, uid: UserIds
) -> None:
    me, seed, a, b, w1 = await seeded(driver, uid)
    c = uid("c")
    await driver.follows(w1, c)  # only w1 follows c
    assert c in await similar(driver, me, seed)
    await driver.set_privacy(w1, following_visibility="followers")
    found = await similar(driver, me, seed)
    assert c not in found and found[a].reasons.shared_followers == 1  # w1 no longer read
    await driver.follows(me, w1)
    assert c in await similar(driver, me, seed)
    await driver.set_privacy(w1, following_visibility="private")
    assert c not in await similar(driver, me, seed)
    assert b in await similar(driver, me, seed)


async def test_similar_bad_input(client: httpx.AsyncClient, driver: Driver, uid: UserIds) -> None:
    me, seed = uid("me"), uid("seed")
    await driver.follows(me, seed)
    unknown = uid("unknown")
    error = await refused(driver.similar(me, unknown), 404, "unknown_user")
    assert unknown in error.message
    for limit in (0, 51):
        response = await client.get(
            f"/v1/users/{me}/suggestions/similar/{seed}", params={"limit": limit}
        )
        assert response.status_code == 422, response.text
    assert (await client.get(f"/v1/users/{me}/suggestions/similar/bad id")).status_code == 422
    # the user's own view: another viewer may not read it
    response = await client.get(
        f"/v1/users/{me}/suggestions/similar/{seed}", headers={"X-Graph-Viewer": seed}
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "owner_only"
