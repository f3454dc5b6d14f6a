"""The textbook heuristics a ranker must beat, computed exactly: common neighbours, Adamic-Adar
and resource allocation over the whole training view, not over the service's capped pool.

Why exactly: the service gathers a bounded pool (so many followings expanded, so many edges
read from each), and a heuristic re-ranking that pool is not the heuristic a user would
compute; a model that beats the capped version can still lose to the real one. These are the
definitions an evaluation uses: the undirected view of the follows (a neighbour is someone the
user follows or who follows the user), the user and whom it follows left out, ties by id, zero
scores never suggested.

The training view of a user is the graph as read (before the cut, for the newest holdout)
less the user's own held-out follows (and the other half of a held-out friendship): an
intermediary's degree is unchanged by them, so one sparse product per user gives its scores.
The graph is read whole, in pages a paced training steps through, when it has at most
RANKER_VALIDATION_MAX_EDGES follows; a larger one is judged against the service's own
heuristics only, and the training says so.

The one module of the service beside the fit that needs numpy and SciPy: the training imports
it when it validates, so the API processes never load them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.concurrency.pace import Pace
from graphsvc.domain.ranker.validation import HUB_SHARE, band
from graphsvc.workers.ranker.examples import Example, K

HEURISTICS = ("common neighbours", "Adamic-Adar", "resource allocation")
PAGE = 20_000  # follows read at once
DIGITS = 9


async def read(store: SuggestionStore, before: int | None, pace: Pace) -> TrainingGraph:
    """The follows made before ``before`` (all of them: None), a page at a time, each a step
    of ``pace``."""
    edges: list[tuple[str, str]] = []
    after: tuple[int, str, str] | None = None
    while True:
        async with pace.step():
            page = await store.follows_page(before, after, PAGE)
        edges += [(src, dst) for src, dst, _ in page]
        if len(page) < PAGE:
            return TrainingGraph.of(edges)
        src, dst, since = page[-1]
        after = (since, src, dst)


def annotate(graph: TrainingGraph, examples: Sequence[Example]) -> None:
    """Each example's band and exact top K, in its own view."""
    for example in examples:
        example.band = graph.band(example.user, example.hidden)
        example.exact = graph.tops(example.user, example.hidden, example.hidden_back)


@dataclass
class TrainingGraph:
    ids: list[str]  # sorted: an index order is an id order (ties by id)
    index: dict[str, int]
    follows: sparse.csr_matrix  # directed, row follows column
    followed_by: sparse.csr_matrix  # its transpose: row is followed by column
    neighbours: sparse.csr_matrix  # undirected, binary
    weights: dict[str, np.ndarray]  # per heuristic, each intermediary's weight
    followers: np.ndarray  # per user
    hub_floor: float  # followers from which an account is a hub

    @classmethod
    def of(cls, edges: Iterable[tuple[str, str]]) -> TrainingGraph:
        pairs = list(edges)
        ids = sorted({user for pair in pairs for user in pair})
        index = {user: n for n, user in enumerate(ids)}
        size = len(ids)
        src = np.fromiter((index[a] for a, _ in pairs), np.int64, len(pairs))
        dst = np.fromiter((index[b] for _, b in pairs), np.int64, len(pairs))
        follows = sparse.csr_matrix((np.ones(len(pairs)), (src, dst)), shape=(size, size))
        follows.data[:] = 1.0  # a repeated pair is one follow
        both = (follows + follows.T).tocsr()
        both.data[:] = 1.0
        degree = np.asarray(both.sum(axis=1)).ravel()
        weights = {
            "common neighbours": np.ones(size),
            "Adamic-Adar": 1.0 / np.log(np.maximum(degree, 2.0)),
            "resource allocation": 1.0 / np.maximum(degree, 1.0),
        }
        followers = np.asarray(follows.sum(axis=0)).ravel()
        floor = float(np.quantile(followers, 1 - HUB_SHARE)) if size else 0.0
        return cls(
            ids, index, follows, follows.T.tocsr(), both, weights, followers, max(floor, 1.0)
        )

    def _ids(self, users: Sequence[str]) -> set[int]:
        return {self.index[u] for u in users if u in self.index}

    def _follows(self, n: int, hidden: Sequence[str]) -> list[int]:
        """Whom user ``n`` follows in its view."""
        row = self.follows.indices[self.follows.indptr[n] : self.follows.indptr[n + 1]]
        hid = self._ids(hidden)
        return [int(m) for m in row if m not in hid]

    def _followers(self, n: int, hidden_back: Sequence[str]) -> list[int]:
        """Who follows user ``n`` in its view."""
        by = self.followed_by
        row = by.indices[by.indptr[n] : by.indptr[n + 1]]
        back = self._ids(hidden_back)
        return [int(m) for m in row if m not in back]

    def tops(
        self, user: str, hidden: Sequence[str] = (), hidden_back: Sequence[str] = ()
    ) -> dict[str, list[str]]:
        """Each heuristic's exact top K for the user in its view."""
        if user not in self.index:
            return {name: [] for name in HEURISTICS}
        n = self.index[user]
        follows = self._follows(n, hidden)
        near = sorted(set(follows) | set(self._followers(n, hidden_back)))
        if not near:
            return {name: [] for name in HEURISTICS}
        excluded = np.array([n, *follows], dtype=np.int64)
        paths = self.neighbours[near].T  # candidate x intermediary
        found = {}
        for name in HEURISTICS:
            # rounded: two equal sums added in another order are still a tie, broken by id
            scores = np.round(np.asarray(paths @ self.weights[name][near]).ravel(), DIGITS)
            scores[excluded] = 0.0
            candidates = np.flatnonzero(scores > 0)
            # best first, ties by index (the ids are sorted): lexsort's last key is the first
            order = np.lexsort((candidates, -scores[candidates]))[:K]
            found[name] = [self.ids[candidates[i]] for i in order]
        return found

    def band(self, user: str, hidden: Sequence[str] = ()) -> str:
        """The user's band in its view (``domain/ranker/validation.band``)."""
        if user not in self.index:
            return band(0, False)
        follows = self._follows(self.index[user], hidden)
        hub = bool(follows) and float(self.followers[follows].max()) >= self.hub_floor
        return band(len(follows), hub)
