"""The privacy rules and the viewer of a key, as plain values (no server)."""

from __future__ import annotations

import itertools

import pytest

from graphsvc.domain.access import ApiKey, Scope, WrongActingUser, viewer_of_key
from graphsvc.domain.errors import InvalidUserId
from graphsvc.domain.model import Side, Suggestion
from graphsvc.domain.privacy import (
    ANONYMOUS,
    DEFAULT_PRIVACY,
    EVERYONE,
    NO_TIES,
    CountsVisibility,
    ListRule,
    NetworkHidden,
    OwnerOnly,
    Privacy,
    PrivacyEdit,
    Ties,
    Viewer,
    Visibility,
    hidden_list,
    hides_counts,
    list_rule,
    list_rules,
    may_see,
    may_see_counts,
    needs_ties,
    other_owners,
    privacy_ids,
    recounted,
    require_owner,
    still_allowed,
    tied_owners,
    ties_to_read,
)
from graphsvc.services.suggestions import with_closest_vias


def key(*scopes: Scope, user: str | None = None) -> ApiKey:
    return ApiKey("0" * 16, "d", frozenset(scopes), user, "k", 0)


@pytest.mark.parametrize(
    ("visibility", "expected"),
    [
        # (anonymous, stranger, follower, followed by the owner only, mutual, owner)
        (Visibility.PUBLIC, (True, True, True, True, True, True)),
        (Visibility.FOLLOWERS, (False, False, True, False, True, True)),
        (Visibility.MUTUALS, (False, False, False, False, True, True)),
        (Visibility.PRIVATE, (False, False, False, False, False, True)),
    ],
)
def test_each_visibility_admits_whom_its_name_says(
    visibility: Visibility, expected: tuple[bool, ...]
) -> None:
    seen = (
        may_see(visibility, "o", ANONYMOUS),
        may_see(visibility, "o", Viewer("v")),
        may_see(visibility, "o", Viewer("v"), Ties(follows_owner=True)),
        may_see(visibility, "o", Viewer("v"), Ties(followed_by_owner=True)),
        may_see(visibility, "o", Viewer("v"), Ties(True, True)),
        may_see(visibility, "o", Viewer("o")),
    )
    assert seen == expected
    assert may_see(visibility, "o", EVERYONE)


def test_only_followers_and_mutuals_need_the_viewers_ties() -> None:
    assert [v for v in Visibility if needs_ties(v)] == [Visibility.FOLLOWERS, Visibility.MUTUALS]


def test_hidden_counts_are_seen_by_the_owner_and_admins_only() -> None:
    hidden = Privacy(counts_visibility=CountsVisibility.PRIVATE)
    assert not may_see_counts(hidden, "o", Viewer("v"))
    assert not may_see_counts(hidden, "o", ANONYMOUS)
    assert may_see_counts(hidden, "o", Viewer("o"))
    assert may_see_counts(hidden, "o", EVERYONE)
    assert may_see_counts(DEFAULT_PRIVACY, "o", ANONYMOUS)


def test_every_privacy_survives_its_compact_form() -> None:
    for f, g, c, d, locked in itertools.product(
        Visibility, Visibility, CountsVisibility, (True, False), (True, False)
    ):
        privacy = Privacy(f, g, c, d, locked)
        assert Privacy.decode(privacy.encode()) == privacy
    assert DEFAULT_PRIVACY.is_default
    assert not Privacy(locked=True).is_default


def test_an_edit_changes_only_what_it_names() -> None:
    current = Privacy(followers_visibility=Visibility.MUTUALS, locked=True)
    edited = PrivacyEdit(discoverable=False).applied_to(current)
    assert edited == Privacy(
        followers_visibility=Visibility.MUTUALS, locked=True, discoverable=False
    )
    assert PrivacyEdit().applied_to(current) == current


def test_a_hidden_list_names_its_setting_and_value() -> None:
    error = ListRule("ada", "followers", Visibility.MUTUALS).hidden()
    assert isinstance(error, NetworkHidden) and error.status == 403
    assert "followers_visibility=mutuals" in error.message and "'ada'" in error.message


# -- answers read from several lists -------------------------------------------------------------

BOTH_SIDES = [("p", Side.FOLLOWERS), ("p", Side.FOLLOWING)]


