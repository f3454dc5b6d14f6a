"""The ranker's arithmetic, with no server: the score the service ranks by is the intercept
plus the contributions the explainer shows, for the default and for a trained-like model; a
user's walk seed is the same in every process."""

from __future__ import annotations

import random

import pytest

from graphsvc.domain.ranking import DEFAULT, FEATURES, RAW_FEATURES, Ranker, with_derived
from graphsvc.services.suggestions import walk_seed


def fitted_like(seed: int) -> Ranker:
    rng = random.Random(seed)
    return Ranker(
        weights={name: rng.uniform(-2, 2) for name in FEATURES},
        intercept=rng.uniform(-3, 3),
        scale={name: rng.uniform(0.01, 2) for name in FEATURES},
        mean={name: rng.uniform(0, 2) for name in FEATURES},
        std={name: rng.uniform(0.1, 3) for name in FEATURES},
    )


@pytest.mark.parametrize("ranker", [DEFAULT, fitted_like(1), fitted_like(2)])
def test_the_score_is_the_intercept_plus_the_contributions(ranker: Ranker) -> None:
    rng = random.Random(7)
    for _ in range(200):
        vector = with_derived([rng.expovariate(2.0) for _ in RAW_FEATURES])
        parts = ranker.contributions(vector)
        assert [p.name for p in parts] == list(FEATURES)
        total = ranker.intercept + sum(p.contribution for p in parts)
        assert ranker.score(vector) == pytest.approx(total, rel=1e-9, abs=1e-9)


def test_paths_share_is_paths_over_one_plus_followers() -> None:
    raw = [0.0] * len(RAW_FEATURES)
    raw[RAW_FEATURES.index("paths")], raw[RAW_FEATURES.index("followers")] = 6.0, 2.0
    assert with_derived(raw)[-1] == 2.0


def test_a_users_walk_seed_is_the_same_in_every_process() -> None:
    assert walk_seed("alice") == 663_665_735  # CRC-32, not the per-process salted hash
    assert walk_seed("alice") != walk_seed("bob")
