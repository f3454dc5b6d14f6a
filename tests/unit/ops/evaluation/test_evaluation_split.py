"""The evaluation's split: what is held out (the newest tenth of a timed file, a seeded random
tenth of an untimed one, a friendship never split across the sides), the training graph as
`graphsvc load` would give it (an untimed file's times in file order), and the follow-backs
among the held-out follows, with precision counted on the discoveries alone; and a first graph
loaded before the evaluated one, prefixed and older."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.evaluation.offline import (
    FIRST_GAP_US,
    FIRST_PREFIX,
    Dataset,
    discovery_precision,
    read_first,
    shared_ids,
    split,
)

NOW = 1_800_000_000_000_000
SECOND = 1_000_000


def _held(by_user: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(u, v) for u, vs in by_user.items() for v in vs}


def test_timed_split_holds_out_the_newest_tenth_and_shifts_time() -> None:
    rows = [(f"u{n % 7}", f"v{n}", 1_000 + n) for n in range(50)]
    data = Dataset("t", rows, undirected=False, messages=[("u1", "v3", 1_020), ("u1", "v9", 1_047)])
    cut = split(data, seed=1, now_us=NOW)
    held = _held(cut.held)
    assert held == {(f"u{n % 7}", f"v{n}") for n in range(45, 50)}  # the newest 5 of 50
    assert len(cut.train) == 45 and not held & set(cut.train)
    assert cut.train[("u0", "v0")] == NOW - 45 * SECOND  # its own time, shifted: split is now
    assert max(cut.train.values()) < NOW  # training is all in the past
    assert cut.messages == [("u1", "v3", NOW - 25 * SECOND)]  # only before the split


def test_untimed_undirected_split_is_seeded_and_holds_out_both_directions() -> None:
    rows = [(f"a{n}", f"b{n % 9}", None) for n in range(100)]
    data = Dataset("u", rows, undirected=True)
    first, again, other = (split(data, seed, NOW) for seed in (4, 4, 5))
    assert first.held == again.held and first.held != other.held
    pairs = _held(first.held)
    assert len(pairs) == 20 and all((v, u) in pairs for u, v in pairs)
    assert len(first.train) == 2 * 90


def _two_way_rows(seed: int) -> list[tuple[str, str, int | None]]:
    """Pairs written as many SNAP files write them: most on two lines, one per direction
    (so a careless split could train on one line and hold out the other)."""
    rng = random.Random(seed)
    rows: list[tuple[str, str, int | None]] = []
    for _ in range(3_000):
        a, b = rng.sample(range(300), 2)
        rows.append((f"n{a}", f"n{b}", None))
        if rng.random() < 0.7:
            rows.append((f"n{b}", f"n{a}", None))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_no_held_out_pair_leaks_into_training_in_either_direction(seed: int) -> None:
    data = Dataset("mutual", _two_way_rows(seed), undirected=True)
    lines = {(s, d) for s, d, _ in data.rows}
    assert sum((d, s) in lines for s, d in lines) > 2_000  # many pairs written both ways
    cut = split(data, seed, NOW)
    held = _held(cut.held)
    assert held and all((v, u) in held for u, v in held)
    assert not any((u, v) in cut.train or (v, u) in cut.train for u, v in held)
    every = {(a, b) for s, d in lines for a, b in ((s, d), (d, s))}
    assert set(cut.train) | held == every  # nothing lost either: the pairs are partitioned


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_directed_untimed_file_holds_out_follows_and_counts_follow_backs(seed: int) -> None:
    """Each follow is its own fact: a held-out follow whose reverse stays in training is a
    follow-back, a real suggestion, counted apart."""
    data = Dataset("friends", _two_way_rows(seed), undirected=False)
    lines = {(s, d) for s, d, _ in data.rows}
    cut = split(data, seed, NOW)
    held = _held(cut.held)
    mutual = {(s, d) for s, d in lines if (d, s) in lines}
    assert held & mutual and held - mutual  # both kinds are held out
    backs = {(s, d) for s, d in held if (d, s) in cut.train}
    assert backs and backs == {(u, v) for u, vs in cut.follow_backs.items() for v in vs}
    assert 0.05 < len(held) / len(lines) < 0.15  # a tenth of the follows, not of the pairs
    assert set(cut.train) | held == lines and not set(cut.train) & held  # a partition


def test_untimed_training_follows_get_the_loaders_times_in_file_order(tmp_path: Path) -> None:
    rows: list[tuple[str, str, int | None]] = [
        (f"a{n * 7919 % 500}", f"b{n * 104729 % 97}", None) for n in range(500)
    ]
    rows.append(rows[3])  # a duplicate line: the loader keeps its first time
    data = Dataset("u", rows, undirected=False)
    cut = split(data, 2, NOW)
    held = _held(cut.held)
    kept = [(s, d) for s, d, _ in rows if (s, d) not in held]
    order = list(dict.fromkeys(kept))  # each follow at its first line
    assert sorted(cut.train, key=cut.train.__getitem__) == order  # file order, not random
    assert sorted(cut.train.values()) == [NOW - len(kept) + n for n in range(len(order))]
    path = tmp_path / "training.txt"  # the same rows as a file of their own, loaded
    path.write_text("".join(f"{s} {d}\n" for s, d in kept))
    assert cut.train == read_edge_file(path, now=NOW).edges


def test_untimed_undirected_training_is_both_ways_at_the_time_of_its_line() -> None:
    rows: list[tuple[str, str, int | None]] = [(f"a{n}", f"b{n % 13}", None) for n in range(300)]
    cut = split(Dataset("u", rows, undirected=True), 3, NOW)
    assert all(cut.train[(b, a)] == t for (a, b), t in cut.train.items())
    lines = [(s, d) for s, d, _ in rows if (s, d) in cut.train]
    times = [cut.train[line] for line in lines]
    assert len(lines) == 270 and times == sorted(times) and len(set(times)) == 270
    assert max(times) < NOW


def test_held_out_follows_whose_reverse_is_in_training_are_follow_backs() -> None:
    rows: list[tuple[str, str, int | None]] = [(f"x{n}", f"y{n}", 100 + n) for n in range(40)]
    rows += [
        ("a", "b", 1),  # b follows a back after the split: a follow-back
        ("b", "a", 500),
        ("c", "d", 2),  # trained on both ways
        ("d", "c", 3),
        ("e", "f", 501),  # both ways after the split: discoveries, neither a follow-back
        ("f", "e", 502),
    ]
    cut = split(Dataset("t", rows, undirected=False), 1, NOW)
    assert _held(cut.held) == {("x39", "y39"), ("b", "a"), ("e", "f"), ("f", "e")}
    assert ("a", "b") in cut.train and ("d", "c") in cut.train
    assert cut.follow_backs == {"b": {"a"}}


def test_precision_on_discoveries_counts_no_follow_back_as_a_hit() -> None:
    held = {"a": {"x", "y"}, "b": {"z"}, "c": {"w"}}
    backs = {"a": {"x"}, "c": {"w"}}  # c has nothing to discover: not averaged
    recommended = {"a": ["x", "y", "q"], "b": ["q", "z"], "c": ["w"]}
    assert discovery_precision(recommended, held, backs) == pytest.approx((1 / 10 + 1 / 10) / 2)
    assert discovery_precision(recommended, held, {}) == pytest.approx((2 + 1 + 1) / 10 / 3)


def test_a_first_graph_is_prefixed_and_ends_a_day_before_the_evaluated_training(
    tmp_path: Path,
) -> None:
    path = tmp_path / "first.txt"
    path.write_text("1 2\n2 3\n1 2\n3 1\n")  # untimed, a duplicate merged
    first = read_first(path, undirected=False)
    untimed = [(f"a{n}", f"b{n % 5}", None) for n in range(100)]
    cut = split(Dataset("u", untimed, undirected=False), 1, NOW)
    older = first.before(cut)
    assert set(older.train) == {
        (f"{FIRST_PREFIX}{s}", f"{FIRST_PREFIX}{d}") for s, d in ("12", "23", "31")
    }
    end = min(cut.train.values()) - FIRST_GAP_US
    # the loader's times, a microsecond a line, ending a day before the other's first follow;
    # the duplicate line keeps its first time
    ones = {
        (s[len(FIRST_PREFIX) :], d[len(FIRST_PREFIX) :]): t for (s, d), t in older.train.items()
    }
    assert ones == {("1", "2"): end - 3, ("2", "3"): end - 2, ("3", "1"): end}
    assert not older.held and not older.follow_backs and older.split_at == end
    # a timed evaluated graph reaches back years: the first graph is older than all of it;
    # the graph read once is shifted anew for each split, never in place
    read = dict(first.edges.edges)
    timed = [(f"a{n}", f"b{n % 5}", 1_000_000 + 86_400 * n) for n in range(100)]
    cut = split(Dataset("t", timed, undirected=False), 1, NOW)
    assert max(first.before(cut).train.values()) == min(cut.train.values()) - FIRST_GAP_US
    assert first.edges.edges == read
    assert not shared_ids(first, Dataset("u", untimed, undirected=False))
    clash = Dataset("c", [("x", f"{FIRST_PREFIX}2", None)], undirected=False)
    assert shared_ids(first, clash) == [f"{FIRST_PREFIX}2"]


def test_a_timed_first_graph_keeps_its_spacing(tmp_path: Path) -> None:
    path = tmp_path / "first.txt"
    path.write_text("1 2 1000\n2 3 1060\n3 1 1000\n")
    first = read_first(path, undirected=True)
    rows = [(f"a{n}", f"b{n % 5}", None) for n in range(100)]
    cut = split(Dataset("u", rows, undirected=False), 1, NOW)
    older = first.before(cut).train
    end = min(cut.train.values()) - FIRST_GAP_US
    one, two, three = (f"{FIRST_PREFIX}{n}" for n in (1, 2, 3))
    assert older[(two, three)] == older[(three, two)] == end  # undirected: both ways
    assert older[(one, two)] == older[(one, three)] == end - 60 * SECOND
