"""Who may see what of a user's network: the viewer, a user's privacy settings, and the rules.

Every read is computed for a viewer. A key bound to a user reads as that user; a service key
names the viewer of each request (``X-Graph-Viewer``) or reads as nobody in particular (an
anonymous viewer, who sees only what is public); an admin or internal key sees everything
unless it names a viewer, when it sees what that viewer would (an operator checking a
complaint). The owner of a list always sees it.

A list's visibility is decided by the owner's setting and the viewer's relation to the owner,
never by the list's contents: ``followers`` means the viewer follows the owner, ``mutuals``
that they follow each other. A pending follow request is not a follow, so it opens nothing.
A hidden list is refused whole (``NetworkHidden``, a 403 naming the rule), never answered empty:
an empty answer would be a lie the caller cannot tell from the truth. Counts are shown or
hidden together (``counts_visibility``): the number of friends is a count too.

An answer derived from several lists reveals each of them, so it needs every one visible
(``hidden_list``, the one rule for all of them): friends and the ``not_followed_back`` /
``not_following_back`` filters read both of the owner's lists, common followers both users'
followers, common following both users' following, familiar followers the first user's
following and the target's followers. Edges they reveal must be ones the viewer may see on
the side they are read from: familiar followers name people whose following the viewer may
see; a suggestion's "via" names, and its ``mutual_count`` counts, only people whose following
the viewer (its user) may see, as it is when the list is served, and a network hidden from
everyone but its owner is never walked at all.

A ranking tells what it ranks by: an account that hides its counts is never ranked by them for
anyone but itself. The count-ranked lists (trending, popular, accounts similar to a seed) leave
it out; a suggestion scores it with its count features at the model's centre, and a score
cached while its counts were shown is not served once they are hidden (``still_allowed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import StrEnum

from graphsvc.domain.errors import GraphError
from graphsvc.domain.model import Side, Suggestion


class Visibility(StrEnum):
    PUBLIC = "public"
    FOLLOWERS = "followers"  # people who follow the owner
    MUTUALS = "mutuals"  # people the owner follows and who follow the owner
    PRIVATE = "private"  # the owner alone


class CountsVisibility(StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"


class NetworkHidden(GraphError):
    """The owner's setting hides this list (or the lists a derived answer reads) from the
    viewer: a rule, so a 403 whose message names the setting and its value."""

    status = 403
    code = "network_hidden"


class OwnerOnly(GraphError):
    """A list only its owner reads (blocks, mutes, follow requests): a rule, so a 403."""

    status = 403
    code = "owner_only"


@dataclass(frozen=True, slots=True)
class Privacy:
    """One user's settings; the defaults are what a user who never set anything has."""

    followers_visibility: Visibility = Visibility.PUBLIC
    following_visibility: Visibility = Visibility.PUBLIC
    counts_visibility: CountsVisibility = CountsVisibility.PUBLIC
    discoverable: bool = True
    locked: bool = False

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_PRIVACY

    def encode(self) -> str:
        """The compact form the mirror stores: ``f,g,c,d,l`` (one letter or digit each)."""
        return ",".join(
            (
                _LETTERS[self.followers_visibility],
                _LETTERS[self.following_visibility],
                _LETTERS[self.counts_visibility],
                "1" if self.discoverable else "0",
                "1" if self.locked else "0",
            )
        )

    @classmethod
    def decode(cls, text: str) -> Privacy:
        f, g, c, d, locked = text.split(",")
        return cls(
            _VISIBILITY_BY_LETTER[f],
            _VISIBILITY_BY_LETTER[g],
            _COUNTS_BY_LETTER[c],
            d == "1",
            locked == "1",
        )


DEFAULT_PRIVACY = Privacy()
_LETTERS: dict[StrEnum, str] = {
    Visibility.PUBLIC: "p",
    Visibility.FOLLOWERS: "f",
    Visibility.MUTUALS: "m",
    Visibility.PRIVATE: "x",
    CountsVisibility.PUBLIC: "p",
    CountsVisibility.PRIVATE: "x",
}
_VISIBILITY_BY_LETTER = {_LETTERS[v]: v for v in Visibility}
_COUNTS_BY_LETTER = {_LETTERS[v]: v for v in CountsVisibility}


