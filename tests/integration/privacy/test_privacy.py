"""Privacy settings on the real servers: each visibility against each kind of viewer, hidden
counts, the viewer a key reads as, and the settings' mirror (rebuilt when missing, repaired
when its write is lost)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.privacy import Privacy, PrivacyEdit, Visibility
from tests.support.driver import AsViewer, Driver, refused
from tests.support.stores import relay_due

MakeDriver = Callable[..., Driver]
Uid = Callable[[str], str]
READ_WRITE = frozenset({Scope.READ, Scope.WRITE})


@pytest.fixture
async def circle(driver: Driver, uid: Uid) -> dict[str, str]:
    """An owner with a follower, a mutual, someone it follows who does not follow back, and a
    stranger; the owner follows the mutual and the followed."""
    people = {name: uid(name) for name in ("owner", "follower", "mutual", "followed", "stranger")}
    await driver.follow_pairs(
        (people["follower"], people["owner"]),
        (people["mutual"], people["owner"]),
        (people["owner"], people["mutual"]),
        (people["owner"], people["followed"]),
    )
    return people


async def test_settings_start_at_the_defaults_and_change_only_as_named(
    driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    body = await driver.privacy(me)
    assert body.model_dump() == {
        "followers_visibility": "public",
        "following_visibility": "public",
        "counts_visibility": "public",
        "discoverable": True,
        "locked": False,
    }
    changed = await driver.set_privacy(me, followers_visibility="mutuals", discoverable=False)
    assert (changed.followers_visibility, changed.discoverable) == ("mutuals", False)
    changed = await driver.set_privacy(me, counts_visibility="private")
    assert changed.followers_visibility == "mutuals" and changed.counts_visibility == "private"
    assert await driver.privacy(me) == changed
    back = await driver.set_privacy(
        me, followers_visibility="public", counts_visibility="public", discoverable=True
    )
    assert back == body


async def test_bad_settings_are_refused_by_name_and_change_nothing(
    driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    await driver.set_privacy(me, locked=True)
    for bad in ({"locked": "maybe"}, {"followers_visibility": "friends"}, {"hidden": True}):
        response = await driver.http.put(f"/v1/users/{me}/privacy", json=bad)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid_request"
        assert next(iter(bad)) in response.json()["error"]["message"]
    assert (await driver.privacy(me)).locked is True


async def test_a_user_bound_key_changes_only_its_own_settings(
    make_driver: MakeDriver, backends: Services, uid: Uid
) -> None:
    me, other = uid("me"), uid("other")
    key = (await backends.access.create(READ_WRITE, user=me, name="t")).token
    async with make_driver(key=key) as mine:
        assert (await mine.set_privacy(me, following_visibility="private")).following_visibility
        await refused(mine.set_privacy(other, locked=True), 403, "wrong_acting_user")
    assert (await backends.privacy.settings(other)).locked is False


VIEWERS = ("anonymous", "stranger", "follower", "followed", "mutual", "owner")
SEES = {  # which viewers see a list with each visibility
    Visibility.PUBLIC: set(VIEWERS),
    Visibility.FOLLOWERS: {"follower", "mutual", "owner"},
    Visibility.MUTUALS: {"mutual", "owner"},
    Visibility.PRIVATE: {"owner"},
}


@pytest.mark.parametrize("visibility", list(Visibility))
@pytest.mark.parametrize("side", ["followers", "following"])
async def test_each_viewer_sees_a_list_as_its_visibility_says(
    driver: Driver,
    circle: dict[str, str],
    as_viewer: AsViewer,
    visibility: Visibility,
    side: str,
) -> None:
    owner = circle["owner"]
    await driver.set_privacy(owner, **{f"{side}_visibility": visibility.value})
    expected = await driver.ids(owner, side)  # the admin key sees everything
    assert expected
    for name in VIEWERS:
        viewer = None if name == "anonymous" else circle[name]
        async with as_viewer(viewer) as graph:
            if name in SEES[visibility]:
                assert await graph.ids(owner, side) == expected, name
            else:
                error = await refused(graph.ids(owner, side), 403, "network_hidden")
                assert f"{side}_visibility={visibility.value}" in error.message, name


async def test_hidden_counts_are_null_with_a_flag_for_all_but_the_owner(
    driver: Driver,
    circle: dict[str, str],
    as_viewer: AsViewer,
) -> None:
    owner = circle["owner"]
    shown = await driver.counts(owner)
    assert (shown.followers, shown.following, shown.friends) == (2, 2, 1)
    assert shown.counts_hidden is False
    await driver.set_privacy(owner, counts_visibility="private")
    for name in ("anonymous", "follower", "mutual"):
        async with as_viewer(None if name == "anonymous" else circle[name]) as graph:
            hidden = await graph.counts(owner)
            assert hidden.counts_hidden is True
            assert {k: v for k, v in hidden.model_dump().items() if k != "counts_hidden"} == {
                "followers": None,
                "following": None,
                "followers_active": None,
                "following_active": None,
                "friends": None,
                "celebrity": None,
                "pending_requests": None,
            }
    async with as_viewer(owner) as graph:
        own = await graph.counts(owner)
        assert own.model_copy(update={"pending_requests": None}) == shown
        assert own.pending_requests == 0  # the user itself is shown its pending requests
    assert await driver.counts(owner) == shown  # an admin key naming no one


async def test_a_bound_key_reads_as_its_user_and_names_no_one_else(
    make_driver: MakeDriver, backends: Services, circle: dict[str, str]
) -> None:
    owner, follower = circle["owner"], circle["follower"]
    await backends.privacy.update(owner, PrivacyEdit(followers_visibility=Visibility.FOLLOWERS))
    stranger_key = (await backends.access.create(READ_WRITE, user=circle["stranger"])).token
    follower_key = (await backends.access.create(READ_WRITE, user=follower)).token
    async with make_driver(key=stranger_key) as stranger:
        await refused(stranger.ids(owner, "followers"), 403, "network_hidden")
        stranger.http.headers["X-Graph-Viewer"] = follower  # cannot borrow another's view
        await refused(stranger.ids(owner, "followers"), 403, "wrong_acting_user")
    async with make_driver(key=follower_key) as reader:
        assert set(await reader.ids(owner, "followers")) == {follower, circle["mutual"]}


async def test_a_bad_viewer_header_is_refused_by_name(driver: Driver, uid: Uid) -> None:
    response = await driver.http.get(
        f"/v1/users/{uid('u')}/followers", headers={"X-Graph-Viewer": "not an id"}
    )
    assert response.status_code == 422
    assert "X-Graph-Viewer" in response.json()["error"]["message"]


async def test_a_missing_settings_mirror_is_rebuilt_from_neo4j_before_it_is_trusted(
    driver: Driver,
    backends: Services,
    circle: dict[str, str],
    as_viewer: AsViewer,
) -> None:
    owner = circle["owner"]
    await driver.set_privacy(owner, followers_visibility="private")
    await backends.core.redis.client.delete(backends.core.redis.privacy.key)  # a flushed Redis
    async with as_viewer(circle["stranger"]) as graph:
        await refused(graph.ids(owner, "followers"), 403, "network_hidden")
    assert (await backends.core.redis.privacy.of([owner]))[owner].followers_visibility == (
        Visibility.PRIVATE
    )


async def test_a_lost_mirror_write_of_the_settings_is_repaired_by_the_relay(
    backends: Services,
    circle: dict[str, str],
    as_viewer: AsViewer,
) -> None:
    owner = circle["owner"]
    # Committed in Neo4j, and the process died before it wrote the mirror:
    change = await backends.core.neo4j.privacy.set(
        owner, Privacy(following_visibility=Visibility.PRIVATE)
    )
    assert change.event is not None
    async with as_viewer(circle["stranger"]) as graph:
        assert await graph.ids(owner, "following")  # the mirror does not know yet
        await relay_due(backends)
        await refused(graph.ids(owner, "following"), 403, "network_hidden")


# -- derived answers ---------------------------------------------------------------------------


async def test_familiar_followers_name_only_people_whose_following_the_reader_may_see(
    driver: Driver,
    uid: Uid,
    as_viewer: AsViewer,
) -> None:
    """'Followed by A, B...' tells that A follows the target: A is named only where the reader
    may see whom A follows."""
    me, target = uid("me"), uid("target")
    open_, fans_only, mutual, mutual_one_way, hidden = (
        uid(n) for n in ("open", "fans-only", "mutual", "mutual-one-way", "hidden")
    )
    friends = [open_, fans_only, mutual, mutual_one_way, hidden]
    await driver.follows(me, *friends)
    await driver.follow_pairs(*((f, target) for f in friends), (mutual, me))
    await driver.set_privacy(fans_only, following_visibility="followers")
    await driver.set_privacy(mutual, following_visibility="mutuals")
    await driver.set_privacy(mutual_one_way, following_visibility="mutuals")
    await driver.set_privacy(hidden, following_visibility="private")
    async with as_viewer(me) as graph:
        seen = await graph.familiar_followers(me, target)
        assert set(seen.items) == {open_, fans_only, mutual}
        assert seen.total == 3
    everything = await driver.familiar_followers(me, target)  # an admin reading as nobody
    assert set(everything.items) == set(friends)
    # whom I follow is mine to hide: another reader learns nothing of it
    await driver.set_privacy(me, following_visibility="private")
    async with as_viewer(uid("stranger")) as graph:
        await refused(graph.familiar_followers(me, target), 403, "network_hidden")
    async with as_viewer(None) as graph:
        await refused(graph.familiar_followers(me, target), 403, "network_hidden")


@pytest.mark.parametrize("visibility", list(Visibility))
@pytest.mark.parametrize("side", ["followers", "following"])
async def test_common_lists_need_both_users_lists_visible(
    driver: Driver,
    uid: Uid,
    as_viewer: AsViewer,
    side: str,
    visibility: Visibility,
) -> None:
    """Common followers read both users' followers, common following both users' following:
    each viewer is answered as the stricter of the two settings allows it."""
    a, b, shared = uid("a"), uid("b"), uid("shared")
    viewers = {name: uid(name) for name in ("stranger", "follower", "mutual")}
    if side == "followers":
        await driver.follow_pairs((shared, a), (shared, b))
    else:
        await driver.follow_pairs((a, shared), (b, shared))
    await driver.follow_pairs((viewers["follower"], b), (viewers["mutual"], b))
    await driver.follow_pairs((b, viewers["mutual"]))
    kind = "common_followers" if side == "followers" else "common_following"
    await driver.set_privacy(b, **{f"{side}_visibility": visibility.value})
    for name in ("anonymous", "stranger", "follower", "mutual", "owner"):
        viewer = {"anonymous": None, "owner": b}.get(name, viewers.get(name))
        async with as_viewer(viewer) as graph:
            for first, second in ((a, b), (b, a)):  # either user's setting, in either place
                if name in SEES[visibility]:
                    assert await graph.shared(kind, first, second) == (1, [shared]), name
                else:
                    error = await refused(graph.shared(kind, first, second), 403, "network_hidden")
                    assert repr(b) in error.message, name


async def test_friends_need_both_of_the_users_lists_visible(
    driver: Driver,
    uid: Uid,
    as_viewer: AsViewer,
) -> None:
    me, friend = uid("me"), uid("friend")
    await driver.follow_pairs((me, friend), (friend, me))
    await driver.set_privacy(me, followers_visibility="private")
    async with as_viewer(me) as graph:
        assert await graph.ids(me, "friends") == [friend]
    async with as_viewer(None) as graph:
        await refused(graph.ids(me, "friends"), 403, "network_hidden")


async def test_suggestions_never_use_or_name_a_hidden_network_nor_suggest_the_undiscoverable(
    driver: Driver, uid: Uid
) -> None:
    me, open_, hidden, lonely = uid("me"), uid("open"), uid("hidden"), uid("lonely")
    via_open, via_hidden, shy = uid("via-open"), uid("via-hidden"), uid("shy")
    await driver.follows(me, open_, hidden)
    await driver.follow_pairs((open_, via_open), (open_, shy), (hidden, via_hidden))
    await driver.follow_pairs((hidden, via_open), (lonely, via_hidden))
    found = await driver.suggested(me)
    assert set(found[via_open].reasons.via) == {open_, hidden}
    assert found[via_hidden].reasons.via == [hidden] and shy in found
    # Cached already: what changes now is applied when the list is served.
    await driver.set_privacy(hidden, following_visibility="private")
    await driver.set_privacy(shy, discoverable=False)
    served = await driver.suggested(me)
    assert served[via_open].reasons.via == [open_]
    assert hidden not in served[via_hidden].reasons.via and shy not in served
    # Computed afresh: the hidden network is not walked at all.
    await driver.services.suggestions.cache.invalidate(me)
    fresh = await driver.suggested(me)
    assert fresh[via_open].reasons.via == [open_] and fresh[via_open].reasons.mutual_count == 1
    assert via_hidden not in fresh or "friends_of_friends" not in fresh[via_hidden].sources
    assert shy not in fresh


async def test_an_own_view_is_refused_to_a_viewer_naming_someone_else(
    driver: Driver,
    uid: Uid,
    as_viewer: AsViewer,
) -> None:
    """Relationships carry the user's mutes, suggestions its vias, a timeline its follows:
    a service key reads them for the user (naming it, or no one), never as another viewer."""
    me, other = uid("me"), uid("other")
    await driver.follow_pairs((me, other))
    async with as_viewer(uid("someone")) as graph:
        await refused(graph.relationships(me, [other]), 403, "owner_only")
        await refused(graph.suggestions(me), 403, "owner_only")
        await refused(anext(aiter(graph.timeline(me))), 403, "owner_only")
    for viewer in (me, None):
        async with as_viewer(viewer) as graph:
            assert (await graph.relationships(me, [other])).relationships[other].following


@pytest.mark.parametrize("visibility", list(Visibility))
async def test_a_via_is_named_only_where_its_following_is_visible_to_the_user(
    driver: Driver, uid: Uid, visibility: Visibility
) -> None:
    """A followed user's follows feed my suggestions (and name it as a via) exactly when I may
    see whom it follows: I follow it, so 'followers' shows them to me, 'mutuals' when it
    follows me back, 'private' never."""
    me, friend, found_through = uid("me"), uid("friend"), uid("through")
    await driver.follow_pairs((me, friend), (friend, found_through))
    await driver.set_privacy(friend, following_visibility=visibility.value)
    walked = visibility is not Visibility.PRIVATE and visibility is not Visibility.MUTUALS
    suggested = await driver.suggested(me)
    named = found_through in suggested and friend in suggested[found_through].reasons.via
    assert named is walked
    if not walked:  # nothing else leads there: the hidden network was not walked at all
        assert found_through not in suggested
    if visibility is Visibility.MUTUALS:
        await driver.follow_pairs((friend, me))  # now it follows me back
        await driver.services.suggestions.cache.invalidate(me)
        suggested = await driver.suggested(me)
        assert suggested[found_through].reasons.via == [friend]
