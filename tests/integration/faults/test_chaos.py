"""Chaos: eight writers following, unfollowing, blocking, unblocking and removing followers
on shared targets while Redis and then Neo4j are killed with SIGKILL and started again with
`graphsvc services up`, as an operator would.

The servers are the project's own local ones (`graphsvc services up` over a state folder of
this module's): a Redis that keeps an append-only file (fsync'd every second, so a SIGKILL may
lose its last second) and a Neo4j that recovers from its transaction log. The API runs as
deployed, `graphsvc serve` with two uvicorn workers and a `graphsvc worker` beside it.

Each (follower, target) pair is written by one writer only, so the state its acknowledged
writes leave is known. Every write is answered within the request's deadline. Afterwards,
without any repair: every pair is in a state its writer's answers allow (nothing acknowledged
is lost); every user's counts equal its walked lists and Neo4j's edges; the mirror equals
Neo4j; and warm reads were answered while Neo4j was down.
Then the same once more after `graphsvc reconcile --all`.

`make test` runs one short round; `make test-slow` runs several longer ones (``slow``).

On the same servers: follows in flight when Neo4j is killed each answer (200 or 503) within
the request's deadline, under the driver's default retries, and the acknowledged ones are in
Neo4j and the mirror.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
import pytest

from graphsvc.bootstrap import open_services
from graphsvc.client import AsyncGraphClient
from graphsvc.ops.servers import processes
from graphsvc.settings import Settings
from tests.support.helpers import create_key, free_port
from tests.support.run import RUN
from tests.support.served import (
    FAULT_ENV,
    ApiProcess,
    Read,
    cypher,
    new_connections,
    send_read,
    status_table,
)

pytestmark = [
    pytest.mark.faults,
    pytest.mark.skipif(
        not (shutil.which("java") and shutil.which("mvn") and shutil.which("redis-server")),
        reason="needs Java, Maven and redis-server",
    ),
]

WRITERS = 8
Op = Literal["follow", "unfollow", "block", "unblock", "remove"]
OPS: list[Op] = ["follow", "unfollow", "block", "unblock", "remove"]
WEIGHTS = [0.40, 0.15, 0.15, 0.15, 0.15]
# What a client's own side adds to a request's time, past the request's deadline.
SLACK_SECONDS = 1.5
# A pair's state: (the follower follows the target, the target blocks the follower).
State = tuple[bool, bool]


def say(line: str) -> None:
    print(f"[chaos] {line}", flush=True)


# -- a pair's rules -----------------------------------------------------------------------------


def applied(op: Op, state: State) -> State:
    """The state a write leaves (a follow of a blocker is refused and changes nothing)."""
    follows, blocked = state
    if op == "follow":
        return state if blocked else (True, False)
    if op == "block":
        return (False, True)
    if op == "unblock":
        return (follows, False)
    return (False, blocked)  # unfollow, remove


def allows(op: Op, status: int, state: State) -> bool:
    """Whether an acknowledged answer could come from a write made in ``state``."""
    if op == "follow":
        return (status == 403) == state[1]
    return status == 200


def changed(op: Op, state: State) -> bool:
    """What the answer's created / removed must say of a write made in ``state``."""
    follows, blocked = state
    return {
        "follow": not follows,
        "unfollow": follows,
        "remove": follows,
        "block": not blocked,
        "unblock": blocked,
    }[op]


# -- the stack ----------------------------------------------------------------------------------


