"""The rules of curated lists, without a store: names and descriptions, one change of members,
list ids, and who may see a list."""

from __future__ import annotations

import pytest

from graphsvc.domain.errors import InvalidList, ListTextTooLong, TooManyIds
from graphsvc.domain.lists import (
    CuratedList,
    ListBounds,
    Purpose,
    clean_description,
    clean_name,
    may_see,
    member_ids,
    validate_list_id,
)
from graphsvc.domain.privacy import ANONYMOUS, EVERYONE, Viewer

BOUNDS = ListBounds(owner_max=3, members_max=5, name_max=8, description_max=10, batch_max=4)


def a_list(*, private: bool) -> CuratedList:
    return CuratedList("0" * 20, "ada", "n", "", private, Purpose.CURATE, 1, 1, 0)


def test_a_name_is_trimmed_and_must_say_something_within_the_bound() -> None:
    assert clean_name("  reads ", BOUNDS) == "reads"
    assert clean_name("x" * 8, BOUNDS) == "x" * 8
    with pytest.raises(InvalidList):
        clean_name("   ", BOUNDS)
    with pytest.raises(ListTextTooLong, match="LIST_NAME_MAX is 8"):
        clean_name("x" * 9, BOUNDS)


def test_a_description_may_be_empty_but_not_past_its_bound() -> None:
    assert clean_description("  ", BOUNDS) == ""
    with pytest.raises(ListTextTooLong, match="LIST_DESCRIPTION_MAX is 10"):
        clean_description("y" * 11, BOUNDS)


def test_a_change_names_each_member_once_and_within_the_batch() -> None:
    assert member_ids(["b", "c", "b"], ["d"], BOUNDS) == (["b", "c"], ["d"])
    with pytest.raises(InvalidList, match="at least one"):
        member_ids([], [], BOUNDS)
    with pytest.raises(InvalidList, match="'b' is both added and removed"):
        member_ids(["b"], ["b"], BOUNDS)
    with pytest.raises(TooManyIds, match="LIST_BATCH_MAX = 4"):
        member_ids(["a", "b", "c"], ["d", "e"], BOUNDS)
    with pytest.raises(TooManyIds):  # counted as sent: repeats count
        member_ids(["a", "a", "a", "a", "a"], [], BOUNDS)
    assert member_ids(["a", "a", "a"], ["b"], BOUNDS) == (["a"], ["b"])


def test_a_list_id_is_twenty_hex_characters() -> None:
    assert validate_list_id("0123456789abcdef0123") == "0123456789abcdef0123"
    for bad in ("0123456789ABCDEF0123", "abc", "0123456789abcdef01234", "../x"):
        with pytest.raises(InvalidList):
            validate_list_id(bad)


@pytest.mark.parametrize(
    ("viewer", "private", "owner_active", "blocked", "sees"),
    [
        (Viewer("ada"), True, True, False, True),  # the owner sees its private list
        (Viewer("ada"), False, False, False, True),  # and its lists while suspended
        (EVERYONE, True, True, False, True),  # a key that sees everything
        (ANONYMOUS, False, True, False, True),
        (ANONYMOUS, True, True, False, False),
        (Viewer("bob"), False, True, False, True),  # a stranger, or a member: a public list
        (Viewer("bob"), True, True, False, False),  # never a private one
        (Viewer("bob"), False, True, True, False),  # nor any list of an owner blocking it
        (Viewer("bob"), False, False, False, False),  # nor one of a suspended owner
    ],
)
def test_who_may_see_a_list(
    viewer: Viewer, private: bool, owner_active: bool, blocked: bool, sees: bool
) -> None:
    found = a_list(private=private)
    assert may_see(found, viewer, owner_active=owner_active, blocked=blocked) is sees
