"""User ids: what is one, and the error that names a bad one (its field, a short prefix)."""

from __future__ import annotations

import pytest

from graphsvc.domain.errors import InvalidUserId
from graphsvc.domain.ids import validate_user_id, validate_user_ids


@pytest.mark.parametrize("good", ["a", "A_b.c-9", "x" * 64, "123", ".a", "a..", "-", "_"])
def test_valid_user_ids(good: str) -> None:
    assert validate_user_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", "x" * 65, "a b", "a{b}", "émile", "a/b", "a:b", "a\nb", "a\n", ".", "..", "..."]
)
def test_invalid_user_ids_name_the_id(bad: str) -> None:
    with pytest.raises(InvalidUserId) as caught:
        validate_user_id(bad, "target_id")
    assert "target_id" in caught.value.message
    assert repr(bad)[:40].strip("'") in caught.value.message


def test_dot_ids_are_refused_in_a_list_too() -> None:
    """A URL normaliser removes ``.`` and ``..``: no id may be made of dots only."""
    validate_user_ids(["a", "b.c", ".d"], "ids")
    for ids in (["a", ".."], ["..", "a"], ["."], ["a", "..."]):
        with pytest.raises(InvalidUserId, match="not only dots"):
            validate_user_ids(ids, "ids")


def test_a_long_bad_id_is_quoted_by_a_short_prefix() -> None:
    with pytest.raises(InvalidUserId) as caught:
        validate_user_id("z" * 100_000)
    assert len(caught.value.message) < 200
    assert "100000 characters" in caught.value.message
