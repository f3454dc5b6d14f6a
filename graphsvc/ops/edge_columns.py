"""A follow graph as columns: distinct edges as integer codes into a sorted array of user ids.

Millions of edges stay as a few numpy arrays from the parse to Neo4j's importer and the
mirror, instead of millions of Python tuples; a dict of pairs is built only when a caller
asks for one (``edges``), for small graphs and tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa


@dataclass(slots=True, eq=False)
class EdgeColumns:
    """Distinct edges sorted by (follower, followed), with what was skipped on the way.

    ``ids`` holds every user of an edge once, in byte order; ``src`` and ``dst`` index it.
    """

    ids: pa.Array
    src: np.ndarray
    dst: np.ndarray
    since: np.ndarray
    lines: int = 0
    self_loops: int = 0
    duplicates: int = 0
    _pairs: dict[tuple[str, str], int] | None = field(default=None, repr=False)

    @property
    def count(self) -> int:
        return len(self.src)

    @property
    def users(self) -> list[str]:
        return self.ids.to_pylist()

    @property
    def edges(self) -> dict[tuple[str, str], int]:
        """(src, dst) -> since, built on first use (costly for millions of edges)."""
        if self._pairs is None:
            names = self.ids.to_numpy(zero_copy_only=False)
            self._pairs = dict(
                zip(
                    zip(names[self.src].tolist(), names[self.dst].tolist(), strict=True),
                    self.since.tolist(),
                    strict=True,
                )
            )
        return self._pairs

    def columns(self) -> EdgeColumns:
        return self

    def summary(self) -> str:
        return (
            f"{self.lines:,} lines: {self.count:,} distinct edges, "
            f"{self.self_loops:,} self-loops skipped, {self.duplicates:,} duplicates merged"
        )


def merge_edges(
    ids: pa.Array,
    src: np.ndarray,
    dst: np.ndarray,
    since: np.ndarray,
    *,
    lines: int,
    undirected: bool = False,
) -> EdgeColumns:
    """Edges as read (codes into the sorted ``ids``) to distinct edges: self-loops dropped
    and counted, duplicates merged (the earliest time wins) and counted, each undirected
    line followed both ways, and ids that only took part in self-loops dropped."""
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        since = np.concatenate([since, since])
    loops = src == dst
    self_loops = int(loops.sum())
    if self_loops:
        keep = ~loops
        src, dst, since = src[keep], dst[keep], since[keep]
    n = max(len(ids), 1)
    key = src.astype(np.int64) * n + dst
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if len(key) else key
    merged = np.minimum.reduceat(since[order], first) if len(key) else since.astype(np.int64)
    key = key[first]
    src, dst = key // n, key % n
    present = np.zeros(len(ids), dtype=bool)
    present[src] = True
    present[dst] = True
    if not present.all():
        ids = ids.filter(pa.array(present))
        renumber = np.cumsum(present) - 1
        src, dst = renumber[src], renumber[dst]
    code = np.int32 if len(ids) < 2**31 else np.int64
    return EdgeColumns(
        ids=ids,
        src=src.astype(code),
        dst=dst.astype(code),
        since=merged.astype(np.int64),
        lines=lines,
        self_loops=self_loops,
        duplicates=len(order) - len(first),
    )


def columns_of_pairs(pairs: dict[tuple[str, str], int], *, lines: int, self_loops: int,
                     duplicates: int) -> EdgeColumns:  # fmt: skip
    """Columns of a dict of distinct edges (small graphs built in Python)."""
    names = sorted({uid for pair in pairs for uid in pair})
    code = {uid: n for n, uid in enumerate(names)}
    src = np.fromiter((code[s] for s, _ in pairs), dtype=np.int64, count=len(pairs))
    dst = np.fromiter((code[d] for _, d in pairs), dtype=np.int64, count=len(pairs))
    since = np.fromiter(pairs.values(), dtype=np.int64, count=len(pairs))
    merged = merge_edges(pa.array(names, pa.string()), src, dst, since, lines=lines)
    merged.self_loops, merged.duplicates = self_loops, duplicates
    return merged