@dataclass
class Stack:
    settings: Settings
    env: dict[str, str]
    state_dir: Path
    api: ApiProcess
    key: str

    def services(self, *argv: str) -> str:
        return self.cli("services", *argv)

    def cli(self, *argv: str, timeout: float = 600) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "graphsvc.ops.cli", *argv],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, f"graphsvc {' '.join(argv)}:\n{result.stderr}"
        return result.stdout + result.stderr

    def kill9(self, pid_file: Path) -> None:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while processes.pid_alive(pid):
            assert time.monotonic() < deadline, f"pid {pid} outlived SIGKILL"
            time.sleep(0.05)

    def kill_redis(self) -> None:
        self.kill9(self.state_dir / "redis" / "redis.pid")

    def kill_neo4j(self) -> None:
        self.kill9(self.state_dir / "neo4j" / "run" / "neo4j.pid")

    def truth(self, followers: list[str]) -> dict[tuple[str, str], State]:
        """Every pair of these followers that Neo4j holds a follow or a block of."""
        follows = cypher(
            self.settings,
            "MATCH (a:User)-[:FOLLOWS]->(b:User) WHERE a.id IN $ids RETURN a.id AS a, b.id AS b",
            ids=followers,
        )
        blocks = cypher(
            self.settings,
            "MATCH (b:User)-[:BLOCKS]->(a:User) WHERE a.id IN $ids RETURN a.id AS a, b.id AS b",
            ids=followers,
        )
        found: dict[tuple[str, str], State] = {}
        for row in follows:
            found[(row["a"], row["b"])] = (True, False)
        for row in blocks:
            found[(row["a"], row["b"])] = (found.get((row["a"], row["b"]), (False, False))[0], True)
        return found

    def wait_for_outbox(self, users: list[str], timeout: float = 180.0) -> None:
        query = "MATCH (e:GraphEvent) WHERE e.src IN $ids OR e.dst IN $ids RETURN count(e) AS n"
        processes.wait_until(
            lambda: cypher(self.settings, query, ids=users)[0]["n"] == 0,
            timeout,
            "the outbox's relay",
        )


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("chaos")
    neo4j_uri = f"bolt://127.0.0.1:{free_port()}"
    redis_url = f"redis://127.0.0.1:{free_port()}/0"
    settings = Settings(neo4j_uri=neo4j_uri, redis_url=redis_url, redis_cluster=False)
    env = {
        **os.environ,
        "STATE_DIR": str(base / "state"),
        "NEO4J_URI": neo4j_uri,
        "REDIS_URL": redis_url,
        "REDIS_CLUSTER": "0",
        "NEO4J_HEAP": "512m",
        "NEO4J_PAGECACHE": "128m",
        "NEO4J_START_TIMEOUT": "300",
        "API_KEY_SECRET": settings.access.api_key_secret,
        **FAULT_ENV,
    }
    api = ApiProcess(env, base / "api.log", workers=2)
    stack = Stack(settings, env, base / "state", api, key="")
    try:
        stack.services("up")
        stack.key = asyncio.run(create_key(settings))
        api.start()
        api.wait_ready()
        yield stack
    finally:
        api.stop()
        subprocess.run(
            [sys.executable, "-m", "graphsvc.ops.cli", "services", "down", "--all"],
            env=env,
            capture_output=True,
            timeout=300,
        )


# -- the load -----------------------------------------------------------------------------------


@dataclass
class Write:
    writer: int
    pair: tuple[str, str]
    op: Op
    start: float
    end: float
    status: int | None  # None: no answer
    body: dict = field(default_factory=dict)

    @property
    def acked(self) -> bool:
        return self.status == 200 or (self.op == "follow" and self.status == 403)


def request(op: Op, pair: tuple[str, str]) -> tuple[str, str]:
    follower, target = pair
    return {
        "follow": ("PUT", f"/v1/users/{follower}/following/{target}"),
        "unfollow": ("DELETE", f"/v1/users/{follower}/following/{target}"),
        "block": ("PUT", f"/v1/users/{target}/blocks/{follower}"),
        "unblock": ("DELETE", f"/v1/users/{target}/blocks/{follower}"),
        "remove": ("DELETE", f"/v1/users/{target}/followers/{follower}"),
    }[op]


