"""The ranker registry's rules: when a training is due (time, growth, retries), whether a
candidate is promoted, when the served model is stale, and the A/B split's stable hash."""

from __future__ import annotations

import pytest

from graphsvc.domain.ranker.registry import (
    MODEL,
    Schedule,
    Scores,
    TrainingState,
    drift,
    load_clock,
    split_bucket,
    stale_text,
    staleness,
    takes_challenger,
    trigger,
    verdict,
)

SCHEDULE = Schedule(every_seconds=3_600, retry_seconds=600, growth=0.2, min_edges=1_000)
T = 1_000_000.0  # unix seconds of the last attempt
SERVED = TrainingState(
    served=3, served_edges=10_000, attempt_at=T, attempt_outcome="promoted", attempt_edges=10_000
)


def test_nothing_is_trained_below_the_minimum_of_edges() -> None:
    assert trigger(TrainingState(), 999, T, SCHEDULE) is None
    assert trigger(TrainingState(), 1_000, T, SCHEDULE) == "no model is served yet"


def test_the_growth_trigger_fires_after_enough_new_edges_and_not_before() -> None:
    assert trigger(SERVED, 11_999, T + 60, SCHEDULE) is None
    assert trigger(SERVED, 12_000, T + 60, SCHEDULE) == (
        "the graph grew to 12,000 follow edges (due at 12,000)"
    )


def test_growth_counts_from_the_last_attempt_when_a_later_one_was_rejected() -> None:
    rejected = TrainingState(
        served=3,
        served_edges=10_000,
        attempt_at=T,
        attempt_outcome="rejected",
        attempt_edges=12_000,
    )
    assert trigger(rejected, 12_500, T + 60, SCHEDULE) is None  # the same graph, give or take
    assert trigger(rejected, 14_400, T + 60, SCHEDULE) is not None


def test_time_triggers_after_every_seconds_and_sooner_after_a_failure() -> None:
    assert trigger(SERVED, 10_000, T + 3_599, SCHEDULE) is None
    assert trigger(SERVED, 10_000, T + 3_600, SCHEDULE) == "3600 s since the last training"
    failed = TrainingState(
        served=3, served_edges=10_000, attempt_at=T, attempt_outcome="failed", attempt_edges=10_000
    )
    assert trigger(failed, 10_000, T + 599, SCHEDULE) is None
    assert trigger(failed, 10_000, T + 600, SCHEDULE) is not None
    nothing_served = TrainingState(attempt_at=T, attempt_outcome="rejected", attempt_edges=5_000)
    assert trigger(nothing_served, 5_000, T + 600, SCHEDULE) is not None


def scores(**whole: float) -> Scores:
    """200 users, each at its ranker's mean (no spread) unless ``noisy`` is given: the model's
    users then alternate that far above and below it."""
    noisy = whole.pop("noisy", 0.0)
    users = 200
    per_user = {name: [value] * users for name, value in whole.items()}
    per_user[MODEL] = [whole[MODEL] + (noisy if n % 2 else -noisy) for n in range(users)]
    return Scores(per_user, ["median"] * users)


HEURISTICS = ("common neighbours", "resource allocation")


def test_a_model_is_promoted_only_above_the_served_ranking_and_the_best_heuristic() -> None:
    won = verdict(
        scores(model=0.15, served=0.14, **{"common neighbours": 0.10, "resource allocation": 0.12}),
        "served",
        HEURISTICS,
        default=False,
    )
    assert won.promote == MODEL
    tie = verdict(
        scores(model=0.14, served=0.14, **{"common neighbours": 0.10, "resource allocation": 0.12}),
        "served",
        HEURISTICS,
        default=False,
    )
    assert tie.promote is None and "not above served" in tie.why


def test_a_lift_within_the_bootstrap_interval_is_noise() -> None:
    noisy = scores(
        model=0.15,
        served=0.14,
        noisy=0.1,
        **{"common neighbours": 0.10, "resource allocation": 0.12},
    )
    assert verdict(noisy, "served", HEURISTICS, default=False).promote is None
    interval = noisy.interval(MODEL, "served")
    assert interval.lift == pytest.approx(0.01)
    assert interval.low < 0 < interval.high and not interval.above and not interval.below


