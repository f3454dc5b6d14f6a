"""How a training judges a ranker: the way its served lists are judged afterwards.

The random holdout draws each follow on its own, seeded, with one chance in ``share``
(``held_out``): a follow is a fact of its own, so one whose follow-back stays visible is a
follower the user has not followed back yet, a real suggestion, and a ranker has to learn to
make it. A friendship (two follows made at the same moment, as `graphsvc load --undirected`
writes one) is one fact and is drawn whole. Users are then those an evaluation samples: the
ones with held-out follows, each once (a user with more follows is more likely to have one,
as in any held-out evaluation), with no boost for thin users.

A ranker's figure is each user's precision@10 of the list it would serve (fills included),
and a comparison of two rankers is a paired bootstrap over the same users (``Scores``): the
users are resampled with replacement, the difference of the means taken each time, and the
middle ``CONFIDENCE`` of those differences is the interval. A lift counts when the interval's
lower bound is above zero. The same comparison per band of users (``band``: thin, median,
hub-adjacent) tells a ranker that wins on average but loses a kind of user.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

BANDS = ("thin", "median", "hub-adjacent")
THIN_FOLLOWS = 3  # a user following this many or fewer is thin
HUB_SHARE = 0.01  # the most followed share of the users are hubs
ROUNDS = 1_000  # bootstrap resamples
CONFIDENCE = 0.95
MIN_BAND_USERS = 30  # fewer users in a band say nothing about it: it is not judged


def held_out(seed: int, share: float, follower: str, followed: str, friendship: bool) -> bool:
    """Whether the random holdout of ``seed`` holds out this follow: a seeded hash of the
    follow (of the pair, either way round, when it is one half of a friendship) below
    ``share``. The same follow is drawn the same way in every process and run."""
    first, second = sorted((follower, followed)) if friendship else (follower, followed)
    digest = hashlib.blake2b(f"{seed}\0{first}\0{second}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") < share * 2**64


def band(follows: int, follows_a_hub: bool) -> str:
    """The user's band: thin (THIN_FOLLOWS follows or fewer), hub-adjacent (it follows one of
    the most followed HUB_SHARE of the users), else median."""
    if follows <= THIN_FOLLOWS:
        return "thin"
    return "hub-adjacent" if follows_a_hub else "median"


@dataclass(frozen=True, slots=True)
class Interval:
    """Ours less theirs: the difference of the means, and its bootstrap interval."""

    lift: float
    low: float
    high: float
    users: int

    @property
    def above(self) -> bool:
        """Ours is better, beyond the resampling's spread."""
        return self.low > 0

    @property
    def below(self) -> bool:
        """Ours is worse, beyond the resampling's spread."""
        return self.high < 0

    def text(self) -> str:
        return f"{self.lift:+.4f} [{self.low:+.4f}, {self.high:+.4f}] over {self.users} users"

    def as_json(self) -> dict[str, float | int]:
        return {"lift": self.lift, "low": self.low, "high": self.high, "users": self.users}


@dataclass(frozen=True)
class Scores:
    """Each ranker's precision@10 per validation user (``per_user``: the same users, in the
    same order, for every ranker) and each user's band."""

    per_user: Mapping[str, Sequence[float]]
    bands: Sequence[str]
    seed: int = 1

    @cached_property
    def whole(self) -> dict[str, float]:
        """Mean precision@10 per ranker."""
        return {name: _mean(values) for name, values in self.per_user.items()}

    def band_users(self, name: str) -> list[int]:
        return [n for n, found in enumerate(self.bands) if found == name]

    def band_means(self, name: str) -> dict[str, float]:
        users = self.band_users(name)
        return {r: _mean([v[n] for n in users]) for r, v in self.per_user.items()}

    def interval(self, ours: str, theirs: str, in_band: str | None = None) -> Interval:
        """The paired bootstrap interval of ours less theirs, over every user or a band's."""
        users = range(len(self.bands)) if in_band is None else self.band_users(in_band)
        mine, other = self.per_user[ours], self.per_user[theirs]
        diffs = [mine[n] - other[n] for n in users]
        if not diffs:
            return Interval(0.0, 0.0, 0.0, 0)
        rng = random.Random(self.seed)
        size = len(diffs)
        means = sorted(sum(rng.choices(diffs, k=size)) / size for _ in range(ROUNDS))
        tail = int(ROUNDS * (1 - CONFIDENCE) / 2)
        return Interval(_mean(diffs), means[tail], means[ROUNDS - 1 - tail], size)

    def losing_bands(self, ours: str, theirs: str) -> list[tuple[str, Interval]]:
        """The bands (with MIN_BAND_USERS users or more) where ours is worse than theirs."""
        found = []
        for name in BANDS:
            if len(self.band_users(name)) >= MIN_BAND_USERS:
                interval = self.interval(ours, theirs, name)
                if interval.below:
                    found.append((name, interval))
        return found

    def band_table(self, names: Sequence[str]) -> dict[str, dict[str, float | int]]:
        """Per band: its users and the mean of each named ranker."""
        table: dict[str, dict[str, float | int]] = {}
        for name in BANDS:
            users = len(self.band_users(name))
            if users:
                means = self.band_means(name)
                table[name] = {"users": users, **{r: means[r] for r in names}}
        return table


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0
