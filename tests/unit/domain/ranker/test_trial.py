"""The trial of a promoted ranker as rules: when it goes on, when the challenger is rolled
back, when it is served to everyone."""

from __future__ import annotations

import pytest

from graphsvc.domain.ranker.registry import Schedule, TrainingState, due_at, trigger
from graphsvc.domain.ranker.trial import PROMOTE, ROLL_BACK, Arm, TrialRules, difference, judge

RULES = TrialRules(share=0.1, seconds=300.0, min_shown=1_000)


def test_too_few_shows_keep_the_trial_going_until_its_end() -> None:
    verdict = judge(Arm(999, 0), Arm(5_000, 500), 10.0, RULES, "v3")
    assert verdict.action is None
    assert "999 of 1,000 shows per arm" in verdict.why


def test_a_trial_nobody_saw_ends_with_the_model_served_on_its_validation() -> None:
    verdict = judge(Arm(12, 0), Arm(40, 1), 300.0, RULES, "v3")
    assert verdict.action == PROMOTE
    assert "served on its validation" in verdict.why
    assert "12 shows per arm" in verdict.why


def test_a_challenger_followed_clearly_less_is_rolled_back() -> None:
    verdict = judge(Arm(2_000, 20), Arm(20_000, 800), 30.0, RULES, "the built-in default")
    assert verdict.action == ROLL_BACK
    assert "the built-in default's 0.0400" in verdict.why
    assert "0.0100 (20 follows of 2,000 shown)" in verdict.why


def test_a_challenger_followed_clearly_more_is_served_at_once() -> None:
    verdict = judge(Arm(2_000, 200), Arm(20_000, 800), 30.0, RULES, "v3")
    assert verdict.action == PROMOTE
    assert verdict.why.startswith("won its trial")


def test_an_undecided_trial_goes_on_then_serves_the_challenger() -> None:
    challenger, incumbent = Arm(1_000, 38), Arm(9_000, 360)
    assert judge(challenger, incumbent, 299.0, RULES, "v3").action is None
    verdict = judge(challenger, incumbent, 300.0, RULES, "v3")
    assert verdict.action == PROMOTE
    assert verdict.why.startswith("not worse after 300 s")


def test_the_interval_holds_the_difference_and_narrows_with_evidence() -> None:
    diff, low, high = difference(Arm(1_000, 50), Arm(1_000, 40))
    assert diff == pytest.approx(0.01)
    assert low < diff < high
    _, low10, high10 = difference(Arm(10_000, 500), Arm(10_000, 400))
    assert high10 - low10 < (high - low) / 3


def test_the_incumbent_counts_only_what_came_after_the_trial_began() -> None:
    assert Arm(1_500, 70).since(Arm(1_000, 50)) == Arm(500, 20)
    # counters reset meanwhile (Redis emptied): what is there came after
    assert Arm(30, 1).since(Arm(1_000, 50)) == Arm(30, 1)


def test_no_training_is_due_while_a_model_is_on_trial() -> None:
    schedule = Schedule(every_seconds=3_600, retry_seconds=60, growth=0.1, min_edges=10)
    waiting = TrainingState(attempt_at=0.0, attempt_outcome="on trial", trial=True)
    assert trigger(waiting, 1_000_000, 1e9, schedule) is None
    assert trigger(TrainingState(), 1_000, 0.0, schedule) == "no model is served yet"


def test_a_rolled_back_model_waits_the_full_period_not_the_retry() -> None:
    schedule = Schedule(every_seconds=3_600, retry_seconds=60, growth=0.1, min_edges=10)
    rolled = TrainingState(attempt_at=1_000.0, attempt_outcome="rolled back", attempt_edges=100)
    assert due_at(rolled, schedule)[0] == 4_600.0
    failed = TrainingState(attempt_at=1_000.0, attempt_outcome="failed", attempt_edges=100)
    assert due_at(failed, schedule)[0] == 1_060.0