def test_the_exact_heuristic_is_the_bar_when_the_scores_have_it() -> None:
    """Beating the heuristics re-ranking the service's pool is not enough: the model must
    beat the heuristic computed on the whole training view."""
    pool = {"common neighbours": 0.10, "resource allocation": 0.12}
    exact = {"resource allocation (exact)": 0.16, "common neighbours (exact)": 0.11}
    found = verdict(scores(model=0.15, served=0.10, **pool, **exact), "served", HEURISTICS, False)
    assert found.promote == "resource allocation" and "resource allocation (exact)" in found.why


def test_a_model_that_loses_a_band_of_users_is_not_promoted() -> None:
    users = 200
    thin = set(range(0, users, 4))  # 50 thin users: the model loses every one of them
    model = [0.0 if n in thin else 0.3 for n in range(users)]
    heuristic = [0.1] * users
    per_user = {MODEL: model, "served": [0.0] * users, "resource allocation": heuristic}
    per_user["common neighbours"] = heuristic
    bands = ["thin" if n in thin else "median" for n in range(users)]
    found = verdict(Scores(per_user, bands), "served", HEURISTICS, default=False)
    assert found.promote != MODEL and "thin" in found.why
    # fewer thin users than a band needs to be judged: promoted on the whole
    few = ["thin" if n < 10 else "median" for n in range(users)]
    model = [0.0 if n < 10 else 0.3 for n in range(users)]
    found = verdict(Scores({**per_user, MODEL: model}, few), "served", HEURISTICS, False)
    assert found.promote == MODEL


def test_the_best_heuristic_replaces_the_default_and_a_worse_served_model() -> None:
    lost = {"common neighbours": 0.10, "resource allocation": 0.12}
    instead = verdict(scores(model=0.11, served=0.13, **lost), "served", HEURISTICS, default=True)
    assert instead.promote == "resource allocation" and "served instead" in instead.why
    # a trained model served: replaced only when the heuristic beats it
    assert (
        verdict(
            scores(model=0.11, served=0.13, **lost), "served", HEURISTICS, default=False
        ).promote
        is None
    )
    assert (
        verdict(
            scores(model=0.11, served=0.05, **lost), "served", HEURISTICS, default=False
        ).promote
        == "resource allocation"
    )
    # the heuristic already served stays served
    assert (
        verdict(
            scores(model=0.11, **lost), "resource allocation", HEURISTICS, default=False
        ).promote
        is None
    )


def test_a_load_clock_is_one_time_or_microsecond_steps() -> None:
    assert load_clock(1, 0)
    assert load_clock(1_000, 999)  # file order, one microsecond apart
    assert load_clock(1_000, 600)  # mostly: a few live follows among them
    assert not load_clock(1_000, 3)  # real times step by seconds


def test_a_served_model_is_stale_once_the_graph_grew_or_shrank_past_the_bound() -> None:
    assert staleness(SERVED, 11_999, SCHEDULE) == []
    assert staleness(SERVED, 8_001, SCHEDULE) == []
    (grown,) = staleness(SERVED, 12_000, SCHEDULE)
    assert grown.reason == "graph_changed"
    assert grown.line == (
        "the served v3 was trained on 10,000 follow edges, the graph has 12,000 now "
        "(+20%, past the 20% bound)"
    )
    (shrunk,) = staleness(SERVED, 8_000, SCHEDULE)
    assert shrunk.reason == "graph_changed" and "8,000 now (-20%" in shrunk.line
    assert drift(SERVED, 12_500) == pytest.approx(0.25)
    assert drift(TrainingState(), 12_500) is None  # nothing served: no model to age


def test_a_failed_last_training_makes_the_served_model_stale_and_says_why() -> None:
    failed = TrainingState(
        served=3,
        served_edges=10_000,
        attempt_at=T,
        attempt_outcome="failed",
        attempt_edges=10_000,
        attempt_why="RuntimeError: the fit broke",
    )
    (stale,) = staleness(failed, 10_000, SCHEDULE)
    assert (stale.reason, stale.line) == (
        "training_failed",
        "the last training failed: RuntimeError: the fit broke",
    )
    rejected = TrainingState(3, 10_000, T, "rejected", 10_000, "not above served v3's")
    assert staleness(rejected, 10_000, SCHEDULE) == []  # a rejection keeps a good model


