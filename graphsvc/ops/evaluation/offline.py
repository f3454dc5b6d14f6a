"""Offline evaluation of "people you may know" against classic link-prediction baselines.

The protocol, and why each part of it is so:

- Held out: 10% of the follows; the newest 10% when the file has times (the future is what a
  suggestion has to predict), else a seeded random 10%. An undirected pair is one friendship,
  held out whole. A directed file's follows are each their own fact, with times or without:
  a held-out follow whose reverse stays in training is a follow-back, a real suggestion
  (the user is shown that the other follows it), counted, and precision@10 is also given on
  the other held-out follows (the discoveries) alone.
- Training times are what `graphsvc load` gives: a timed file keeps its own times, shifted
  so that the split is "now"; an untimed file's training rows go through the loader's own
  reader, so they get its times (distinct, in file order, ending at now). The training cycle
  then sees the graph a user's worker would.
- The training graph (and, for a timed file, the interactions before the split) is loaded
  into the service's own stores, which `evaluate_seeds` wipes before every seed. An optional
  ``after_load`` hook then runs on exactly that graph (to train a ranker, say) before the
  service is asked.
- A first graph, when given, is what the service already serves when the evaluated graph
  arrives (a second community imported beside one): loaded whole before it, ids prefixed so
  they never meet, its times ending a day before the evaluated graph's first training follow,
  with ``after_load`` run on it. The service is asked once the evaluated graph's load ends
  ("service, as loaded": the ranker of the first graph serving) and again after
  ``after_load`` on the grown graph, its lists computed anew (not those cached as loaded).
  Its users are never suggested by a baseline, and one the service suggests is a miss.
- Every method suggests 10 users to each sampled user (1,000 users with held-out pairs by
  default) under one exclusion rule: the user itself and whom it already follows, nothing
  else. The baselines (random, popularity, common neighbours, Adamic-Adar, resource
  allocation, Jaccard) run with networkx on the undirected view of the training graph, over
  2-hop candidates.
- Metrics: precision@10, recall@10, MRR, NDCG@10 (binary relevance), catalog coverage and
  precision@10 on the discoveries. A seed is one draw of held-out pairs and users, and one
  draw can flip a thin margin, so the summary is the mean, sample standard deviation and
  range over seeds (1, 2, 3 by default).
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import networkx as nx
from tqdm import tqdm

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import Edges, read_edge_file, read_edge_rows
from graphsvc.ops.data.loader import load_edges
from graphsvc.ops.evaluation.defaults import DEFAULT_SEEDS, DEFAULT_USERS

K = 10
HOLDOUT_SHARE = 0.10
METHODS = (
    "service",
    "random",
    "popularity",
    "common neighbours",
    "Adamic-Adar",
    "resource allocation",
    "Jaccard",
)
AS_LOADED = "service, as loaded"  # a row of its own when a first graph is loaded
FIRST_PREFIX = "first."  # before every id of the first graph
FIRST_GAP_US = 24 * 3600 * 1_000_000  # between the first graph's newest follow and the other's
NEIGHBOURHOOD = ("common neighbours", "Adamic-Adar", "resource allocation")  # the lift's bar
METRICS = {
    "precision": "precision@10",
    "recall": "recall@10",
    "mrr": "MRR",
    "ndcg": "NDCG@10",
    "coverage": "coverage",
    "discovery": "p@10 discoveries",
}


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
    """Read an edge list (and optionally interaction events); a file that cannot be read
    raises LoadError naming it, which the CLI shows as one line."""
    rows, loops = _read_rows(path)
    messages = []
    if interactions is not None:
        events, _ = _read_rows(interactions)
        messages = [(s, d, t) for s, d, t in events if t is not None]
    return Dataset(path.stem, rows, undirected, messages, loops)


def _read_rows(path: Path) -> tuple[list[tuple[str, str, int | None]], int]:
    """Rows in file order, duplicates kept (a pair is held out whole, and an interaction is
    an event each time); self-loops counted and left out; times in whole unix seconds."""
    rows = read_edge_rows(path)
    names = rows.names.to_numpy(zero_copy_only=False)
    loops = rows.src == rows.dst
    src, dst = names[rows.src[~loops]].tolist(), names[rows.dst[~loops]].tolist()
    seconds = (rows.since[~loops] // 1_000_000).tolist()
    timed = rows.timed[~loops].tolist()
    when = [s if t else None for s, t in zip(seconds, timed, strict=True)]
    return list(zip(src, dst, when, strict=True)), int(loops.sum())


Pair = tuple[str, str]


@dataclass
class Split:
    edges: Edges  # the training follows as the loader reads them (since: µs, shifted)
    held: dict[str, set[str]]  # user -> users it should be suggested
    messages: list[tuple[str, str, int]]  # training-period interactions (µs, shifted)
    split_at: int  # µs (shifted): "now" of the evaluation
    follow_backs: dict[str, set[str]]  # the held-out follows whose reverse is in training

    @property
    def train(self) -> dict[Pair, int]:
        """Directed follow edges -> since (µs): what the stores hold after the load."""
        return self.edges.edges


def unit_of(data: Dataset) -> Callable[[str, str], Pair]:
    """The unit held out, or trained on, whole. An undirected pair is one (both directions
    are the same friendship). In a directed file, each follow is its own, with times or
    without: a held-out follow whose reverse stays in training is a follow-back, a follower
    not followed back yet, which a user is shown and acts on (a real suggestion, counted and
    also scored apart: the discoveries are the other held-out follows)."""

    def unordered(src: str, dst: str) -> Pair:
        return (min(src, dst), max(src, dst))

    if data.undirected:
        return unordered
    return lambda src, dst: (src, dst)


def _first_times(data: Dataset, unit: Callable[[str, str], Pair]) -> dict[Pair, int | None]:
    """Each unit once with its earliest time: the unit, not the line, is held out."""
    first: dict[Pair, int | None] = {}
    for src, dst, t in data.rows:
        key = unit(src, dst)
        if key not in first or (t is not None and (first[key] is None or t < first[key])):
            first[key] = t
    return first


def _held_units(first: dict[Pair, int | None], timed: bool, seed: int) -> tuple[set[Pair], int]:
    """The held-out units, and the split's time in unix seconds (0 for an untimed file):
    the newest 10% when the file has times (the future is what a suggestion has to
    predict), else a seeded random 10%."""
    units = sorted(first)
    count = max(1, int(len(units) * HOLDOUT_SHARE))
    if not timed:
        return set(random.Random(seed).sample(units, count)), 0
    newest = sorted(units, key=lambda u: (first[u], u))[-count:]
    return set(newest), first[newest[0]] or 0


def as_loaded(rows: Iterable[Pair], *, undirected: bool, now_us: int) -> Edges:
    """Untimed rows as `graphsvc load` reads them: written as a file of their own and read
    by the loader's reader, so they get exactly its times (distinct, increasing in file
    order, ending at ``now_us``) and its merging, not a second copy of the rule. The header
    line keeps a first row whose follower is called ``src`` or ``u`` from being taken for one."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "training.txt"
        path.write_text("src dst\n" + "".join(f"{src} {dst}\n" for src, dst in rows))
        return read_edge_file(path, undirected=undirected, now=now_us)


