"""Offline evaluation of "people you may know" against classic link-prediction baselines.

Holds out 10% of a graph's edges (the newest 10% when the file has times, else a seeded random
10%), loads the rest into the service's Neo4j and Redis (its own servers: `graphsvc eval-pymk`
wipes them per run), asks the service for 10 suggestions for a seeded sample of users with
held-out edges, and scores the held-out edges they recover. The baselines (random, popularity,
common neighbours, Adamic-Adar, Jaccard) are computed with networkx on the same training graph,
on its undirected view, and exclude what the user already follows, as the service does.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
from tqdm import tqdm

from graphsvc.bootstrap import Services
from graphsvc.ops.edge_files import EdgeSet
from graphsvc.ops.loader import load_edges

K = 10
HOLDOUT_SHARE = 0.10
METHODS = ("service", "random", "popularity", "common neighbours", "Adamic-Adar", "Jaccard")


@dataclass
class Dataset:
    """A graph file as (src, dst, unix time or None) rows, plus interaction events."""

    name: str
    rows: list[tuple[str, str, int | None]]
    undirected: bool
    messages: list[tuple[str, str, int]] = field(default_factory=list)
    self_loops: int = 0

    @property
    def timed(self) -> bool:
        return bool(self.rows) and all(t is not None for _, _, t in self.rows)


def read_dataset(path: Path, *, undirected: bool, interactions: Path | None = None) -> Dataset:
    rows, loops = _read_rows(path)
    messages = []
    if interactions is not None:
        events, _ = _read_rows(interactions)
        messages = [(s, d, t) for s, d, t in events if t is not None]
    return Dataset(path.stem, rows, undirected, messages, loops)


def _read_rows(path: Path) -> tuple[list[tuple[str, str, int | None]], int]:
    rows: list[tuple[str, str, int | None]] = []
    loops = 0
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            src, dst = parts[0], parts[1]
            if src == dst:
                loops += 1
                continue
            rows.append((src, dst, int(float(parts[2])) if len(parts) > 2 else None))
    return rows, loops


@dataclass
class Split:
    train: dict[tuple[str, str], int]  # directed follow edges -> since (µs, shifted)
    held: dict[str, set[str]]  # user -> users it should be suggested
    messages: list[tuple[str, str, int]]  # training-period interactions (µs, shifted)
    split_at: int  # µs (shifted): "now" of the evaluation


def split(data: Dataset, seed: int, now_us: int) -> Split:
    """Hold out the newest (or a random) 10% of the edges; shift times so the split is now."""
    first: dict[tuple[str, str], int | None] = {}
    for src, dst, t in data.rows:
        key = (min(src, dst), max(src, dst)) if data.undirected else (src, dst)
        if key not in first or (t is not None and (first[key] is None or t < first[key])):
            first[key] = t
    pairs = sorted(first)
    count = max(1, int(len(pairs) * HOLDOUT_SHARE))
    if data.timed:
        ordered = sorted(pairs, key=lambda p: (first[p], p))
        held_pairs, train_pairs = ordered[-count:], ordered[:-count]
        split_s = first[held_pairs[0]]
        offset = now_us - split_s * 1_000_000
        since = {p: first[p] * 1_000_000 + offset for p in train_pairs}
    else:
        rng = random.Random(seed)
        held_pairs = rng.sample(pairs, count)
        chosen = set(held_pairs)
        train_pairs = [p for p in pairs if p not in chosen]
        since = {p: now_us - (len(train_pairs) - n) * 1_000 for n, p in enumerate(train_pairs)}
        offset = 0
    train: dict[tuple[str, str], int] = {}
    for pair in train_pairs:
        train[pair] = since[pair]
        if data.undirected:
            train[(pair[1], pair[0])] = since[pair]
    held: dict[str, set[str]] = {}
    for a, b in held_pairs:
        held.setdefault(a, set()).add(b)
        if data.undirected:
            held.setdefault(b, set()).add(a)
    messages = []
    if data.timed and data.messages:
        split_s = min(first[p] for p in held_pairs)
        messages = [(s, d, t * 1_000_000 + offset) for s, d, t in data.messages if t < split_s]
    return Split(train, held, messages, now_us)


@dataclass
class Scores:
    precision: float
    recall: float
    mrr: float
    coverage: float


def score(recommended: dict[str, list[str]], held: dict[str, set[str]], catalog: int) -> Scores:
    """precision@10, recall@10, mean reciprocal rank of the first hit, catalog coverage
    (share of the graph's users suggested to anyone)."""
    users = list(recommended)
    precision = recall = mrr = 0.0
    for user in users:
        top, truth = recommended[user][:K], held[user]
        hits = [n for n, v in enumerate(top) if v in truth]
        precision += len(hits) / K
        recall += len(hits) / len(truth)
        mrr += 1 / (hits[0] + 1) if hits else 0.0
    shown = {v for top in recommended.values() for v in top[:K]}
    n = max(len(users), 1)
    return Scores(precision / n, recall / n, mrr / n, len(shown) / max(catalog, 1))


class Baselines:
    """The classic link predictors, with networkx, on the training graph."""

    def __init__(self, train: Iterable[tuple[str, str]], seed: int) -> None:
        self.directed = nx.DiGraph(list(train))
        self.graph = self.directed.to_undirected()
        self.rng = random.Random(seed)
        self.nodes = sorted(self.graph.nodes)
        self.popular = sorted(self.nodes, key=lambda v: (-self.directed.in_degree(v), v))

    def _excluded(self, user: str) -> set[str]:
        return {user, *self.directed.successors(user)} if user in self.directed else {user}

    def _candidates(self, user: str) -> list[str]:
        if user not in self.graph:
            return []
        near = set(self.graph[user])
        for neighbour in list(near):
            near.update(self.graph[neighbour])
        return sorted(near - self._excluded(user))

    @staticmethod
    def _top(scored: Iterable[tuple[str, float]]) -> list[str]:
        return [v for v, s in sorted(scored, key=lambda item: (-item[1], item[0])) if s > 0][:K]

    def recommend(self, method: str, user: str) -> list[str]:
        excluded = self._excluded(user)
        if method == "random":
            pool = self.rng.sample(self.nodes, min(len(self.nodes), 4 * K + 50))
            return [v for v in pool if v not in excluded][:K]
        if method == "popularity":
            return [v for v in self.popular[: K + len(excluded)] if v not in excluded][:K]
        pairs = [(user, c) for c in self._candidates(user)]
        if not pairs:
            return []
        if method == "common neighbours":
            return self._top(
                (v, len(list(nx.common_neighbors(self.graph, u, v)))) for u, v in pairs
            )
        if method == "Adamic-Adar":
            return self._top((v, s) for _, v, s in nx.adamic_adar_index(self.graph, pairs))
        if method == "Jaccard":
            return self._top((v, s) for _, v, s in nx.jaccard_coefficient(self.graph, pairs))
        raise ValueError(method)


async def evaluate(
    services: Services,
    data: Dataset,
    *,
    seed: int = 1,
    users: int = 500,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> tuple[dict[str, Scores], int]:
    """Load the training graph into the (empty) service, then score every method; returns
    the scores and how many users were sampled."""
    now_us = time.time_ns() // 1_000
    if data.messages and not data.timed:
        say(f"{data.name}: the edges have no times, so the interactions are not used")
    cut = split(data, seed, now_us)
    edges = EdgeSet(edges=dict(cut.train))
    say(
        f"{data.name}: {len(cut.train):,} training follows, "
        f"{sum(len(v) for v in cut.held.values()):,} held out"
        + (f", {len(cut.messages):,} training interactions" if cut.messages else "")
        + (f", {data.self_loops} self-loops skipped" if data.self_loops else "")
    )
    await load_edges(services, edges, progress=progress)
    if cut.messages:
        weight = services.settings.interaction_weights["message"]
        events = [(s, d, weight, t) for s, d, t in cut.messages]
        for start in range(0, len(events), 1_000):
            await services.interactions.record_raw(events[start : start + 1_000])
        await services.interactions.flush_all()
    known = {u for pair in cut.train for u in pair}
    candidates = sorted(u for u in cut.held if u in known)
    sample = sorted(random.Random(seed).sample(candidates, min(users, len(candidates))))
    held = {u: cut.held[u] for u in sample}
    recommended: dict[str, dict[str, list[str]]] = {m: {} for m in METHODS}
    with tqdm(total=len(sample), desc="service", unit="user", disable=not progress) as bar:
        for start in range(0, len(sample), 8):
            chunk = sample[start : start + 8]
            found = await asyncio.gather(*(services.suggestions.suggestions(u, K) for u in chunk))
            for user, suggestions in zip(chunk, found, strict=True):
                recommended["service"][user] = [s.user_id for s in suggestions]
            bar.update(len(chunk))
    baselines = Baselines(cut.train, seed)
    for method in METHODS[1:]:
        for user in tqdm(sample, desc=method, unit="user", disable=not progress):
            recommended[method][user] = baselines.recommend(method, user)
    catalog = len(known)
    return {m: score(recommended[m], held, catalog) for m in METHODS}, len(sample)


def table(name: str, results: dict[str, Scores], users: int) -> list[str]:
    lines = [
        f"{name} ({users} users sampled)",
        f"{'method':20} {'precision@10':>12} {'recall@10':>10} {'MRR':>8} {'coverage':>9}",
    ]
    for method, s in results.items():
        lines.append(
            f"{method:20} {s.precision:12.4f} {s.recall:10.4f} {s.mrr:8.4f} {s.coverage:9.4f}"
        )
    aa = results["Adamic-Adar"].precision
    lift = (results["service"].precision / aa - 1) if aa else float("inf")
    lines.append(f"service vs Adamic-Adar precision@10: {lift:+.1%}")
    return lines
