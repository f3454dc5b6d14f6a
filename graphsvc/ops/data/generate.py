"""Synthetic follow graphs shaped like real ones, deterministic by seed.

- In-degree follows a power law: targets are drawn by Zipf popularity over a seeded ranking,
  and a handful of celebrities (ids 0..k-1) are each followed by 10-30% of all users.
- Out-degree is bounded: exponential around the mean, capped (the service's follow limits).
- Follow times are spread uniformly over the two years before a fixed anchor date.

User ids are decimal integers, which Redis stores compactly (integer members in listpacks).
The output is the edge-list format `graphsvc load` reads: ``src dst unix_seconds``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

ANCHOR = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
TWO_YEARS = 2 * 365 * 24 * 3600


@dataclass(frozen=True, slots=True)
class GraphSize:
    users: int
    edges: int


SIZES = {
    "XS": GraphSize(2_000, 40_000),
    "S": GraphSize(100_000, 2_000_000),
    "M": GraphSize(1_000_000, 20_000_000),
}


def celebrity_shares(count: int) -> list[float]:
    """Share of all users following each celebrity: from 30% down to 10%."""
    if count == 1:
        return [0.3]
    return [0.30 - 0.20 * rank / (count - 1) for rank in range(count)]


def generate(
    users: int,
    edges: int,
    *,
    seed: int = 1,
    celebrities: int = 5,
    zipf: float = 0.7,
    max_out: int = 2_000,
    progress: bool = False,
) -> Iterator[tuple[int, int, int]]:
    """Yield exactly ``edges`` distinct (src, dst, unix_seconds) follows, no self-loops."""
    rng = random.Random(seed)
    shares = celebrity_shares(celebrities) if celebrities else []
    celebrity_edges = [round(users * share) for share in shares]
    rest = edges - sum(celebrity_edges)
    if rest < 0 or edges > users * min(max_out, users - 1):
        raise ValueError(f"cannot place {edges:,} edges among {users:,} users")

    # Popularity of everyone but the celebrities: Zipf over a seeded shuffle of the ids.
    ranked = list(range(celebrities, users))
    rng.shuffle(ranked)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** zipf for rank in range(len(ranked))))

    # Bounded out-degree per user, summing to exactly `rest`.
    degrees = [
        min(max_out, 1 + int(rng.expovariate(1.0 / max(rest / users - 1, 1e-9))))
        for _ in range(users)
    ]
    scale = rest / sum(degrees)
    degrees = [min(max_out, max(0, round(d * scale))) for d in degrees]
    users_in_order = list(range(users))
    while (gap := rest - sum(degrees)) != 0:
        for user in rng.sample(users_in_order, min(users, abs(gap))):
            step = 1 if gap > 0 else -1
            if 0 <= degrees[user] + step <= max_out:
                degrees[user] += step

    followers_of = [set(rng.sample(range(users), k)) for k in celebrity_edges]
    bar = tqdm(total=edges, desc="generate", unit="edge", disable=not progress)
    for src in range(users):
        chosen: set[int] = {c for c, fans in enumerate(followers_of) if src in fans and c != src}
        # A celebrity that drew itself as a follower gives the slot to the Zipf draw instead.
        wanted = degrees[src] + sum(1 for c, fans in enumerate(followers_of) if src in fans)
        while len(chosen) < wanted:
            (dst,) = rng.choices(ranked, cum_weights=cumulative)
            if dst != src:
                chosen.add(dst)
        for dst in sorted(chosen):
            yield src, dst, ANCHOR - rng.randrange(TWO_YEARS)
        bar.update(len(chosen))
    bar.close()


def write_edge_file(path: Path, size: GraphSize, *, seed: int = 1, progress: bool = True) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    tmp = path.with_suffix(path.suffix + ".part")
    with tmp.open("w", encoding="ascii") as out:
        out.write(f"# graphsvc gen: {size.users} users, {size.edges} edges, seed {seed}\n")
        for src, dst, when in generate(size.users, size.edges, seed=seed, progress=progress):
            out.write(f"{src} {dst} {when}\n")
            written += 1
    tmp.replace(path)
    return written