def test_a_side_has_the_rule_of_its_own_setting() -> None:
    privacy = Privacy(Visibility.MUTUALS, Visibility.PRIVATE)
    assert list_rule("p", Side.FOLLOWERS, privacy) == ListRule("p", "followers", Visibility.MUTUALS)
    assert list_rule("p", Side.FOLLOWING, privacy) == ListRule("p", "following", Visibility.PRIVATE)


def test_the_rules_of_an_answer_are_each_list_once_but_the_viewers_own() -> None:
    lists = [
        ("a", Side.FOLLOWERS),
        ("b", Side.FOLLOWERS),
        ("a", Side.FOLLOWERS),
        ("a", Side.FOLLOWING),
    ]
    settings = {"a": Privacy(), "b": Privacy(followers_visibility=Visibility.FOLLOWERS)}
    assert list_rules(lists, settings, Viewer("v")) == [
        ListRule("a", "followers", Visibility.PUBLIC),
        ListRule("b", "followers", Visibility.FOLLOWERS),
        ListRule("a", "following", Visibility.PUBLIC),
    ]
    assert list_rules(lists, {"b": settings["b"]}, Viewer("a")) == [
        ListRule("b", "followers", Visibility.FOLLOWERS)
    ]
    assert list_rules(lists, {}, EVERYONE) == []
    assert other_owners(lists, Viewer("v")) == ["a", "b"]
    assert other_owners(lists, Viewer("b")) == ["a"]
    assert other_owners(lists, EVERYONE) == []


def test_an_answer_from_both_lists_is_hidden_when_either_is() -> None:
    """P hides whom it follows: its followers it does not follow back are read from its
    following too, so they are refused, naming that setting."""
    settings = {"p": Privacy(following_visibility=Visibility.PRIVATE)}
    for viewer in (Viewer("v"), ANONYMOUS):
        rules = list_rules(BOTH_SIDES, settings, viewer)
        hidden = hidden_list(rules, viewer, {"p": Ties(True, True)})
        assert hidden == ListRule("p", "following", Visibility.PRIVATE)
        assert "following_visibility=private" in hidden.hidden().message
        assert hidden_list(rules[:1], viewer, {}) is None  # the followers alone are public
    assert list_rules(BOTH_SIDES, settings, Viewer("p")) == []


@pytest.mark.parametrize(
    ("followers", "following", "ties", "hidden"),
    [
        # the first list hidden given the ties, in the order the answer names its lists
        (Visibility.PUBLIC, Visibility.PUBLIC, Ties(), None),
        (Visibility.FOLLOWERS, Visibility.PUBLIC, Ties(), "followers"),
        (Visibility.FOLLOWERS, Visibility.PUBLIC, Ties(follows_owner=True), None),
        (Visibility.FOLLOWERS, Visibility.MUTUALS, Ties(follows_owner=True), "following"),
        (Visibility.FOLLOWERS, Visibility.MUTUALS, Ties(True, True), None),
        (Visibility.MUTUALS, Visibility.PRIVATE, Ties(True, True), "following"),
        (Visibility.PRIVATE, Visibility.FOLLOWERS, Ties(True, True), "followers"),
    ],
)
def test_each_list_of_an_answer_is_decided_with_the_viewers_ties(
    followers: Visibility, following: Visibility, ties: Ties, hidden: str | None
) -> None:
    rules = list_rules(BOTH_SIDES, {"p": Privacy(followers, following)}, Viewer("v"))
    found = hidden_list(rules, Viewer("v"), {"p": ties})
    assert (found.side if found else None) == hidden
    # ties only open lists: without them the answer is refused at least as often
    assert hidden is None or hidden_list(rules, Viewer("v"), {}) is not None


def test_ties_are_read_only_of_owners_a_follow_can_open_a_list_of() -> None:
    settings = {
        "a": Privacy(Visibility.FOLLOWERS, Visibility.MUTUALS),
        "b": Privacy(following_visibility=Visibility.PRIVATE),
        "c": Privacy(),
    }
    lists = [(o, side) for o in "abc" for side in (Side.FOLLOWERS, Side.FOLLOWING)]
    assert tied_owners(list_rules(lists, settings, Viewer("v"))) == ["a"]


def test_own_lists_are_read_by_their_owner_or_an_admin() -> None:
    require_owner(Viewer("ada"), "ada", "blocks")
    require_owner(EVERYONE, "ada", "blocks")
    for other in (Viewer("bob"), ANONYMOUS):
        with pytest.raises(OwnerOnly, match="blocks"):
            require_owner(other, "ada", "blocks")