@dataclass
class Chaos:
    url: str
    key: str
    pairs_of: list[list[tuple[str, str]]]  # per writer
    read_paths: list[str]
    seed: int
    writes: list[Write] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _write_loop(self, number: int) -> None:
        rng = random.Random(f"{self.seed}-w{number}")
        with new_connections(self.url, self.key) as http:
            while not self.stop.is_set():
                pair = rng.choice(self.pairs_of[number])
                op = rng.choices(OPS, WEIGHTS)[0]
                method, path = request(op, pair)
                start = time.monotonic()
                try:
                    response = http.request(method, path)
                    status, body = response.status_code, response.json()
                except (httpx.TransportError, ValueError):
                    status, body = None, {}
                with self.lock:
                    self.writes.append(
                        Write(number, pair, op, start, time.monotonic(), status, body)
                    )
                if status == 503:  # as a client does: wait as told (at most a second here)
                    self.stop.wait(min(1.0, float(response.headers.get("retry-after", 1))))

    def _read_loop(self, number: int) -> None:
        rng = random.Random(f"{self.seed}-r{number}")
        with new_connections(self.url, self.key) as http:
            while not self.stop.is_set():
                read = send_read(http, rng.choice(self.read_paths))
                with self.lock:
                    self.reads.append(read)

    def answered_since(self, since: float) -> int:
        with self.lock:
            return sum(w.start >= since for w in self.writes)

    def wait_for_writes(self, count: int, seconds: float = 120.0) -> None:
        """Until ``count`` more writes were answered (at most ``seconds``)."""
        since = time.monotonic()
        deadline = since + seconds
        while self.answered_since(since) < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def wait_for_every_pair(self, since: float, seconds: float = 180.0) -> None:
        """Until every pair had a write acknowledged since ``since`` (at most ``seconds``), so
        that the last write of each pair is one whose outcome is known."""
        pairs = {pair for pairs in self.pairs_of for pair in pairs}
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                done = {w.pair for w in self.writes if w.acked and w.start >= since}
            if done >= pairs:
                return
            time.sleep(0.1)

    def run(self, faults: Callable[[], dict[str, float]]) -> dict[str, float]:
        threads = [threading.Thread(target=self._write_loop, args=(n,)) for n in range(WRITERS)]
        threads += [threading.Thread(target=self._read_loop, args=(n,)) for n in range(2)]
        for thread in threads:
            thread.start()
        try:
            return faults()
        finally:
            self.stop.set()
            for thread in threads:
                thread.join(timeout=120)
            assert not any(thread.is_alive() for thread in threads)

    def possible(self) -> tuple[dict[tuple[str, str], set[State]], list[str]]:
        """Per pair, the states its writes may have left (one, unless writes after its last
        acknowledged one went unanswered: a write can commit and fail to answer); and the
        answers that contradict their writer's order."""
        states: dict[tuple[str, str], set[State]] = {}
        wrong: list[str] = []
        for write in sorted(self.writes, key=lambda w: w.start):
            before = states.setdefault(write.pair, {(False, False)})
            if write.acked:
                fits = {s for s in before if allows(write.op, write.status or 0, s)}
                if not fits:
                    wrong.append(f"{write} from states {before}")
                    fits = before
                if write.status == 200 and len(fits) == 1:
                    said = bool(write.body.get("created") or write.body.get("removed"))
                    if said != changed(write.op, next(iter(fits))):
                        wrong.append(f"{write} from state {fits}")
                states[write.pair] = {applied(write.op, s) for s in fits}
            else:
                states[write.pair] = before | {applied(write.op, s) for s in before}
        return states, wrong


def pairs_for(round_: int, followers_each: int, targets: int) -> list[list[tuple[str, str]]]:
    stars = [f"ch{RUN}.r{round_}.star{t}" for t in range(targets)]
    return [
        [(f"ch{RUN}.r{round_}.w{w}f{f}", star) for f in range(followers_each) for star in stars]
        for w in range(WRITERS)
    ]


# -- the checks ---------------------------------------------------------------------------------


async def walked_counts(stack: Stack, users: list[str]) -> list[str]:
    """Each user's counts against its walked lists and Neo4j's edges, through the API: the
    users whose figures differ."""
    follows = cypher(
        stack.settings,
        "MATCH (a:User)-[:FOLLOWS]->(b:User) WHERE a.id IN $ids OR b.id IN $ids "
        "RETURN a.id AS a, b.id AS b",
        ids=users,
    )
    followers = {u: sum(row["b"] == u for row in follows) for u in users}
    following = {u: sum(row["a"] == u for row in follows) for u in users}
    wrong = []
    async with AsyncGraphClient(stack.api.url, api_key=stack.key, timeout=30) as graph:
        for user in users:
            counts = await graph.counts(user)
            walked_in = len([item async for item in graph.followers(user)])
            walked_out = len([item async for item in graph.following(user)])
            seen = (counts.followers, walked_in, counts.following, walked_out)
            if seen != (followers[user], followers[user], following[user], following[user]):
                wrong.append(
                    f"{user}: counts {counts.followers}/{counts.following}, walked "
                    f"{walked_in}/{walked_out}, Neo4j {followers[user]}/{following[user]}"
                )
    return wrong


async def drifts(stack: Stack, users: list[str]) -> list[str]:
    async with open_services(stack.settings) as backends:
        return [str(drift) for drift in await backends.consistency.check(users)]


async def check_state(stack: Stack, chaos: Chaos, users: list[str], when: str) -> dict[str, int]:
    """The pairs, the counts and the mirror, as the writers' answers say they must be."""
    states, wrong = chaos.possible()
    followers = sorted({pair[0] for pair in states})
    truth = stack.truth(followers)
    lost = [
        f"{pair}: Neo4j holds {truth.get(pair, (False, False))}, answers allow {allowed}"
        for pair, allowed in states.items()
        if truth.get(pair, (False, False)) not in allowed
    ]
    counted = await walked_counts(stack, users)
    drifted = await drifts(stack, users)
    figures = {
        "acknowledged writes": sum(w.acked for w in chaos.writes),
        "answers contradicting their writer's order": len(wrong),
        "pairs": len(states),
        "uncertain pairs": sum(len(allowed) > 1 for allowed in states.values()),
        "wrong pairs": len(lost),
        "wrong counts": len(counted),
        "drifts": len(drifted),
    }
    say(f"{when}: {figures}")
    assert not wrong, "answers that contradict their writer's order:\n" + "\n".join(wrong[:10])
    assert not lost, "pairs not as their acknowledged writes left them:\n" + "\n".join(lost[:20])
    assert not counted, "counts that differ from the walked lists:\n" + "\n".join(counted[:20])
    assert not drifted, "mirror differs from Neo4j:\n" + "\n".join(drifted[:20])
    return figures


