"""The Redis mirror of a freshly imported graph, built from its columns rather than from Neo4j.

In an empty database the loaded edges are the whole truth, so every user's counts and newest
lists follow from sorts of the edge columns: no Python dict of lists per user, and the lists
go to Redis already flattened into the install script's arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from graphsvc.bootstrap import Operated
from graphsvc.domain.model import Counts
from graphsvc.ops.data.edge_files import Edges

USERS_PER_BATCH = 5_000


@dataclass(frozen=True, slots=True)
class SideLists:
    """One side of every user's list, newest first: user u's kept entries are
    ``flat[2 * start[u] : 2 * end[u]]`` (score, member, ...), with ``total[u]`` in all."""

    flat: np.ndarray  # object: Python ints and strs, interleaved
    start: np.ndarray
    total: np.ndarray


def _side(
    owner: np.ndarray,
    other: np.ndarray,
    since: np.ndarray,
    names: np.ndarray,
    users: int,
    keep: int,
) -> SideLists:
    """The newest ``keep`` entries per owner, ordered as the mirror orders them (time, then
    member, both descending)."""
    order = np.lexsort((-other, -since, owner))
    owner, other, since = owner[order], other[order], since[order]
    total = np.bincount(owner, minlength=users)
    first = np.cumsum(total) - total
    rank = np.arange(len(owner)) - first[owner]
    kept = rank < keep
    flat = np.empty(2 * int(kept.sum()), dtype=object)
    flat[0::2] = since[kept].tolist()
    flat[1::2] = names[other[kept]]
    kept_total = np.minimum(total, keep)
    return SideLists(flat, np.cumsum(kept_total) - kept_total, total)


def _side_args(lists: SideLists, u: int, cap: int) -> list[Any]:
    """One side of one user as install_loaded.lua reads it: boundary score and member (the
    newest entry past the cap; -1 and "" when the list is complete), count, entries."""
    begin = 2 * int(lists.start[u])
    total = int(lists.total[u])
    hot = min(total, cap)
    boundary = [-1, ""]
    if total > cap:
        boundary = [lists.flat[begin + 2 * cap], lists.flat[begin + 2 * cap + 1]]
    return [*boundary, hot, *lists.flat[begin : begin + 2 * hot].tolist()]


@dataclass(frozen=True, slots=True)
class MirrorPlan:
    """Everything the mirror of a loaded graph holds, computed before Redis is touched."""

    names: list[str]
    counts: list[Counts]
    followers: SideLists
    following: SideLists


def plan_mirror(edges: Edges, cap: int) -> MirrorPlan:
    users = len(edges.ids)
    names = edges.ids.to_numpy(zero_copy_only=False).astype(object)
    key = edges.src.astype(np.int64) * users + edges.dst  # sorted: edges come sorted
    back = edges.dst.astype(np.int64) * users + edges.src
    found = np.minimum(np.searchsorted(key, back), max(len(key) - 1, 0))
    mutual = key[found] == back if len(key) else np.zeros(0, dtype=bool)
    followers = np.bincount(edges.dst, minlength=users).tolist()
    following = np.bincount(edges.src, minlength=users).tolist()
    friends = np.bincount(edges.src[mutual], minlength=users).tolist()
    # A freshly imported graph has only active users.
    counts = [
        Counts(fr, fg, fr, fg, mu) for fr, fg, mu in zip(followers, following, friends, strict=True)
    ]
    keep = cap + 1
    return MirrorPlan(
        names.tolist(),
        counts,
        _side(edges.dst, edges.src, edges.since, names, users, keep),
        _side(edges.src, edges.dst, edges.since, names, users, keep),
    )


async def install_plan(parts: Operated, plan: MirrorPlan, at: int, *, progress: bool) -> None:
    """Install every user's counts and newest lists, as a Neo4j snapshot at ``at`` would.
    Only right after the mirror was cleared, while Neo4j is down (see install_loaded)."""
    cap = parts.settings.mirror.hot_list_cap
    users = len(plan.names)
    with tqdm(total=users, desc="mirror", unit="user", disable=not progress) as bar:
        for begin in range(0, users, USERS_PER_BATCH):
            batch = range(begin, min(begin + USERS_PER_BATCH, users))
            await parts.maintenance.install_loaded(
                (
                    plan.names[u],
                    at,
                    plan.counts[u],
                    _side_args(plan.followers, u, cap),
                    _side_args(plan.following, u, cap),
                )
                for u in batch
            )
            bar.update(len(batch))
