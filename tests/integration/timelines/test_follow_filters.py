"""A follow's `reblogs` and `languages` options on the home timeline, on the real servers: the
author's posts they exclude are not read, whether pushed or pulled (a celebrity), from the next
read after a change on, and nobody else's home timeline changes."""

from __future__ import annotations

from collections.abc import Callable

from tests.support import timelines
from tests.support.driver import Driver, refused
from tests.support.times import at

api = timelines.timeline_driver

Uid = Callable[[str], str]


async def publish_mixed(api: Driver, author: str) -> None:
    """Four posts: plain, English, a reblog, German."""
    await api.publish(author, "plain", at(1))
    assert (await api.publish(author, "en", at(2), language="en")).language == "en"
    await api.publish(author, "boost", at(3), reblog=True)
    await api.publish(author, "de", at(4), language="de")


async def test_options_filter_an_ordinary_authors_pushed_posts(api: Driver, uid: Uid) -> None:
    picky, plain, author = uid("picky"), uid("plain"), uid("author")
    for reader in (picky, plain):
        assert await api.timeline_of(reader) == []  # active readers: posts are pushed to them
        await api.follows(reader, author)
    await api.follow(picky, author, reblogs=False, languages=["en"])
    await publish_mixed(api, author)
    await api.settle()

    everything = [(author, "de"), (author, "boost"), (author, "en"), (author, "plain")]
    assert await api.timeline_of(plain) == everything
    assert await api.timeline_of(picky) == [(author, "en"), (author, "plain")]

    # a change holds from the next read on, for the posts pushed before it too
    await api.follow(picky, author, reblogs=True)
    assert await api.timeline_of(picky) == [(author, "boost"), (author, "en"), (author, "plain")]
    await api.follow(picky, author, languages=[])
    assert await api.timeline_of(picky) == everything
    post = await api.post(author, "boost")
    assert (post.reblog, post.language) == (True, None)


async def test_options_filter_a_celebritys_pulled_posts(api: Driver, uid: Uid) -> None:
    picky, star = uid("picky"), uid("star")
    assert await api.timeline_of(picky) == []
    await api.follows(picky, star)
    for _ in range(3):  # a celebrity: readers pull its posts
        await api.follows(uid("fan"), star)
    await api.follow(picky, star, languages=["de", "fr"])
    await publish_mixed(api, star)
    assert (await api.post(star, "en")).mode == "pull"
    assert await api.timeline_of(picky) == [(star, "de"), (star, "boost"), (star, "plain")]


async def test_a_bad_post_language_is_refused(api: Driver, uid: Uid) -> None:
    author = uid("author")
    await refused(api.publish(author, "p", at(1), language="English"), 422, "invalid_options")
    await refused(api.post(author, "p"), 404, "post_not_found")