def follow_backs(held: dict[str, set[str]], train: Iterable[Pair]) -> dict[str, set[str]]:
    """The held-out follows whose reverse is in training: answering a follower is easy, and
    a share of them can carry a method's precision without its finding anyone new."""
    trained = set(train)
    found: dict[str, set[str]] = {}
    for user, wanted in held.items():
        back = {other for other in wanted if (other, user) in trained}
        if back:
            found[user] = back
    return found


def split(data: Dataset, seed: int, now_us: int) -> Split:
    """Hold out 10% of the units (``unit_of``) and load the rest as a user would: a timed
    file keeps its own times, shifted so that the split is ``now_us``; an untimed one gets
    the loader's file-order times ending at ``now_us``."""
    unit = unit_of(data)
    first = _first_times(data, unit)
    held_units, split_s = _held_units(first, data.timed, seed)
    offset = now_us - split_s * 1_000_000
    held: dict[str, set[str]] = {}
    kept: list[tuple[str, str, int | None]] = []
    for src, dst, t in data.rows:
        if unit(src, dst) not in held_units:
            kept.append((src, dst, t))
            continue
        held.setdefault(src, set()).add(dst)
        if data.undirected:
            held.setdefault(dst, set()).add(src)
    if data.timed:
        shifted = ((src, dst, (t or 0) * 1_000_000 + offset) for src, dst, t in kept)
        edges = Edges.from_rows(shifted, undirected=data.undirected)
    else:
        pairs = ((src, dst) for src, dst, _ in kept)
        edges = as_loaded(pairs, undirected=data.undirected, now_us=now_us)
    messages = []
    if data.timed and data.messages:
        messages = [(s, d, t * 1_000_000 + offset) for s, d, t in data.messages if t < split_s]
    return Split(edges, held, messages, now_us, follow_backs(held, edges.edges))


