"""A Parquet snapshot of the whole graph against the real servers: taken while follows and
unfollows go on, it holds exactly the follows that stood at its cut (none made after, none
missing that stood then); blocks and mutes are there, statuses too; the client reads it back
as frames and a networkx graph; the command says what it wrote in one line."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from graphsvc.bootstrap import Services
from graphsvc.client import BadRequest, load_snapshot
from graphsvc.ops.data.export import export_parquet
from graphsvc.settings import Settings
from graphsvc.wire.snapshot import MANIFEST
from tests.support.driver import Driver
from tests.support.helpers import cli, server_env

UserIds = Callable[[str], str]
Log = list[tuple[float, float, bool]]  # (before, after, following afterwards)


async def _toggle(driver: Driver, src: str, dst: str, log: Log, until: float) -> None:
    rng = random.Random(f"{src}{dst}")
    following = False
    while time.time() < until:
        before = time.time()
        if following:
            await driver.unfollow(src, dst)
        else:
            await driver.follow(src, dst)
        following = not following
        log.append((before, time.time(), following))
        await asyncio.sleep(rng.uniform(0.4, 0.8))  # pauses longer than a slow write


def _state_at(log: Log, cut: float) -> bool | None:
    """Whether the pair followed at ``cut``: None when a write was under way then."""
    state = False
    for before, after, following in log:
        if before <= cut <= after:
            return None
        if after < cut:
            state = following
    return state


async def test_a_snapshot_taken_during_writes_holds_the_follows_of_its_cut(
    driver: Driver, backends: Services, uid: UserIds, tmp_path: Path
) -> None:
    standing = [(uid(f"s{n}"), uid(f"t{n}")) for n in range(5)]
    await driver.follow_pairs(*standing)
    blocker, muter = uid("blocker"), uid("muter")
    await driver.block(blocker, standing[0][0])
    await driver.mute(muter, standing[0][1])
    await driver.set_status(standing[4][0], "spam")
    pairs = [(uid(f"a{n}"), uid(f"b{n}")) for n in range(20)]
    logs: dict[tuple[str, str], Log] = {pair: [] for pair in pairs}
    until = time.time() + 5.0
    storm = [asyncio.create_task(_toggle(driver, *p, logs[p], until)) for p in pairs]
    await asyncio.sleep(3.0)
    report = await export_parquet(backends.core.neo4j.exports, tmp_path, settle_seconds=1.0)
    await asyncio.gather(*storm)

    snapshot = load_snapshot(tmp_path)
    ours = {user for pair in standing + pairs for user in pair} | {blocker, muter}
    follows = snapshot.follows[snapshot.follows["src"].isin(ours)]
    exported = set(zip(follows["src"], follows["dst"], strict=True))
    assert set(standing) <= exported
    cut = report.cut / 1_000_000
    decided = 0
    for pair, log in logs.items():
        state = _state_at(log, cut)
        if state is not None:
            assert (pair in exported) == state, (pair, cut, log)
            decided += 1
    assert decided >= 3 and len(exported) == len(set(follows.itertuples(index=False)))
    assert (follows["since"].astype("int64") // 1000 <= report.cut).all()

    blocks = snapshot.blocks[snapshot.blocks["src"] == blocker]
    assert list(blocks["dst"]) == [standing[0][0]]
    mutes = snapshot.mutes[snapshot.mutes["src"] == muter]
    assert list(mutes["dst"]) == [standing[0][1]]
    statuses = dict(zip(snapshot.users["id"], snapshot.users["status"], strict=True))
    assert statuses[standing[4][0]] == "spam" and statuses[standing[3][0]] == "active"
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert {t: info["rows"] for t, info in manifest["tables"].items()} == report.rows
    assert report.rows["follows"] == len(snapshot.follows)
    graph = snapshot.graph()
    assert graph.has_edge(*standing[1]) and graph.nodes[standing[4][0]]["status"] == "spam"


def test_the_command_writes_a_snapshot_and_says_so(
    server_settings: Settings, tmp_path: Path
) -> None:
    out = cli(server_env(server_settings), "export", str(tmp_path / "snap"), "--no-progress")
    assert out.startswith("exported ") and "follows" in out and out.count("\n") == 1
    assert (tmp_path / "snap" / MANIFEST).exists()


def test_an_unfinished_export_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "follows.parquet").write_bytes(b"")
    with pytest.raises(BadRequest, match=r"no manifest\.json"):
        load_snapshot(tmp_path)
