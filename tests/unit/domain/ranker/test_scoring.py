"""The ranker's arithmetic, with no server: the score the service ranks by is the intercept
plus the contributions the explainer shows, for the default and for a trained-like model; a
candidate that hides its counts is scored blind to them; a user's walk seed is the same in
every process."""

from __future__ import annotations

import random

import pytest

from graphsvc.domain.ranker.scoring import (
    COUNT_FEATURES,
    DEFAULT,
    FEATURES,
    RAW_FEATURES,
    Ranker,
    scored_vector,
    spread,
    with_derived,
)
from graphsvc.services.suggestions import ranked, walk_seed


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


@pytest.mark.parametrize("ranker", [DEFAULT, fitted_like(3), fitted_like(4)])
def test_a_candidate_scored_blind_to_its_counts_gets_nothing_from_them(ranker: Ranker) -> None:
    """The count features sit at the model's centre: each contributes nothing, the others are
    as given, and the score is the same whatever the counts."""
    rng = random.Random(11)
    row = {name: rng.expovariate(2.0) for name in RAW_FEATURES}
    others = [n for n in FEATURES if n not in COUNT_FEATURES]
    scores = set()
    for followers, follows in ((0, 0), (1, 5), (40, 2), (90_000, 300)):
        counted = {**row, "followers": followers, "follows": follows}
        blind = scored_vector({**counted, "counts_hidden": True}, ranker)
        told = scored_vector(counted, ranker)
        assert told == with_derived([float(counted[n]) for n in RAW_FEATURES])
        for part in ranker.contributions(blind):
            if part.name in COUNT_FEATURES:
                assert part.contribution == pytest.approx(0.0, abs=1e-9), part
        assert [blind[FEATURES.index(n)] for n in others] == [
            told[FEATURES.index(n)] for n in others
        ]
        scores.add(ranker.score(blind))
    assert len(scores) == 1


def test_the_same_candidates_but_for_hidden_counts_rank_as_one() -> None:
    """Two candidates equal but for their followers: ranked apart by a model that weighs
    followers, tied (the smaller id first) once both hide their counts."""
    ranker = fitted_like(5)
    base = {name: 0.5 for name in RAW_FEATURES} | {"sources": ["friends_of_friends"]}
    many, few = {**base, "id": "a", "followers": 900.0}, {**base, "id": "b", "followers": 2.0}
    told = {s.user_id: s.score for s in ranked([many, few], ranker)}
    assert told["a"] != told["b"]
    hidden = ranked([{**many, "counts_hidden": True}, {**few, "counts_hidden": True}], ranker)
    assert [s.user_id for s in hidden] == ["a", "b"] and hidden[0].score == hidden[1].score
    assert all(s.counts_hidden for s in hidden) and not any(
        s.counts_hidden for s in ranked([many], ranker)
    )


def test_a_users_walk_seed_is_the_same_in_every_process() -> None:
    assert walk_seed("alice") == 663_665_735  # CRC-32, not the per-process salted hash
    assert walk_seed("alice") != walk_seed("bob")


def test_followers_take_at_most_half_of_any_first_places() -> None:
    """Upper case: a follower not followed back. Each group keeps its order; one past the
    share waits for the next place it may take, and fills the end once the others run out."""
    assert "".join(spread(list("BBBBaBcd"), str.isupper)) == "BaBcBdBB"
    assert "".join(spread(list("abBcD"), str.isupper)) == "abBcD"  # within the share: as ranked
    assert "".join(spread(list("BBB"), str.isupper)) == "BBB"
    for text in ("BBBBaBcd", "aBBBBcdBB", "BaBBBBB"):
        out = spread(list(text), str.isupper)
        assert sorted(out) == sorted(text)
        for n in range(1, len(out) + 1):
            others_left = any(c.islower() for c in out[n:])
            if others_left:
                assert sum(c.isupper() for c in out[:n]) <= -(-n // 2)
