"""How graph events count towards trending and popular accounts, and how the lists rank
(``domain/trending.py``): pure logic, no server."""

from __future__ import annotations

from graphsvc.domain.trending import (
    HOUR_US,
    bucket_of,
    changed_accounts,
    follower_gains,
    top_popular,
    top_trending,
    window,
)

NOW = 500_000 * HOUR_US + 123


def event(kind: str, src: str, dst: str = "", at: int = NOW) -> dict[str, str]:
    return {"type": kind, "src": src, "dst": dst, "version": str(at)}


def test_the_window_is_the_last_hours_the_current_one_included() -> None:
    assert window(NOW, 3) == [499_998, 499_999, 500_000]
    assert bucket_of(NOW) == 500_000 and bucket_of(NOW - 124) == 499_999


def test_follows_gain_and_unfollows_take_back_in_the_hour_of_the_event() -> None:
    events = [
        event("follow", "a", "star"),
        event("follow", "b", "star"),
        event("unfollow", "a", "star"),
        event("follow", "c", "star", NOW - HOUR_US),
        event("follow", "bot", "x"),
        event("follow", "bot", "y"),
        event("block", "d", "star"),  # no follower moves by the block itself
        event("follow", "e", "old", NOW - 3 * HOUR_US),  # before the window
        {"type": "follow", "src": "f", "dst": "star", "version": "not a time"},
    ]
    assert follower_gains(events, NOW, 3) == {
        500_000: {"star": 1, "x": 1, "y": 1},
        499_999: {"star": 1},
    }


def test_changed_accounts_are_targets_and_users_whose_state_changed() -> None:
    events = [
        event("follow", "a", "star"),
        event("unfollow", "b", "other"),
        event("status", "spammer"),
        event("privacy", "shy"),
        event("erase", "gone"),
        event("mute", "m", "n"),
    ]
    assert changed_accounts(events) == {"star", "other", "spammer", "shy", "gone"}


def test_trending_keeps_listable_gainers_most_gained_first_ties_by_id() -> None:
    gained = [("a", 5.0), ("b", 7.0), ("hidden", 9.0), ("c", 5.0), ("lost", -2.0), ("z", 0.0)]
    listable = {"a": 1, "b": 1_000, "c": 3, "lost": 1, "z": 8}
    assert top_trending(gained, listable, 10) == ["b", "a", "c"]
    assert top_trending(gained, listable, 2) == ["b", "a"]


def test_popular_is_the_most_followed_ties_by_id() -> None:
    assert top_popular([("b", 3.0), ("a", 3.0), ("c", 9.0)], 2) == ["c", "a"]