@dataclass
class FirstGraph:
    """A graph the service already holds, and has trained on, when the evaluated one is
    loaded beside it; read once, as `graphsvc load --prefix` reads it, and placed in time
    per seed (``before``)."""

    name: str
    edges: Edges
    undirected: bool

    @property
    def label(self) -> str:
        return f"{self.name}, {'undirected' if self.undirected else 'directed'}"

    def before(self, cut: Split) -> Split:
        """The whole graph as a split of its own (nothing held out), its times shifted
        together so that the newest is a day before the evaluated training's oldest: an
        untimed file keeps the loader's file-order times, a timed one its own spacing, and
        either is older than anything of the evaluated graph."""
        train = cut.edges.since
        end = (int(train.min()) if len(train) else cut.split_at) - FIRST_GAP_US
        since = self.edges.since
        shifted = since + (end - int(since.max())) if len(since) else since
        return Split(replace(self.edges, since=shifted, _pairs=None), {}, [], end, {})


def read_first(path: Path, *, undirected: bool) -> FirstGraph:
    """The first graph's file, every id prefixed with ``FIRST_PREFIX``; a file that cannot
    be read raises LoadError naming it."""
    edges = read_edge_file(path, undirected=undirected, prefix=FIRST_PREFIX)
    return FirstGraph(path.stem, edges, undirected)


def shared_ids(first: FirstGraph, data: Dataset) -> list[str]:
    """Ids both graphs use (an evaluated id that happens to carry the prefix): a first
    graph's user among the evaluated ones would be scored as one of them."""
    evaluated = {user for src, dst, _ in data.rows for user in (src, dst)}
    return sorted(evaluated.intersection(first.edges.users))


# -- metrics -----------------------------------------------------------------------------------


@dataclass
class Scores:
    precision: float
    recall: float
    mrr: float
    ndcg: float
    coverage: float
    discovery: float  # precision@10 with follow-backs not counted as hits


def ndcg_at_k(top: Sequence[str], truth: set[str], k: int = K) -> float:
    """NDCG@k with binary relevance: each hit discounted by log2(rank + 1), over the best a
    list of k can do (min(k, |truth|) hits at the top), so a perfect list scores 1 even for
    a user with more than k held-out follows."""
    dcg = sum(1 / math.log2(n + 2) for n, v in enumerate(top[:k]) if v in truth)
    ideal = sum(1 / math.log2(n + 2) for n in range(min(k, len(truth))))
    return dcg / ideal if ideal else 0.0


def discovery_precision(
    recommended: dict[str, list[str]], held: dict[str, set[str]], backs: dict[str, set[str]]
) -> float:
    """precision@10 on the held-out discoveries alone: the same lists, a hit counted only
    when it is not a follow-back, averaged over the users with a discovery to make (one
    whose held-out follows are all follow-backs has none)."""
    users = [u for u in recommended if held[u] - backs.get(u, set())]
    hits = sum(len(set(recommended[u][:K]) & (held[u] - backs.get(u, set()))) / K for u in users)
    return hits / max(len(users), 1)


