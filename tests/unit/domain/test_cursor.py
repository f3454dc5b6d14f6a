"""Cursors: a keyset position signed for one list with the service's secret; garbage, a
tampered or foreign cursor and an absurd position are each refused as a bad cursor."""

from __future__ import annotations

import pytest

from graphsvc.domain.cursor import CursorCodec, Position
from graphsvc.domain.errors import InvalidCursor

SECRET = "a-test-secret-of-enough-length"
CODEC = CursorCodec(SECRET)


def test_cursor_round_trip() -> None:
    position = Position(1_795_000_000_123_456, "user.42")
    token = CODEC.encode("followers|alice", position)
    assert CODEC.decode("followers|alice", token) == position


@pytest.mark.parametrize("token", ["", "abc", "abc.", ".abc", "!!!.###", "a.b.c", "x" * 300])
def test_garbage_cursor_is_rejected(token: str) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode("followers|alice", token)


def test_tampered_cursor_is_rejected() -> None:
    token = CODEC.encode("followers|alice", Position(1000, "bob"))
    body, mac = token.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    with pytest.raises(InvalidCursor, match="signature"):
        CODEC.decode("followers|alice", f"{flipped}.{mac}")


def test_a_timeline_cursor_carries_a_post_member() -> None:
    token = CODEC.encode_at("timeline|alice", 1000, "bob|post.1")
    assert CODEC.decode_at("timeline|alice", token, lambda key: "|" in key) == (1000, "bob|post.1")
    with pytest.raises(InvalidCursor, match="bad position"):
        CODEC.decode("timeline|alice", token)  # a member is not a user id


def test_cursor_is_bound_to_its_list_and_secret() -> None:
    token = CODEC.encode("followers|alice", Position(1000, "bob"))
    with pytest.raises(InvalidCursor, match="different list"):
        CODEC.decode("following|alice", token)
    with pytest.raises(InvalidCursor, match="different list"):
        CODEC.decode("followers|carol", token)
    with pytest.raises(InvalidCursor, match="signature"):
        CursorCodec("another-secret-of-enough-length").decode("followers|alice", token)


@pytest.mark.parametrize("since", [str(2**63), "9" * 30, "\u00b2", "1\u0663"])
def test_an_absurd_cursor_position_is_a_bad_cursor(since: str) -> None:
    """A cursor signed with the secret whose time no store can take is refused here (a 400),
    not by the store (a 500)."""
    forged = CODEC.seal(f"4|followers|alice|{since}|bob")
    with pytest.raises(InvalidCursor, match="bad position"):
        CODEC.decode("followers|alice", forged)


def test_a_cursor_of_another_version_is_refused_by_name() -> None:
    with pytest.raises(InvalidCursor, match="version '3' is not supported"):
        CODEC.decode("followers|alice", CODEC.seal("3|followers|alice|1000|bob"))