def test_a_bound_key_reads_as_its_user_and_names_no_one_else() -> None:
    bound = key(Scope.READ, user="ada")
    assert viewer_of_key(bound, None) == Viewer("ada")
    assert viewer_of_key(bound, "ada") == Viewer("ada")
    with pytest.raises(WrongActingUser):
        viewer_of_key(bound, "bob")


def test_a_service_key_reads_as_the_viewer_it_names_or_anonymously() -> None:
    service = key(Scope.READ, Scope.WRITE)
    assert viewer_of_key(service, "bob") == Viewer("bob")
    assert viewer_of_key(service, None) == ANONYMOUS
    with pytest.raises(InvalidUserId, match="X-Graph-Viewer"):
        viewer_of_key(service, "not valid")


def test_admin_and_internal_keys_see_everything_unless_they_name_a_viewer() -> None:
    for scope in (Scope.ADMIN, Scope.INTERNAL):
        assert viewer_of_key(key(Scope.READ, scope), None) == EVERYONE
        assert viewer_of_key(key(Scope.READ, scope), "bob") == Viewer("bob")


def test_an_own_view_is_read_for_its_owner_only() -> None:
    from graphsvc.domain.privacy import require_own_view

    require_own_view(Viewer("ada"), "ada", "timeline")
    require_own_view(ANONYMOUS, "ada", "timeline")  # a service key reading for the user
    require_own_view(EVERYONE, "ada", "timeline")
    with pytest.raises(OwnerOnly, match=r"timeline .*'bob'"):
        require_own_view(Viewer("bob"), "ada", "timeline")


def test_a_cached_list_is_served_as_the_settings_allow_it_now() -> None:
    found = [
        Suggestion("a", 0.9, 2, ["m", "n"], ["friends_of_friends"]),
        Suggestion("shy", 0.8, 1, ["m"], ["friends_of_friends"]),
        Suggestion("b", 0.7, 4, ["n", "m", "o"], ["friends_of_friends"], ["n", "m", "o", "p"]),
        Suggestion("c", 0.6, 0, [], ["popular"]),
    ]
    assert privacy_ids(found[:2]) == ["a", "m", "n", "shy"]
    assert privacy_ids(found[2:3]) == ["b", "m", "n", "o", "p"]  # every one counted
    settings = {
        "a": Privacy(),
        "shy": Privacy(discoverable=False),
        "b": Privacy(),
        "m": Privacy(),
        "n": Privacy(following_visibility=Visibility.PRIVATE),
        "o": Privacy(),
    }
    assert still_allowed(found, settings, 2) is None  # "p", counted by "b", was not read
    settings["p"] = Privacy()
    kept = still_allowed(found, settings, 2)
    assert kept is not None and [s.user_id for s in kept] == ["a", "b"]
    assert kept == [found[0], found[2]]  # the reasons are recounted apart (``recounted``)
    assert still_allowed(found, settings, 3) is None  # "c" was not read: the caller reads more
    assert still_allowed(found, {**settings, "c": Privacy()}, 3) is not None


def test_a_cached_score_its_counts_moved_is_not_served_once_they_are_hidden() -> None:
    """A score (or a fill's place) computed while the suggested user showed its counts is left
    out once it hides them; one computed blind to them is served either way."""
    found = [
        Suggestion("told", 0.9, 0, [], ["friends_of_friends"]),
        Suggestion("blind", 0.8, 0, [], ["friends_of_friends"], counts_hidden=True),
        Suggestion("filled", 0.0, 0, [], ["trending"]),
        Suggestion("open", 0.0, 0, [], ["popular"]),
    ]
    hidden = Privacy(counts_visibility=CountsVisibility.PRIVATE)
    settings = {"told": hidden, "blind": hidden, "filled": hidden, "open": Privacy()}
    kept = still_allowed(found, settings, 4)
    assert kept is not None and [s.user_id for s in kept] == ["blind", "open"]
    shown = {uid: Privacy() for uid in settings}
    assert still_allowed(found, shown, 4) == found
    assert hides_counts(hidden) and not hides_counts(Privacy())
    assert not may_see_counts(hidden, "told", Viewer("me"))
    assert may_see_counts(hidden, "told", Viewer("told")) and may_see_counts(hidden, "x", EVERYONE)


