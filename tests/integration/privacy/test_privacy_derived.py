"""Answers derived from lists reveal nothing of a hidden one: every list route and flag, asked
by viewers allowed one side of the owner's network only, over the real servers.

An answer read from a list the viewer may not see is a 403 ``network_hidden`` naming the
setting; an answer read from visible lists only is what an admin key reads; the owner and an
admin key read everything. ``celebrities_only`` never tells the celebrity bit of a followed
user whose counts are hidden from the viewer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.privacy import Visibility
from tests.support.driver import Driver
from tests.support.helpers import app_client

Uid = Callable[[str], str]
Answer = tuple[int, Any]
VIEWER_HEADER = "X-Graph-Viewer"
CELEBRITY = 3  # followers from which a user is a celebrity, in these tests


@dataclass(frozen=True)
class Served:
    """One service's app, read with the product's service key and with an admin key."""

    product: httpx.AsyncClient
    admin: httpx.AsyncClient

    async def get(self, path: str, viewer: str | None = None, *, admin: bool = False) -> Answer:
        """The answer served to ``viewer`` (None: no one named)."""
        headers = {} if viewer is None else {VIEWER_HEADER: viewer}
        answer = await (self.admin if admin else self.product).get(path, headers=headers)
        return answer.status_code, answer.json()


@pytest.fixture(scope="module")
async def product_key(backends: Services) -> str:
    """A product's service key: read and write, no admin, bound to no user."""
    scopes = frozenset({Scope.READ, Scope.WRITE})
    return (await backends.access.create(scopes, name="derived privacy tests")).token


@pytest.fixture
async def served(
    make_service: Callable[..., Services], service_key: str, product_key: str
) -> AsyncIterator[Served]:
    service = make_service(rate_limits_enabled=False, celebrity_followers=CELEBRITY)
    app = create_app(service.settings, service)
    async with app_client(app, product_key) as product, app_client(app, service_key) as admin:
        yield Served(product, admin)


def ids(body: Any) -> list[str]:
    """The ids of a page (items with a user id) or of an id page (plain ids)."""
    return [i if isinstance(i, str) else i["user_id"] for i in body["items"]]


def assert_hidden(answer: Answer, owner: str, setting: str) -> None:
    status, body = answer
    assert status == 403, body
    assert body["error"]["code"] == "network_hidden", body
    assert repr(owner) in body["error"]["message"] and setting in body["error"]["message"], body


# -- every route and flag, one side hidden ------------------------------------------------------

VIEWERS = ("anonymous", "stranger", "follower", "followed", "mutual", "owner")
SEES = {  # which viewers may see a list with each visibility
    Visibility.FOLLOWERS: {"follower", "mutual", "owner"},
    Visibility.MUTUALS: {"mutual", "owner"},
    Visibility.PRIVATE: {"owner"},
}
FOLLOWERS, FOLLOWING = "followers", "following"
# Each route: the owner's lists its answer is read from, and what an admin reads (by name).
ROUTES: dict[str, tuple[set[str], list[str]]] = {
    "/v1/users/{owner}/followers": ({FOLLOWERS}, ["mutual", "follower"]),
    "/v1/users/{owner}/followers?not_followed_back=true": ({FOLLOWERS, FOLLOWING}, ["follower"]),
    "/v1/users/{owner}/following": ({FOLLOWING}, ["followed", "mutual"]),
    "/v1/users/{owner}/following?not_following_back=true": ({FOLLOWING, FOLLOWERS}, ["followed"]),
    "/v1/users/{owner}/following?celebrities_only=true": ({FOLLOWING}, ["followed"]),
    "/v1/users/{owner}/following?celebrities_only=true&not_following_back=true": (
        {FOLLOWING, FOLLOWERS},
        ["followed"],
    ),
    "/v1/users/{owner}/friends": ({FOLLOWERS, FOLLOWING}, ["mutual"]),
    "/v1/users/{owner}/common-followers/{other}": ({FOLLOWERS}, ["follower"]),
    "/v1/users/{other}/common-followers/{owner}": ({FOLLOWERS}, ["follower"]),
    "/v1/users/{owner}/common-following/{other}": ({FOLLOWING}, ["followed"]),
    "/v1/users/{other}/common-following/{owner}": ({FOLLOWING}, ["followed"]),
    "/v1/users/{owner}/familiar-followers/{target}": ({FOLLOWING}, ["followed"]),
    "/v1/users/{stranger}/familiar-followers/{owner}": ({FOLLOWERS}, ["mutual"]),
    "/v1/users/{owner}/counts": (set(), []),
}
OWN_VIEWS = {"/v1/users/{owner}/friends"}  # read by the owner (or no one named) alone


@pytest.fixture
async def network(driver: Driver, uid: Uid) -> dict[str, str]:
    """The owner's follower, mutual and followed user, a stranger, another user who shares a
    follower and a followed user with the owner, a target the followed user follows, and a
    fan who makes the followed user a celebrity. The stranger follows the mutual."""
    people = {
        name: uid(name)
        for name in ("owner", "follower", "mutual", "followed", "stranger", "other", "target")
    }
    owner, other, followed = people["owner"], people["other"], people["followed"]
    await driver.follow_pairs(
        (people["follower"], owner),
        (people["mutual"], owner),
        (owner, people["mutual"]),
        (owner, followed),
        (people["follower"], other),
        (other, followed),
        (uid("fan"), followed),
        (followed, people["target"]),
        (people["stranger"], people["mutual"]),
    )
    return people