# -- the test -----------------------------------------------------------------------------------


def chaos_round(stack: Stack, round_: int, seconds: float, followers_each: int) -> None:
    """One round: a load, Redis killed and brought back, then Neo4j; then the checks."""
    pairs_of = pairs_for(round_, followers_each, targets=4)
    targets = sorted({t for pairs in pairs_of for _, t in pairs})
    followers = sorted({f for pairs in pairs_of for f, _ in pairs})
    users = followers + targets
    paths = [f"/v1/users/{t}/{side}" for t in targets for side in ("followers", "counts")]
    chaos = Chaos(stack.api.url, stack.key, pairs_of, paths, seed=round_)
    # Writes per phase: enough that every phase sees each writer's pairs written more than once.
    per_phase = max(40, int(seconds * 15))

    def faults() -> dict[str, float]:
        chaos.wait_for_writes(per_phase)
        redis_killed = time.monotonic()
        stack.kill_redis()
        say("redis: SIGKILL")
        chaos.wait_for_writes(per_phase // 2)
        redis_back = time.monotonic()
        stack.services("up")
        say(f"redis: back in {time.monotonic() - redis_back:.1f}s")
        chaos.wait_for_writes(per_phase)
        neo4j_killed = time.monotonic()
        stack.kill_neo4j()
        say("neo4j: SIGKILL")
        # Writes fail fast while Neo4j is gone; reads of warm users go on from the mirror.
        chaos.wait_for_writes(per_phase // 2)
        time.sleep(min(seconds, 5.0))
        neo4j_back = time.monotonic()
        stack.services("up")
        say(f"neo4j: back in {time.monotonic() - neo4j_back:.1f}s")
        ready = stack.api.wait_ready()
        say(f"API ready {ready:.1f}s after Neo4j answered")
        chaos.wait_for_every_pair(time.monotonic())
        return {
            "redis_killed": redis_killed,
            "redis_back": redis_back,
            "neo4j_killed": neo4j_killed,
            "neo4j_back": neo4j_back,
        }

    moments = chaos.run(faults)
    only_neo4j_down = [
        r
        for r in chaos.reads
        if moments["neo4j_killed"] <= r.start and r.end <= moments["neo4j_back"]
    ]
    redis_down = [
        r
        for r in chaos.reads
        if moments["redis_killed"] <= r.start and r.end <= moments["redis_back"]
    ]
    say(
        f"round {round_}: {len(chaos.writes)} writes {status_table(chaos.writes)}, "
        f"{sum(w.acked for w in chaos.writes)} acknowledged; reads {status_table(chaos.reads)}; "
        f"while Redis was down {status_table(redis_down)}; while only Neo4j was down "
        f"{status_table(only_neo4j_down)}"
    )
    odd = [w for w in chaos.writes if w.status not in (200, 403, 503, None)]
    odd += [w for w in chaos.writes if w.status == 403 and w.op != "follow"]
    assert not odd, "writes answered neither 200 nor 503:\n" + "\n".join(map(str, odd[:10]))
    served = stack.settings
    deadline = served.neo4j.neo4j_tx_timeout_seconds + served.api.request_deadline_margin_seconds
    late = [w for w in chaos.writes if w.end - w.start > deadline + SLACK_SECONDS]
    assert not late, f"writes answered past their deadline of {deadline:g} s:\n" + "\n".join(
        f"{w.op} {w.pair} {w.status} after {w.end - w.start:.2f} s" for w in late[:10]
    )
    assert only_neo4j_down, "no read fell wholly within Neo4j's outage"
    refused = [r for r in only_neo4j_down if r.status != 200]
    assert not refused, f"{status_table(only_neo4j_down)}; the refused reads:\n" + "\n".join(
        f"{r.path} {r.status} after {(r.end - r.start) * 1000:.0f} ms: {r.error}"
        for r in refused[:10]
    )
    assert all(r.status == 200 for r in redis_down), status_table(redis_down)
    assert all(r.status in (200, 503) for r in chaos.reads), status_table(chaos.reads)

    stack.wait_for_outbox(users)
    asyncio.run(check_state(stack, chaos, users, f"round {round_}, before any reconcile"))
    report = stack.cli("reconcile", "--all")
    line = next(line for line in report.splitlines() if line.startswith("checked "))
    say(f"round {round_}: graphsvc reconcile --all: {line}")
    asyncio.run(check_state(stack, chaos, users, f"round {round_}, after the reconcile"))


def test_kill9_redis_then_neo4j_under_eight_writers(stack: Stack) -> None:
    chaos_round(stack, 0, seconds=4.0, followers_each=2)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # five rounds of twenty seconds, each with its restarts
def test_kill9_redis_then_neo4j_under_eight_writers_many_rounds(stack: Stack) -> None:
    for round_ in range(1, 6):
        chaos_round(stack, round_, seconds=20.0, followers_each=4)


# -- a write in flight when Neo4j dies ----------------------------------------------------------

# An API whose writes would otherwise wait out the driver's retries of a lost connection
# (NEO4J_RETRY_SECONDS, as deployed) well past the deadline (the transaction timeout plus the
# margin); the answers may take the deadline plus the client's own time (SLACK_SECONDS).
DEADLINE_ENV = {
    "NEO4J_RETRY_SECONDS": "10",
    "NEO4J_CONNECT_TIMEOUT": "3",
    "NEO4J_TX_TIMEOUT_SECONDS": "3",
    "REQUEST_DEADLINE_MARGIN_SECONDS": "1",
}
DEADLINE_SECONDS = 4.0
FOLLOWING_WRITERS = 16


def follow_until(url: str, key: str, number: int, stop: threading.Event, out: list[Write]) -> None:
    """Follows of four targets by new followers, one after another, until ``stop``."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        n = 0
        while not stop.is_set():
            pair = (f"dl{RUN}.w{number}.f{n}", f"dl{RUN}.star{n % 4}")
            method, path = request("follow", pair)
            start = time.monotonic()
            try:
                status: int | None = http.request(method, path).status_code
            except httpx.TransportError:
                status = None
            out.append(Write(number, pair, "follow", start, time.monotonic(), status))
            n += 1


def test_follows_in_flight_when_neo4j_dies_answer_within_the_deadline(
    stack: Stack, tmp_path: Path
) -> None:
    api = ApiProcess(stack.env | DEADLINE_ENV, tmp_path / "api.log")
    api.start()
    try:
        api.wait_ready()
        writes: list[Write] = []
        stop = threading.Event()
        threads = [
            threading.Thread(target=follow_until, args=(api.url, stack.key, n, stop, writes))
            for n in range(FOLLOWING_WRITERS)
        ]
        for thread in threads:
            thread.start()
        try:
            processes.wait_until(lambda: len(writes) >= 200, 120, "follows before the kill")
            killed = time.monotonic()
            stack.kill_neo4j()
            say("neo4j: SIGKILL under follows")
            time.sleep(DEADLINE_SECONDS + SLACK_SECONDS + 1)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
        stack.services("up")
        api.wait_ready()
        stack.api.wait_ready()
        in_flight = [w for w in writes if w.start < killed < w.end]
        slowest = max(w.end - w.start for w in writes)
        say(
            f"deadline: {len(writes)} follows {status_table(writes)}, {len(in_flight)} in flight "
            f"at the kill {status_table(in_flight)}, the slowest answered in {slowest:.2f} s"
        )
        assert in_flight, "no follow was in flight when Neo4j was killed"
        odd = [w for w in writes if w.status not in (200, 503)]
        assert not odd, "follows answered neither 200 nor 503:\n" + "\n".join(map(str, odd[:10]))
        late = [w for w in writes if w.end - w.start > DEADLINE_SECONDS + SLACK_SECONDS]
        assert not late, f"answered past the deadline of {DEADLINE_SECONDS:g} s:\n" + "\n".join(
            f"{w.pair} {w.status} after {w.end - w.start:.2f} s" for w in late[:10]
        )
        acknowledged = {w.pair for w in writes if w.status == 200}
        followers = sorted({w.pair[0] for w in writes})
        missing = acknowledged - set(stack.truth(followers))
        assert not missing, f"acknowledged follows not in Neo4j: {sorted(missing)[:10]}"
        targets = sorted({w.pair[1] for w in writes})
        stack.wait_for_outbox(followers + targets)
        assert not asyncio.run(drifts(stack, targets)), "the mirror differs from Neo4j"
        assert not asyncio.run(walked_counts(stack, targets))
    finally:
        api.stop()
