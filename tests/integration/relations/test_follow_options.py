"""A follow's options (notify, reblogs, languages) through the HTTP API on the real servers:
set by a follow or a request, changed by a repeat, kept by an approval, shown to the follower
alone, and refused whole when malformed."""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.client.errors import GraphError
from tests.support.driver import Driver, refused

Uid = Callable[[str], str]


def options(body: object) -> tuple[bool | None, bool | None, list[str] | None]:
    return body.notifying, body.showing_reblogs, body.languages  # type: ignore[attr-defined]


async def test_a_new_follow_takes_its_options_and_a_repeat_changes_only_those_it_names(
    driver: Driver, uid: Uid
) -> None:
    fan, author = uid("fan"), uid("author")
    made = await driver.follow(fan, author, notify=True, languages=["en", "de", "en"])
    assert (made.created, made.options_changed) == (True, False)
    assert options(made) == (True, True, ["en", "de"])
    assert options(await driver.relation(fan, author)) == (True, True, ["en", "de"])

    repeat = await driver.follow(fan, author, reblogs=False)
    assert (repeat.created, repeat.options_changed) == (False, True)
    assert options(repeat) == (True, False, ["en", "de"])
    same = await driver.follow(fan, author, reblogs=False, notify=True)
    assert (same.created, same.options_changed) == (False, False)

    cleared = await driver.follow(fan, author, languages=[], notify=False)
    assert cleared.options_changed and options(cleared) == (False, False, None)
    assert options(await driver.relation(fan, author)) == (False, False, None)
    assert await driver.ids(author, "followers") == [fan]  # still one follow, unchanged


async def test_options_are_the_followers_alone(driver: Driver, uid: Uid) -> None:
    fan, author = uid("fan"), uid("author")
    await driver.follow(fan, author, notify=True, reblogs=False)
    seen_by_author = await driver.relation(author, fan)
    assert seen_by_author.followed_by and options(seen_by_author) == (None, None, None)
    await driver.follow(author, fan)
    assert options(await driver.relation(author, fan)) == (False, True, None)  # its own follow


async def test_an_unfollow_forgets_the_options(driver: Driver, uid: Uid) -> None:
    fan, author = uid("fan"), uid("author")
    await driver.follow(fan, author, notify=True, languages=["fr"])
    await driver.unfollow(fan, author)
    assert options(await driver.relation(fan, author)) == (None, None, None)
    again = await driver.follow(fan, author)
    assert again.created and options(again) == (False, True, None)


async def test_a_request_carries_its_options_into_the_approved_follow(
    driver: Driver, uid: Uid
) -> None:
    owner, fan = uid("owner"), uid("fan")
    await driver.set_privacy(owner, locked=True)
    asked = await driver.follow(fan, owner, notify=True)
    assert asked.requested and options(asked) == (True, True, None)
    retuned = await driver.follow(fan, owner, languages=["ja"])
    assert (retuned.requested, retuned.created, retuned.options_changed) == (True, False, True)
    pending = await driver.relation(fan, owner)
    assert pending.requested and options(pending) == (True, True, ["ja"])

    await driver.approve_follow_request(owner, fan)
    followed = await driver.relation(fan, owner)
    assert followed.following and options(followed) == (True, True, ["ja"])


async def test_malformed_options_are_refused_and_change_nothing(driver: Driver, uid: Uid) -> None:
    fan, author = uid("fan"), uid("author")
    too_many = [f"a{chr(97 + i)}" for i in range(17)]
    for languages in (["EN"], ["english"], too_many):
        error = await refused(
            driver.follow(fan, author, languages=languages), 422, "invalid_options"
        )
        assert isinstance(error, GraphError)
    assert not (await driver.relation(fan, author)).following
    await driver.follow(fan, author, notify=True)
    await refused(
        driver.follow(fan, author, notify=False, languages=["x1"]), 422, "invalid_options"
    )
    assert options(await driver.relation(fan, author)) == (True, True, None)