def score(
    recommended: dict[str, list[str]],
    held: dict[str, set[str]],
    catalog: int,
    backs: dict[str, set[str]],
) -> Scores:
    """precision@10, recall@10, mean reciprocal rank of the first hit, NDCG@10, averaged
    over users; catalog coverage (share of the graph's users suggested to anyone); and
    precision@10 on the discoveries (``backs``: each user's held-out follow-backs)."""
    users = list(recommended)
    precision = recall = mrr = ndcg = 0.0
    for user in users:
        top, truth = recommended[user][:K], held[user]
        hits = [n for n, v in enumerate(top) if v in truth]
        precision += len(hits) / K
        recall += len(hits) / len(truth)
        mrr += 1 / (hits[0] + 1) if hits else 0.0
        ndcg += ndcg_at_k(top, truth)
    shown = {v for top in recommended.values() for v in top[:K]}
    n = max(len(users), 1)
    coverage = len(shown) / max(catalog, 1)
    discovery = discovery_precision(recommended, held, backs)
    return Scores(precision / n, recall / n, mrr / n, ndcg / n, coverage, discovery)


# -- the baselines -----------------------------------------------------------------------------


def admissible(suggested: Iterable[str], excluded: set[str]) -> list[str]:
    """The exclusion every method is held to, the service included: drop the user itself,
    whom it already follows, and repeats (a repeated hit would count twice)."""
    seen = set(excluded)
    kept = []
    for user in suggested:
        if user not in seen:
            seen.add(user)
            kept.append(user)
    return kept


class Baselines:
    """The classic link predictors, with networkx, on the undirected view of the training
    graph over 2-hop candidates; exclusion uses the directed graph (what the user follows)."""

    def __init__(self, train: Iterable[tuple[str, str]], seed: int) -> None:
        self.directed = nx.DiGraph(list(train))
        self.graph = self.directed.to_undirected()
        self.rng = random.Random(seed)
        self.nodes = sorted(self.graph.nodes)
        self.popular = sorted(self.nodes, key=lambda v: (-self.directed.in_degree(v), v))

    def excluded(self, user: str) -> set[str]:
        """The user and whom it follows in training: all that any method may not suggest."""
        return {user, *self.directed.successors(user)} if user in self.directed else {user}

    def _candidates(self, user: str, excluded: set[str]) -> list[str]:
        if user not in self.graph:
            return []
        near = set(self.graph[user])
        for neighbour in list(near):
            near.update(self.graph[neighbour])
        return sorted(near - excluded)

    def _scores(self, method: str, pairs: list[tuple[str, str]]) -> Iterable[tuple[str, float]]:
        graph = self.graph
        if method == "common neighbours":
            return ((v, len(list(nx.common_neighbors(graph, u, v)))) for u, v in pairs)
        predictors = {
            "Adamic-Adar": nx.adamic_adar_index,
            "resource allocation": nx.resource_allocation_index,
            "Jaccard": nx.jaccard_coefficient,
        }
        if method not in predictors:
            raise ValueError(method)
        return ((v, s) for _, v, s in predictors[method](graph, pairs))

    def recommend(self, method: str, user: str) -> list[str]:
        """Up to K users by ``method``; ties broken by id, zero scores never suggested."""
        excluded = self.excluded(user)
        if method == "random":
            pool = self.rng.sample(self.nodes, min(len(self.nodes), K + len(excluded)))
            return admissible(pool, excluded)[:K]
        if method == "popularity":
            return admissible(self.popular[: K + len(excluded)], excluded)[:K]
        pairs = [(user, c) for c in self._candidates(user, excluded)]
        if not pairs:
            return []
        scored = sorted(self._scores(method, pairs), key=lambda item: (-item[1], item[0]))
        return [v for v, s in scored if s > 0][:K]


# -- one seed ----------------------------------------------------------------------------------


AfterLoad = Callable[[Services, Split], Awaitable[str | None]]


@dataclass
class SeedResult:
    seed: int
    users: int  # sampled (fewer than asked when fewer users have held-out pairs)
    scores: dict[str, Scores]
    held_out: int  # follows held out
    follow_backs: int  # of them, those whose reverse is in training


