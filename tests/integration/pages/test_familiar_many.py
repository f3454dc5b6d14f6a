"""Familiar followers for many targets in one call, against the real servers: per target what
the one-target route answers, a hidden target answered as hidden without refusing the rest,
names only of people whose following the viewer may see, and the bound on targets named."""

from __future__ import annotations

from collections.abc import Callable

from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


async def test_each_target_as_the_one_target_route_answers_it(driver: Driver, uid: UserIds) -> None:
    me = uid("me")
    known = [uid(f"known{n}") for n in range(5)]
    targets = [uid(f"target{n}") for n in range(3)]
    await driver.follows(me, *known)
    await driver.follow_pairs(
        (known[0], targets[0]), (known[1], targets[0]), (known[2], targets[0]),
        (known[3], targets[1]), (known[4], targets[1]), (known[0], me), (uid("stranger"), targets[0]),
    )  # fmt: skip
    asked = [*targets, me, uid("nobody"), targets[0]]
    many = (await driver.familiar_followers_many(me, asked)).familiar
    assert list(many) == [*targets, me, asked[4]]  # each once, in the order asked
    for target in [*targets, me]:
        one = await driver.familiar_followers(me, target, limit=10)
        assert (many[target].total, many[target].items) == (one.total, one.items)
        assert not many[target].hidden
    assert many[targets[0]].total == 3 and many[targets[0]].items == known[2::-1]
    assert (many[targets[2]].total, many[asked[4]].total) == (0, 0)


async def test_hidden_targets_and_names_follow_the_viewers_rights(
    driver: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    me, shy, open_, hidden = uid("me"), uid("shy"), uid("open"), uid("hidden")
    await driver.follows(me, shy, open_)
    await driver.follow_pairs((shy, open_), (shy, hidden), (open_, hidden))
    await driver.set_privacy(hidden, followers_visibility="private")
    await driver.set_privacy(shy, following_visibility="private")
    async with as_viewer(me) as graph:
        many = (await graph.familiar_followers_many(me, [open_, hidden])).familiar
        assert many[hidden].hidden and many[hidden].total is None and many[hidden].items == []
        assert many[open_].total == 0  # shy follows open_, but whom shy follows is shy's
    async with as_viewer(shy) as graph:  # whom shy follows is shy's to see
        assert (await graph.familiar_followers_many(me, [open_])).familiar[open_].items == [shy]
    await driver.set_privacy(me, following_visibility="private")
    async with as_viewer(uid("stranger")) as graph:
        await refused(graph.familiar_followers_many(me, [open_]), 403, "network_hidden")


async def test_the_targets_are_bounded(driver: Driver, uid: UserIds) -> None:
    me = uid("me")
    await refused(driver.familiar_followers_many(me, []), 422, "too_many_ids")
    many = [uid(f"t{n}") for n in range(41)]
    await refused(driver.familiar_followers_many(me, many), 422, "too_many_ids")
    bad = await driver.http.get(f"/v1/users/{me}/familiar-followers", params={"ids": "a b"})
    assert bad.status_code == 422 and "ids" in bad.text


async def test_relationships_carry_known_followers_when_asked(driver: Driver, uid: UserIds) -> None:
    me, friend, target = uid("me"), uid("friend"), uid("target")
    await driver.follow_pairs((me, friend), (friend, target))
    plain = (await driver.relationships(me, [target, friend])).relationships
    assert plain[target].known_followers is None
    asked = (await driver.relationships(me, [target, friend], known_followers=True)).relationships
    assert asked[target].known_followers is not None
    assert (asked[target].known_followers.total, asked[target].known_followers.items) == (
        1, [friend],
    )  # fmt: skip
    assert asked[friend].following and asked[friend].known_followers.total == 0  # type: ignore[union-attr]
    many = [uid(f"t{n}") for n in range(41)]
    await refused(driver.relationships(me, many, known_followers=True), 422, "too_many_ids")
