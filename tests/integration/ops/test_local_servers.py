"""`graphsvc services down --all` stops every local server whose state is under STATE_DIR,
whatever its port (an evaluation's throwaway servers too), and leaves alone a pid file that
names some other program."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphsvc.ops.servers import local_servers
from graphsvc.settings import LocalServerSettings, Settings
from tests.support.helpers import free_port

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="starts redis-servers of its own"
)


def _redis_under(state_dir: Path) -> local_servers.LocalRedis:
    settings = Settings().with_values(redis_url=f"redis://127.0.0.1:{free_port()}/0")
    server = local_servers.LocalRedis(settings, LocalServerSettings(state_dir=state_dir))
    server.up(lambda _: None)
    return server


def test_down_all_stops_every_server_under_the_state_dir(tmp_path: Path) -> None:
    own = _redis_under(tmp_path / "run")
    nested = _redis_under(tmp_path / "run" / "eval")  # an evaluation's, on another port
    outside = _redis_under(tmp_path / "elsewhere")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    decoy = tmp_path / "run" / "other" / "redis.pid"
    decoy.parent.mkdir(parents=True)
    decoy.write_text(f"{bystander.pid}\n")
    try:
        said: list[str] = []
        stopped = local_servers.down_all(
            LocalServerSettings(state_dir=tmp_path / "run"), said.append
        )
        assert stopped == 2, said
        assert not own.answers() and not nested.answers()
        assert outside.answers(), "a server outside STATE_DIR was stopped"
        assert bystander.poll() is None, "a pid file naming another program stopped it"
    finally:
        bystander.kill()
        bystander.wait()
        outside.down(lambda _: None)
        for server in (own, nested):
            if server.answers():
                server.down(lambda _: None)


def test_down_all_with_nothing_running_stops_nothing(tmp_path: Path) -> None:
    assert local_servers.down_all(LocalServerSettings(state_dir=tmp_path)) == 0