async def load_split(services: Services, cut: Split, progress: bool) -> None:
    await load_edges(services, cut.edges, progress=progress)
    if cut.messages:
        weight = services.settings.interactions.interaction_weights["message"]
        events = [(s, d, weight, t) for s, d, t in cut.messages]
        for start in range(0, len(events), 1_000):
            await services.interactions.record_raw(events[start : start + 1_000])
        await services.background.interaction_flusher.flush_all()


def sample_users(cut: Split, seed: int, users: int) -> list[str]:
    """Users with held-out pairs who are in the training graph (the others are cold starts,
    which no method here can answer), a seeded sample of ``users`` of them."""
    known = {u for pair in cut.train for u in pair}
    eligible = sorted(u for u in cut.held if u in known)
    return sorted(random.Random(seed).sample(eligible, min(users, len(eligible))))


async def _ask_service(
    services: Services, sample: list[str], progress: bool
) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    with tqdm(total=len(sample), desc="service", unit="user", disable=not progress) as bar:
        for start in range(0, len(sample), 8):
            chunk = sample[start : start + 8]
            lists = await asyncio.gather(*(services.suggestions.suggestions(u, K) for u in chunk))
            for user, suggestions in zip(chunk, lists, strict=True):
                found[user] = [s.user_id for s in suggestions]
            bar.update(len(chunk))
    return found


def count_of(by_user: dict[str, set[str]]) -> int:
    return sum(len(others) for others in by_user.values())


def describe(data: Dataset, cut: Split, seed: int) -> str:
    backs = count_of(cut.follow_backs)
    return (
        f"{data.name}, seed {seed}: {len(cut.train):,} training follows, "
        f"{count_of(cut.held):,} held out"
        + (f" ({backs:,} of them follow-backs)" if backs else "")
        + (f", {len(cut.messages):,} training interactions" if cut.messages else "")
        + (f", {data.self_loops} self-loops skipped" if data.self_loops else "")
    )


async def _after_load(
    services: Services, cut: Split, after_load: AfterLoad | None, say: Callable[[str], None]
) -> None:
    if after_load is not None and (note := await after_load(services, cut)):
        say(note)


async def _load_first(
    services: Services,
    first: FirstGraph,
    cut: Split,
    progress: bool,
    say: Callable[[str], None],
    after_load: AfterLoad | None,
) -> None:
    """The first graph whole, older than the evaluated one, then ``after_load`` on it: what
    it leaves (a ranker trained on the first graph) is what serves as the other arrives."""
    older = first.before(cut)
    await load_edges(services, older.edges, progress=progress)
    say(
        f"first: {first.label}, {older.edges.count:,} follows between "
        f"{len(older.edges.ids):,} users, loaded before the training graph"
    )
    await _after_load(services, older, after_load, say)


def _say_dropped(
    service: str,
    raw: dict[str, list[str]],
    kept: dict[str, list[str]],
    baselines: Baselines | None,
    say: Callable[[str], None],
) -> None:
    """What the exclusion dropped from the service's lists and, given ``baselines`` (a first
    graph is loaded), how many it suggested from outside the training graph."""
    dropped = sum(len(raw[u]) - len(kept[u]) for u in raw)
    if dropped:
        say(f"{service} suggested {dropped} followed or repeated users (dropped)")
    if baselines is not None:
        outside = sum(v not in baselines.graph for top in kept.values() for v in top[:K])
        say(f"{service} suggested {outside} users outside the training graph (misses)")


def scored(
    raw: dict[str, dict[str, list[str]]],
    cut: Split,
    baselines: Baselines,
    seed: int,
    say: Callable[[str], None],
) -> dict[str, Scores]:
    """Every method held to the same exclusion and scored; what the service suggested that
    the exclusion drops is said and, with a first graph loaded (an ``AS_LOADED`` row), how
    many of its suggestions are that graph's users: misses, kept in its lists."""
    scores = {}
    held = {u: cut.held[u] for u in raw["service"]}
    for method, by_user in raw.items():
        kept = {u: admissible(top, baselines.excluded(u)) for u, top in by_user.items()}
        if method in (AS_LOADED, "service"):
            named = f"seed {seed}: the {method.replace(',', '')}"
            _say_dropped(named, by_user, kept, baselines if AS_LOADED in raw else None, say)
        scores[method] = score(kept, held, len(baselines.nodes), cut.follow_backs)
    return scores


