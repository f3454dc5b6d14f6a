"""The consistency check finds real drift (it can fail), and a rebuild repairs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

from graphsvc.bootstrap import Services
from graphsvc.ops.data.loader import rebuild_mirror
from tests.support.run import assert_consistent

UserIds = Callable[[str], str]


async def test_drift_is_found_and_repaired(
    service: Services, backends: Services, uid: UserIds
) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    await service.relations.follow(a, b)
    await service.relations.follow(a, c)
    await service.relations.follow(c, b)
    await service.follow_pages.followers(b)
    await service.follow_pages.followers(c)
    await service.follow_pages.following(a)
    assert await backends.consistency.check([a, b, c]) == []

    redis = backends.core.redis.client
    meta, followers, *_ = backends.core.redis.mirror.keys(b)
    await redis.hset(meta, "fr", 7)  # a wrong count
    await redis.zadd(followers, {"intruder": 1})  # a follower who does not follow
    await redis.zrem(backends.core.redis.mirror.keys(a)[2], b)  # a following that went missing
    await redis.zrem(
        backends.core.redis.mirror.keys(c)[1], a
    )  # the only entry: a lost list, served cold
    drifts = await backends.consistency.check([a, b, c])
    found = {(d.user_id, d.what) for d in drifts}
    assert found == {(b, "counts"), (b, "followers list"), (a, "following list")}

    await rebuild_mirror(service, [a, b], progress=False)
    await assert_consistent(backends, {a, b, c})


async def test_check_command_exit_codes(
    service: Services, backends: Services, uid: UserIds
) -> None:
    a, b = uid("a"), uid("b")
    await service.relations.follow(a, b)
    await service.follow_pages.counts(b)
    await backends.core.redis.client.hset(backends.core.redis.mirror.keys(b)[0], "fr", 3)
    env = {
        **os.environ,
        "NEO4J_URI": service.settings.neo4j.neo4j_uri,
        "REDIS_URL": service.settings.redis.redis_url,
        "REDIS_CLUSTER": str(int(service.settings.redis.redis_cluster)),
    }
    command = [sys.executable, "-m", "graphsvc.ops.cli", "check", a, b]
    found = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"{b}: counts" in found.stdout + found.stderr
    repaired = subprocess.run(
        [*command, "--repair"], capture_output=True, text=True, env=env, timeout=120
    )
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and "0 drifts" in again.stdout