def shown(body: Any) -> Any:
    """A body as any viewer allowed it reads it (only the user itself is shown its pending
    requests)."""
    return {k: v for k, v in body.items() if k != "pending_requests"}


@pytest.mark.parametrize(
    "visibility", [Visibility.FOLLOWERS, Visibility.MUTUALS, Visibility.PRIVATE]
)
@pytest.mark.parametrize("hidden", [FOLLOWERS, FOLLOWING])
async def test_no_answer_reveals_the_list_the_owner_hides(
    served: Served, driver: Driver, network: dict[str, str], hidden: str, visibility: Visibility
) -> None:
    owner = network["owner"]
    await driver.set_privacy(owner, **{f"{hidden}_visibility": visibility.value})
    setting = f"{hidden}_visibility={visibility.value}"
    for template, (reads, names) in ROUTES.items():
        path = template.format(**network)
        status, everything = await served.get(path, admin=True)
        assert status == 200, everything
        if reads:
            assert ids(everything) == [network[name] for name in names], path
        else:
            assert (everything["followers"], everything["following"]) == (2, 2), everything
        for name in VIEWERS:
            answer = await served.get(path, None if name == "anonymous" else network[name])
            if template in OWN_VIEWS and name not in ("owner", "anonymous"):
                assert answer[0] == 403 and answer[1]["error"]["code"] == "owner_only", answer
            elif hidden in reads and name not in SEES[visibility]:
                assert_hidden(answer, owner, setting)
            else:
                assert (answer[0], shown(answer[1])) == (200, shown(everything)), (path, name)


async def test_a_hidden_following_is_not_told_by_the_followers_not_followed_back(
    served: Served, driver: Driver, uid: Uid
) -> None:
    """P hides its following; Q1 and Q2 follow P, P follows Q1: P's followers it does not
    follow back would tell another user that P follows Q1."""
    p, q1, q2, someone = uid("p"), uid("q1"), uid("q2"), uid("someone")
    await driver.follow_pairs((q1, p), (q2, p), (p, q1))
    await driver.set_privacy(p, following_visibility="private")
    for viewer in (someone, None):
        assert_hidden(
            await served.get(f"/v1/users/{p}/following", viewer), p, "following_visibility"
        )
        assert (await served.get(f"/v1/users/{p}/friends", viewer))[0] == 403
        answer = await served.get(f"/v1/users/{p}/followers?not_followed_back=true", viewer)
        assert_hidden(answer, p, "following_visibility=private")
        status, body = await served.get(f"/v1/users/{p}/followers", viewer)
        assert (status, ids(body)) == (200, [q2, q1])
    for viewer, admin in ((p, False), (None, True)):
        status, body = await served.get(
            f"/v1/users/{p}/followers?not_followed_back=true", viewer, admin=admin
        )
        assert (status, ids(body)) == (200, [q2])


async def test_hidden_followers_are_not_told_by_the_following_not_following_back(
    served: Served, driver: Driver, uid: Uid
) -> None:
    """The mirror image: P hides its followers and follows R1 and R2; R1 follows P back."""
    p, r1, r2, someone = uid("p"), uid("r1"), uid("r2"), uid("someone")
    await driver.follow_pairs((p, r1), (p, r2), (r1, p))
    await driver.set_privacy(p, followers_visibility="private")
    for viewer in (someone, None):
        assert_hidden(
            await served.get(f"/v1/users/{p}/followers", viewer), p, "followers_visibility"
        )
        answer = await served.get(f"/v1/users/{p}/following?not_following_back=true", viewer)
        assert_hidden(answer, p, "followers_visibility=private")
        status, body = await served.get(f"/v1/users/{p}/following", viewer)
        assert (status, ids(body)) == (200, [r2, r1])
    for viewer, admin in ((p, False), (None, True)):
        status, body = await served.get(
            f"/v1/users/{p}/following?not_following_back=true", viewer, admin=admin
        )
        assert (status, ids(body)) == (200, [r2])


# -- celebrities and hidden counts ---------------------------------------------------------------


async def test_celebrities_only_never_tells_a_hidden_count(
    served: Served, driver: Driver, uid: Uid
) -> None:
    """A followed celebrity whose counts are hidden from the viewer is not listed as a
    celebrity to that viewer, the reader of its own following included; it is to itself
    and to an admin key. Its counts' celebrity bit is null to the same viewers."""
    reader, shy, open_, small, stranger = (
        uid(n) for n in ("reader", "shy", "open", "small", "stranger")
    )
    for star in (shy, open_):
        await driver.follow_pairs(*((uid("fan"), star) for _ in range(CELEBRITY - 1)))
    await driver.follows(reader, shy, small, open_)
    await driver.set_privacy(shy, counts_visibility="private")
    celebrities = f"/v1/users/{reader}/following?celebrities_only=true"
    for flags in ("", "&not_following_back=true"):
        for viewer in (stranger, reader, None):
            assert ids((await served.get(celebrities + flags, viewer))[1]) == [open_], viewer
        assert ids((await served.get(celebrities + flags, shy))[1]) == [open_, shy]
        assert ids((await served.get(celebrities + flags, admin=True))[1]) == [open_, shy]
    for viewer in (stranger, reader, None):
        status, counts = await served.get(f"/v1/users/{shy}/counts", viewer)
        assert (status, counts["celebrity"], counts["counts_hidden"]) == (200, None, True)
    for viewer, admin in ((shy, False), (None, True)):
        status, counts = await served.get(f"/v1/users/{shy}/counts", viewer, admin=admin)
        assert (status, counts["celebrity"], counts["followers"]) == (200, True, CELEBRITY)