async def evaluate(
    services: Services,
    data: Dataset,
    *,
    seed: int = 1,
    users: int = DEFAULT_USERS,
    progress: bool = True,
    say: Callable[[str], None] = print,
    after_load: AfterLoad | None = None,
    first: FirstGraph | None = None,
) -> SeedResult:
    """One seed: split, load the training graph into the service's (empty) stores, await
    ``after_load`` (its line, if any, is said), then ask every method about the same sampled
    users under the same exclusion and score them. With a ``first`` graph, it is loaded
    (and ``after_load`` run on it) before, and the service is also asked as loaded."""
    if data.messages and not data.timed:
        say(f"{data.name}: the edges have no times, so the interactions are not used")
    cut = split(data, seed, time.time_ns() // 1_000)
    say(describe(data, cut, seed))
    if first is not None:
        await _load_first(services, first, cut, progress, say, after_load)
    await load_split(services, cut, progress)
    sample = sample_users(cut, seed, users)
    raw = {}
    if first is not None:
        raw[AS_LOADED] = await _ask_service(services, sample, progress)
    await _after_load(services, cut, after_load, say)
    if first is not None:  # asked again: not the lists the ranker before ``after_load`` cached
        await services.suggestions.cache.invalidate(*sample)
    baselines = Baselines(cut.train, seed)
    raw["service"] = await _ask_service(services, sample, progress)
    for method in METHODS[1:]:
        bar = tqdm(sample, desc=method, unit="user", disable=not progress)
        raw[method] = {user: baselines.recommend(method, user) for user in bar}
    scores = scored(raw, cut, baselines, seed, say)
    return SeedResult(seed, len(sample), scores, count_of(cut.held), count_of(cut.follow_backs))


# -- over seeds --------------------------------------------------------------------------------


@dataclass
class Spread:
    mean: float
    std: float | None  # sample standard deviation; None from a single seed
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        std = statistics.stdev(values) if len(values) > 1 else None
        return cls(statistics.fmean(values), std, min(values), max(values))


@dataclass
class Lift:
    """The service's precision@10 over the best neighbourhood baseline's (CN, AA, RA). The
    baseline is chosen once, on its mean over seeds, and every seed is compared with that
    one, so the per-seed ratios and the ratio of the means measure the same thing."""

    baseline: str  # the best of them on mean precision@10
    ratio: float | None  # of the means; None when the baseline scored 0
    per_seed: list[float | None]  # each seed's service over the same baseline


def _lift(
    runs: list[SeedResult], spread: dict[str, dict[str, Spread]], service: str = "service"
) -> Lift:
    def ratio(service: float, baseline: float) -> float | None:
        return service / baseline if baseline else None

    best = max(NEIGHBOURHOOD, key=lambda m: spread[m]["precision"].mean)
    per_seed = [ratio(r.scores[service].precision, r.scores[best].precision) for r in runs]
    overall = ratio(spread[service]["precision"].mean, spread[best]["precision"].mean)
    return Lift(best, overall, per_seed)


@dataclass
class Summary:
    dataset: str
    undirected: bool
    users: int  # asked for per seed
    runs: list[SeedResult]
    spread: dict[str, dict[str, Spread]]  # method -> metric -> over seeds
    lift: Lift
    first: str | None = None  # the graph loaded first, when one was
    lift_as_loaded: Lift | None = None  # the service as loaded over the same baseline

    def _first(self) -> dict[str, object]:
        if self.lift_as_loaded is None:
            return {}
        return {"first": self.first, "lift_as_loaded": asdict(self.lift_as_loaded)}

    def as_json(self) -> dict[str, object]:
        """Plain JSON values (no NaN or infinity): per seed, the summary, and the lift."""
        return {
            "dataset": self.dataset,
            "undirected": self.undirected,
            "k": K,
            "users": self.users,
            "seeds": [run.seed for run in self.runs],
            "per_seed": [
                {
                    "seed": r.seed,
                    "users": r.users,
                    "held_out": r.held_out,
                    "follow_backs": r.follow_backs,
                    "scores": {m: asdict(s) for m, s in r.scores.items()},
                }
                for r in self.runs
            ],
            "summary": {
                m: {metric: asdict(s) for metric, s in by.items()} for m, by in self.spread.items()
            },
            "lift": asdict(self.lift),
        } | self._first()


def summarize(
    data: Dataset, users: int, runs: list[SeedResult], first: str | None = None
) -> Summary:
    """Each method's metrics over the seeds: mean, sample standard deviation, min-max; the
    service as loaded among them when the runs have it (``first`` names the graph)."""
    methods = [m for m in (AS_LOADED, *METHODS) if m in runs[0].scores]
    spread = {
        m: {metric: Spread.of([getattr(r.scores[m], metric) for r in runs]) for metric in METRICS}
        for m in methods
    }
    lift = _lift(runs, spread)
    if AS_LOADED not in spread:
        return Summary(data.name, data.undirected, users, runs, spread, lift)
    loaded = _lift(runs, spread, AS_LOADED)
    return Summary(data.name, data.undirected, users, runs, spread, lift, first, loaded)


async def reset(services: Services) -> None:
    """Empty Neo4j and Redis and put the schema back. Deletes everything: only ever for the
    evaluation's own servers (`graphsvc ranker eval` points ``services`` at them)."""
    await services.maintenance.wipe()


async def evaluate_seeds(
    services: Services,
    data: Dataset,
    *,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    users: int = DEFAULT_USERS,
    progress: bool = True,
    say: Callable[[str], None] = print,
    after_load: AfterLoad | None = None,
    first: FirstGraph | None = None,
) -> Summary:
    """`evaluate` once per seed, each on freshly wiped stores (a seed's held-out pairs are
    another seed's training pairs, so nothing may carry over), then the spread over seeds.
    WIPES the stores of ``services``; a ``first`` graph is loaded again in every seed."""
    if not seeds:
        raise ValueError("evaluate_seeds needs at least one seed")
    runs = []
    for seed in seeds:
        await reset(services)
        runs.append(
            await evaluate(
                services,
                data,
                seed=seed,
                users=users,
                progress=progress,
                say=say,
                after_load=after_load,
                first=first,
            )
        )
    return summarize(data, users, runs, first.label if first else None)


# -- the report --------------------------------------------------------------------------------


def _times(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def _cell(spread: Spread) -> str:
    std = "-" if spread.std is None else f"{spread.std:.4f}"
    return f"{spread.mean:.4f} ± {std:<6}"


def _lift_line(service: str, lift: Lift) -> str:
    per_seed = ", ".join(_times(r) for r in lift.per_seed)
    return (
        f"{service} / best of (CN, AA, RA) precision@10: {_times(lift.ratio)} "
        f"(per seed: {per_seed}; the best: {lift.baseline})"
    )


def table(summary: Summary) -> list[str]:
    """Each method's `mean ± std` per metric over the seeds, then the service's lift (as
    loaded, too, with a first graph), then how many held-out follows were follow-backs (not
    counted by `p@10 discoveries`)."""
    seeds = ", ".join(str(r.seed) for r in summary.runs)
    sampled = ", ".join(str(r.users) for r in summary.runs)
    lines = [
        f"{summary.dataset} ({'undirected' if summary.undirected else 'directed'}; "
        f"seeds {seeds}; users sampled per seed: {sampled}"
        + (f"; loaded first: {summary.first})" if summary.first else ")"),
        f"{'method':20}" + "".join(f" {label:>17}" for label in METRICS.values()),
    ]
    for method, by in summary.spread.items():
        lines.append(f"{method:20}" + "".join(f" {_cell(by[m]):>17}" for m in METRICS))
    if summary.lift_as_loaded is not None:
        lines.append(_lift_line(AS_LOADED, summary.lift_as_loaded))
    lines.append(_lift_line("service", summary.lift))
    backs = ", ".join(f"{r.follow_backs:,} of {r.held_out:,}" for r in summary.runs)
    lines.append(f"held-out follow-backs (the reverse follow in training) per seed: {backs}")
    return lines