# The degree a ranking damps a path by where the person it goes through hides its counts: a
# constant (of the order of a typical follow graph's degrees), so no score or order moves with
# a count that person hides.
HIDDEN_DEGREE = 100


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking: a user id, or None for an anonymous viewer; ``sees_all`` for an
    admin or internal key that named no viewer."""

    user_id: str | None = None
    sees_all: bool = False

    def is_owner(self, owner: str) -> bool:
        return self.sees_all or self.user_id == owner


EVERYONE = Viewer(sees_all=True)  # what the service's own work reads as
ANONYMOUS = Viewer()


def require_owner(viewer: Viewer, owner: str, what: str) -> None:
    """Refuse (403 ``owner_only``) a viewer other than the owner of a list only it reads."""
    if not viewer.is_owner(owner):
        raise OwnerOnly(f"only user {owner!r} may read its {what}")


def require_own_view(viewer: Viewer, owner: str, what: str) -> None:
    """Refuse (403 ``owner_only``) a viewer that names a user other than the owner of a view
    that is the owner's own (its relationships with its mutes, its suggestions with their
    vias, its timeline, its event stream): the owner sees it; a service key naming no viewer
    reads it for the owner, as the product's backend does."""
    if viewer.user_id is not None and viewer.user_id != owner and not viewer.sees_all:
        raise OwnerOnly(
            f"{what} is the own view of user {owner!r}: the viewer may be {owner!r} only, "
            f"not {viewer.user_id!r}"
        )


@dataclass(frozen=True, slots=True)
class Ties:
    """How the viewer relates to an owner: whether the viewer follows the owner, and whether
    the owner follows the viewer (a pending request is neither)."""

    follows_owner: bool = False
    followed_by_owner: bool = False


NO_TIES = Ties()


def needs_ties(visibility: Visibility) -> bool:
    """Whether deciding this visibility for a viewer other than the owner needs their ties."""
    return visibility in (Visibility.FOLLOWERS, Visibility.MUTUALS)


def may_see(visibility: Visibility, owner: str, viewer: Viewer, ties: Ties = NO_TIES) -> bool:
    """Whether ``viewer`` may see a list of ``owner`` that has ``visibility``."""
    if viewer.is_owner(owner) or visibility is Visibility.PUBLIC:
        return True
    if viewer.user_id is None or visibility is Visibility.PRIVATE:
        return False
    if visibility is Visibility.FOLLOWERS:
        return ties.follows_owner
    return ties.follows_owner and ties.followed_by_owner


def may_see_counts(privacy: Privacy, owner: str, viewer: Viewer) -> bool:
    return viewer.is_owner(owner) or not hides_counts(privacy)


def hides_counts(privacy: Privacy) -> bool:
    """Whether the user hides its counts from everyone but itself (and keys that see all)."""
    return privacy.counts_visibility is CountsVisibility.PRIVATE


@dataclass(frozen=True, slots=True)
class ListRule:
    """One list of one owner under its setting: ``side`` is ``followers`` or ``following``."""

    owner: str
    side: str
    visibility: Visibility

    def hidden(self) -> NetworkHidden:
        setting = f"{self.side}_visibility"
        who = {
            Visibility.FOLLOWERS: "its followers",
            Visibility.MUTUALS: "its mutual follows",
            Visibility.PRIVATE: "itself",
        }.get(self.visibility, "everyone")
        return NetworkHidden(
            f"user {self.owner!r} shows its {self.side} to {who} only "
            f"({setting}={self.visibility.value})"
        )


def list_rule(owner: str, side: Side, privacy: Privacy) -> ListRule:
    """The rule of one of the owner's lists under its settings."""
    if side is Side.FOLLOWERS:
        return ListRule(owner, "followers", privacy.followers_visibility)
    return ListRule(owner, "following", privacy.following_visibility)


def other_owners(lists: Iterable[tuple[str, Side]], viewer: Viewer) -> list[str]:
    """The owners of these lists, (owner, side) each, whose settings decide what the viewer
    sees: each once, but the viewer itself (and none for a key that sees all)."""
    return [owner for owner in dict.fromkeys(o for o, _ in lists) if not viewer.is_owner(owner)]


def list_rules(
    lists: Iterable[tuple[str, Side]], settings: Mapping[str, Privacy], viewer: Viewer
) -> list[ListRule]:
    """The rules of the lists, (owner, side) each, that an answer is read from, each once and
    in the order given, but for the viewer's own (the owner sees its lists, whatever their
    settings): ``settings`` must hold every other owner's."""
    wanted = dict.fromkeys((owner, side) for owner, side in lists if not viewer.is_owner(owner))
    return [list_rule(owner, side, settings[owner]) for owner, side in wanted]


