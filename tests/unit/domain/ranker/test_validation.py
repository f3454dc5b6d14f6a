"""The training's judging rules: the random holdout's draw, the bands of users, and the
paired bootstrap interval."""

from __future__ import annotations

import pytest

from graphsvc.domain.ranker.validation import Scores, band, held_out


def test_the_holdout_draws_about_its_share_the_same_way_every_time() -> None:
    follows = [(str(a), str(b)) for a in range(100) for b in range(100) if a != b]
    drawn = [f for f in follows if held_out(1, 0.1, *f, friendship=False)]
    assert 0.09 < len(drawn) / len(follows) < 0.11
    assert drawn == [f for f in follows if held_out(1, 0.1, *f, friendship=False)]
    assert drawn != [f for f in follows if held_out(2, 0.1, *f, friendship=False)]


def test_a_follow_and_its_follow_back_are_drawn_apart_and_a_friendship_whole() -> None:
    pairs = [(str(a), str(b)) for a in range(60) for b in range(a + 1, 60)]
    apart = sum(
        held_out(3, 0.5, a, b, friendship=False) != held_out(3, 0.5, b, a, friendship=False)
        for a, b in pairs
    )
    assert apart > len(pairs) / 4  # independent draws: about half differ
    assert all(
        held_out(3, 0.5, a, b, friendship=True) == held_out(3, 0.5, b, a, friendship=True)
        for a, b in pairs
    )


def test_bands() -> None:
    assert band(0, True) == band(3, True) == "thin"
    assert band(4, True) == "hub-adjacent"
    assert band(4, False) == "median"


def test_the_interval_is_paired_and_holds_the_difference() -> None:
    users = 400
    theirs = [0.1 * (n % 5) for n in range(users)]  # spread across users...
    ours = [value + 0.02 for value in theirs]  # ...but ours is always 0.02 above
    scores = Scores({"ours": ours, "theirs": theirs}, ["median"] * users)
    interval = scores.interval("ours", "theirs")
    assert interval.lift == pytest.approx(0.02)
    assert interval.low == pytest.approx(0.02) and interval.above  # paired: no spread left
    noisy = [value + (0.3 if n % 2 else -0.26) for n, value in enumerate(theirs)]
    scores = Scores({"ours": noisy, "theirs": theirs}, ["median"] * users)
    interval = scores.interval("ours", "theirs")
    assert interval.low < interval.lift < interval.high and not interval.above