def _counting(*counted: str) -> Suggestion:
    """A suggestion counting ``counted``, closest first, the first three named."""
    return Suggestion("c", 0.5, len(counted), list(counted[:3]), ["x"], list(counted))


def test_only_those_counted_behind_mutuals_cost_a_read_of_ties() -> None:
    """The user follows everyone counted, and its own unfollow drops the cached list: only a
    following shown to mutual follows depends on a tie the list does not hear of."""
    settings = {
        name: Privacy(following_visibility=visibility)
        for name, visibility in zip("pfmx", Visibility, strict=True)
    }
    found = [_counting("p", "f"), _counting("m", "x", "f")]
    assert ties_to_read(found, settings) == ["m"]
    assert ties_to_read([_counting("p", "x")], settings) == []


@pytest.mark.parametrize("visibility", list(Visibility))
@pytest.mark.parametrize("ties", [NO_TIES, Ties(True, False), Ties(True, True)])
def test_one_counted_stays_exactly_while_the_user_may_see_its_following(
    visibility: Visibility, ties: Ties
) -> None:
    settings = {"open": Privacy(), "v": Privacy(following_visibility=visibility)}
    served = recounted(_counting("v", "open"), "me", settings, {"v": ties})
    seen = may_see(visibility, "v", Viewer("me"), ties)
    assert (served.mutual_count, served.via) == ((2, ["v", "open"]) if seen else (1, ["open"]))


def test_a_recount_drops_the_hidden_and_names_the_closest_of_the_rest() -> None:
    settings = {
        "a": Privacy(following_visibility=Visibility.PRIVATE),
        "b": Privacy(following_visibility=Visibility.MUTUALS),  # the tie is gone
        "c": Privacy(following_visibility=Visibility.FOLLOWERS),
        "d": Privacy(following_visibility=Visibility.PRIVATE),  # counted, never named
        "e": Privacy(),
    }
    ties = {"b": Ties(True, False), "c": Ties(True, False)}
    suggestion = _counting("a", "b", "c", "d", "e")
    served = recounted(suggestion, "me", settings, ties)
    assert (served.mutual_count, served.via, served.mutuals) == (2, ["c", "e"], ["c", "e"])
    assert recounted(served, "me", settings, ties) is served  # nothing more to drop
    # no tie read: each is followed by the user (its list stands), and follows it not
    assert recounted(suggestion, "me", settings, {}).via == ["c", "e"]


def test_a_list_cached_with_its_named_only_drops_the_hidden_among_them() -> None:
    """An entry that knows only the three named (``mutuals`` None): what it can recount."""
    settings = {"a": Privacy(following_visibility=Visibility.PRIVATE), "b": Privacy()}
    old = Suggestion("c", 0.5, 7, ["a", "b"], ["friends_of_friends"])
    served = recounted(old, "me", settings, {})
    assert (served.mutual_count, served.via, served.mutuals) == (6, ["b"], None)


def test_the_cache_keeps_everyone_counted_and_the_answer_names_three() -> None:
    row = with_closest_vias(
        {
            "id": "c",
            "vias": [
                {"id": n, "affinity": a} for n, a in zip("abcde", (0, 2, 0, 1, 0), strict=True)
            ],
        }
    )
    assert (row["via"], row["mutuals"]) == (["b", "d", "a"], ["b", "d", "a", "c", "e"])
    suggestion = _counting(*row["mutuals"])
    assert "mutuals" not in suggestion.as_json()
    assert Suggestion.from_json(suggestion.cached_json()) == suggestion
    named_only = Suggestion("c", 0.5, 4, ["b"], ["friends_of_friends"])
    assert Suggestion.from_json(named_only.cached_json()) == named_only
    blind = Suggestion("c", 0.5, 0, [], ["walks"], counts_hidden=True)
    assert "counts_hidden" not in blind.as_json()  # the cache keeps it, never the answer
    assert Suggestion.from_json(blind.cached_json()) == blind


def test_a_list_cached_without_everyone_it_counts_is_not_recountable() -> None:
    sources = ["friends_of_friends"]
    assert Suggestion("c", 0.5, 2, ["a", "b"], sources).recountable  # every one is named
    assert not Suggestion("c", 0.5, 7, ["a", "b", "d"], sources).recountable
    assert Suggestion("c", 0.5, 7, ["a", "b", "d"], sources, list("abdefgh")).recountable