def tied_owners(rules: Iterable[ListRule]) -> list[str]:
    """The owners whose ties to a viewer may open one of these lists (followers, mutuals)."""
    return list(dict.fromkeys(rule.owner for rule in rules if needs_ties(rule.visibility)))


def hidden_list(
    rules: Iterable[ListRule], viewer: Viewer, ties: Mapping[str, Ties]
) -> ListRule | None:
    """The first of the rules that hides its list from the viewer, the one a refusal names;
    None when the viewer may see them all. ``ties``: the viewer's ties to owners (an owner
    missing has none, so ties not read yet only ever refuse more)."""
    for rule in rules:
        if not may_see(rule.visibility, rule.owner, viewer, ties.get(rule.owner, NO_TIES)):
            return rule
    return None


@dataclass(frozen=True, slots=True)
class PrivacyEdit:
    """A partial update of the settings: a field left None keeps its value."""

    followers_visibility: Visibility | None = None
    following_visibility: Visibility | None = None
    counts_visibility: CountsVisibility | None = None
    discoverable: bool | None = None
    locked: bool | None = None

    def applied_to(self, current: Privacy) -> Privacy:
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        return replace(current, **{k: v for k, v in given.items() if v is not None})


def still_allowed(
    found: Sequence[Suggestion], settings: Mapping[str, Privacy], limit: int
) -> list[Suggestion] | None:
    """The first ``limit`` suggestions, computed (and cached) earlier, that the settings still
    allow: a user who stopped being discoverable is left out, and so is one that hides its
    counts now but did not when its score was computed (a score, or a place in the trending
    and popular fills, that its counts moved: the suggested are never the user itself, so
    hidden counts are hidden from it). None when one of them, or one it counts, is not in
    ``settings`` (the caller reads more). Their reasons are then counted again for the user
    (``recounted``)."""
    kept: list[Suggestion] = []
    for suggestion in found:
        if len(kept) == limit:
            break
        if suggestion.user_id not in settings or any(v not in settings for v in suggestion.counted):
            return None
        privacy = settings[suggestion.user_id]
        told_counts = hides_counts(privacy) and not suggestion.counts_hidden
        if privacy.discoverable and not told_counts:
            kept.append(suggestion)
    return kept


def ties_to_read(found: Sequence[Suggestion], settings: Mapping[str, Privacy]) -> list[str]:
    """Those the suggestions count whose following is shown to its mutual follows only:
    whether the user still sees it depends on whether it still follows the user, which its
    own unfollow does not tell the user's cached list. (The user follows everyone counted:
    its own unfollow, or a removal or block of it, drops the list, so a following shown to
    followers needs no read.) At most the followings that a computation expands, whatever
    the list's length."""
    counted = {v for s in found for v in s.counted}
    return sorted(v for v in counted if settings[v].following_visibility is Visibility.MUTUALS)


def recounted(
    suggestion: Suggestion,
    user_id: str,
    settings: Mapping[str, Privacy],
    ties: Mapping[str, Ties],
    named: int = 3,
) -> Suggestion:
    """The suggestion's reasons as its user may see them now: each one counted whose
    following the user no longer sees (made private; shown to followers or mutual follows,
    and ``ties``, the user's with it, no longer hold) is neither counted nor named, and the
    closest of the others are named. ``ties`` must hold those ``ties_to_read`` names; one
    missing is followed by the user and does not follow it (the user follows everyone a
    list it may be served counts: its unfollow drops the list)."""
    viewer = Viewer(user_id)
    followed = Ties(follows_owner=True)
    hidden = {
        v
        for v in suggestion.counted
        if not may_see(settings[v].following_visibility, v, viewer, ties.get(v, followed))
    }
    if not hidden:
        return suggestion
    mutuals = [v for v in suggestion.counted if v not in hidden]
    return replace(
        suggestion,
        mutual_count=max(0, suggestion.mutual_count - len(hidden)),
        via=mutuals[:named],
        mutuals=mutuals if suggestion.mutuals is not None else None,
    )


def privacy_ids(found: Sequence[Suggestion]) -> list[str]:
    """Every user a list of suggestions names or counts: the suggested and their mutuals."""
    return sorted({s.user_id for s in found} | {v for s in found for v in s.counted})