def test_no_model_served_is_stale_only_once_the_graph_could_train_one() -> None:
    assert staleness(TrainingState(), 999, SCHEDULE) == []
    (none,) = staleness(TrainingState(), 1_000, SCHEDULE)
    assert none.reason == "no_model"
    assert none.line == (
        "no trained model is served although the graph has 1,000 follow edges "
        "(training starts at 1,000)"
    )


def test_every_reason_is_told_on_one_line() -> None:
    failed = TrainingState(attempt_at=T, attempt_outcome="failed", attempt_why="TrainError: x")
    found = staleness(failed, 5_000, SCHEDULE)
    assert [s.reason for s in found] == ["training_failed", "no_model"]
    assert stale_text(found) == (
        "stale: the last training failed: TrainError: x; no trained model is served although "
        "the graph has 5,000 follow edges (training starts at 1,000)"
    )
    assert stale_text([]) == "ok"


def test_the_split_hash_is_stable_and_sends_about_its_share() -> None:
    users = [f"user{n}" for n in range(10_000)]
    assert [split_bucket(u, 7) for u in users[:50]] == [split_bucket(u, 7) for u in users[:50]]
    assert all(0 <= split_bucket(u, 7) < 1 for u in users)
    taken = sum(takes_challenger(u, 7, 0.3) for u in users)
    assert taken / len(users) == pytest.approx(0.3, abs=0.02)
    # another experiment, another draw: not the same users
    other = {u for u in users if takes_challenger(u, 8, 0.3)}
    assert other != {u for u in users if takes_challenger(u, 7, 0.3)}
    assert not any(takes_challenger(u, 0, 1.0) for u in users[:100])  # no challenger
    assert not any(takes_challenger(u, 7, 0.0) for u in users[:100])
    assert all(takes_challenger(u, 7, 1.0) for u in users[:100])


def test_a_stale_served_ranking_only_has_to_be_matched() -> None:
    lost = {"common neighbours": 0.10, "resource allocation": 0.12}
    tie = scores(model=0.14, served=0.14, **lost)
    assert verdict(tie, "served", HEURISTICS, default=False).promote is None
    fresh = verdict(tie, "served", HEURISTICS, default=False, stale=True)
    assert fresh.promote == MODEL and "matches the stale served" in fresh.why
    # clearly worse than the stale one: kept; the heuristic must still be beaten
    assert (
        verdict(
            scores(model=0.10, served=0.14, **lost), "served", HEURISTICS, default=False, stale=True
        ).promote
        is None
    )
    assert (
        verdict(
            scores(model=0.12, served=0.12, **lost), "served", HEURISTICS, default=False, stale=True
        ).promote
        == "resource allocation"
    )


def test_a_rejected_training_on_the_grown_graph_ages_the_served_model_from_there() -> None:
    schedule = Schedule(every_seconds=3_600, retry_seconds=600, growth=0.2, min_edges=1_000)
    rejected = TrainingState(
        served=3,
        served_edges=10_000,
        attempt_at=T,
        attempt_outcome="rejected",
        attempt_edges=20_000,
    )
    assert staleness(rejected, 21_000, schedule) == []
    (grown,) = staleness(rejected, 24_000, schedule)
    assert grown.reason == "graph_changed" and "last validated on 20,000" in grown.line


def test_a_model_that_loses_the_discoveries_is_not_promoted() -> None:
    """Ahead with the follow-backs counted, behind on the other held-out follows: a list of
    followers is not a list of people the user may know."""
    lost = {"common neighbours": 0.10, "resource allocation": 0.12}
    overall = scores(model=0.20, served=0.10, **lost)
    behind = scores(
        model=0.02, served=0.03, **{"common neighbours": 0.04, "resource allocation": 0.05}
    )
    found = verdict(overall, "served", HEURISTICS, False, discoveries=behind)
    assert found.promote != MODEL and "the discoveries" in found.why
    level = scores(
        model=0.05, served=0.03, **{"common neighbours": 0.04, "resource allocation": 0.05}
    )
    assert verdict(overall, "served", HEURISTICS, False, discoveries=level).promote == MODEL
