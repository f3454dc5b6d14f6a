"""A small, deterministic demo graph: a few thousand users, a few celebrities, named people.

Follow counts per user are heavy-tailed and targets are picked by popularity (Zipf), so lists
and counts look like a real network: most users have a handful of followers, and the
celebrities are followed by a large share of everyone, past the hot-list cap when it is small.
"""

from __future__ import annotations

import random
import time

from graphsvc.ops.data.edge_files import Edges

NAMED = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
CELEBRITIES = {"celeb_ada": 0.35, "celeb_bo": 0.2, "celeb_cy": 0.1}
YEAR_US = 365 * 24 * 3600 * 1_000_000


def demo_edges(users: int = 3000, seed: int = 7, mean_follows: int = 12) -> Edges:
    rng = random.Random(seed)
    ids = NAMED + [f"user{n:05d}" for n in range(users - len(NAMED))]
    now = int(time.time()) * 1_000_000
    follows: dict[tuple[str, str], int] = {}

    def when() -> int:
        return now - rng.randrange(YEAR_US)

    for uid in ids:
        for celeb, share in CELEBRITIES.items():
            if rng.random() < share:
                follows[(uid, celeb)] = when()
    weights = [1.0 / (rank + 1) ** 0.9 for rank in range(len(ids))]
    for uid in ids:
        wanted = min(int(rng.expovariate(1 / mean_follows)) + 1, 300)
        for target in rng.choices(ids, weights=weights, k=wanted):
            if target != uid and (uid, target) not in follows:
                follows[(uid, target)] = when()
    for a in NAMED:  # the named people all know each other
        for b in NAMED:
            if a != b and (a, b) not in follows:
                follows[(a, b)] = when()
    return Edges.from_rows((src, dst, since) for (src, dst), since in follows.items())
