"""The ranker's constrained fit: evidence can only be re-weighed, never turned upside down,
and where the constraints do not bind the fit is the ordinary logistic regression."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from graphsvc.domain.ranker.scoring import (
    EVIDENCE,
    FEATURES,
    PATH_FEATURE,
    PATH_FLOOR,
    weight_bounds,
)
from graphsvc.workers.ranker.examples import Example
from graphsvc.workers.ranker.fit import bounded_logistic, fit


def examples(label_of, users: int = 40, per_user: int = 30, seed: int = 3) -> list[Example]:
    """Users with random candidates whose features are drawn at random; ``label_of`` says
    which candidates were followed."""
    rng = random.Random(seed)
    made = []
    for u in range(users):
        vectors = []
        for _ in range(per_user):
            raw = {name: rng.choice([0.0, rng.expovariate(1.0)]) for name in FEATURES}
            raw["follows_you"] = float(rng.random() < 0.2)
            vectors.append([raw[name] for name in FEATURES])
        labels = [int(label_of(dict(zip(FEATURES, v, strict=True)), rng)) for v in vectors]
        made.append(Example(f"u{u}", [f"c{n}" for n in range(per_user)], vectors, labels, 3))
    return made


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_evidence_feature_gets_a_negative_weight_even_when_the_data_says_so(seed: int) -> None:
    # adversarial: followed candidates have *fewer* paths, less Adamic-Adar, fewer walks...
    def upside_down(row, rng):
        evidence = sum(row[name] for name in ("paths", "aa", "ra", "walk", "cof"))
        return evidence < 1.0 and rng.random() < 0.7

    ranker = fit(examples(upside_down, seed=seed), seed)
    for name in EVIDENCE:
        assert ranker.weights[name] >= 0.0, (name, ranker.weights[name])
    assert ranker.weights[PATH_FEATURE] >= PATH_FLOOR - 1e-9
    # an unconstrained fit of the same data does turn them upside down
    free = LogisticRegression(max_iter=5_000).fit(
        np.array([v for e in examples(upside_down, seed=seed) for v in e.vectors]),
        [y for e in examples(upside_down, seed=seed) for y in e.labels],
    )
    assert min(free.coef_[0][FEATURES.index(n)] for n in ("paths", "aa", "ra")) < 0


def test_features_of_unknown_sign_keep_the_sign_the_data_gives() -> None:
    # followed candidates are the ones with few followers and who do not follow the user
    def small_and_new(row, rng):
        return row["followers"] < 0.5 and row["follows_you"] == 0 and rng.random() < 0.8

    ranker = fit(examples(small_and_new), 1)
    assert ranker.weights["followers"] < 0
    assert ranker.weights["follows_you"] < 0


def test_where_no_bound_binds_the_fit_is_scikit_learns_logistic_regression() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2_000, len(FEATURES)))
    truth = np.array([1.0 if lo is not None else -0.5 for lo, _ in weight_bounds()])
    y = (rng.random(2_000) < 1 / (1 + np.exp(-(x @ truth - 1.0)))).astype(float)
    weights, intercept = bounded_logistic(x, y)
    reference = LogisticRegression(C=1.0, max_iter=5_000, tol=1e-10).fit(x, y)
    assert np.allclose(weights, reference.coef_[0], atol=1e-3)
    assert intercept == pytest.approx(reference.intercept_[0], abs=1e-3)


def test_a_feature_that_barely_varied_in_training_cannot_swamp_the_score_later() -> None:
    """A graph loaded in one go: every path's freshness within a hair of 1 when fitted, and
    a little lower by the time the model serves (the clock moved on)."""

    def by_paths(row, rng):
        return rng.random() < row["paths"] / 4

    made = examples(by_paths)
    rng = random.Random(1)
    fresh = FEATURES.index("fresh")
    for example in made:
        for vector in example.vectors:
            vector[fresh] = 1.0 - rng.random() * 1e-9
    ranker = fit(made, 1)
    vector = list(made[0].vectors[0])
    later = list(vector)
    later[fresh] -= 1e-3  # served a while later: fresher paths are all a little staler
    assert abs(ranker.score(later) - ranker.score(vector)) < 0.1


def test_a_fit_on_a_random_holdout_learns_nothing_from_time() -> None:
    """Freshness that followed the file's order (newer paths: never followed) is learned
    from the examples as they are, and not at all from their timeless copies."""

    def stale_paths(row, rng):
        return row["fresh"] < 0.5 and rng.random() < 0.6

    made = examples(stale_paths)
    assert fit(made, 1).weights["fresh"] < 0
    timeless = fit([example.timeless() for example in made], 1)
    assert timeless.weights["fresh"] == 0.0 and timeless.weights["active"] == 0.0


def test_followers_and_strangers_get_a_model_each_when_both_have_follows_to_learn() -> None:
    """A follower is followed back when it writes a lot (``active``); a stranger is followed
    when it shares many friends (``ra``). One blend ranks one of them badly; a model per kind
    ranks each by its own signal, and a stored model keeps both."""

    def two_questions(row, rng):
        if row["follows_you"]:
            return row["active"] > 1.0
        return row["ra"] > 1.5

    ranker = fit(examples(two_questions, users=80), 1)
    assert ranker.followers is not None
    assert ranker.followers.weights["active"] > ranker.weights["active"]
    assert ranker.weights["ra"] > ranker.followers.weights["ra"]
    follower = [0.0] * len(FEATURES)
    follower[FEATURES.index("follows_you")] = 1.0
    assert ranker.part(follower) is ranker.followers
    assert ranker.part([0.0] * len(FEATURES)) is ranker
    again = type(ranker).from_json({**ranker.as_json(), "version": 4})
    assert again.followers is not None and again.followers.weights == ranker.followers.weights
    assert again.score(follower) == pytest.approx(ranker.score(follower))


def test_one_model_for_all_when_followers_have_too_few_follows_to_learn() -> None:
    ranker = fit(examples(lambda row, rng: not row["follows_you"] and row["ra"] > 1.5), 1)
    assert ranker.followers is None
