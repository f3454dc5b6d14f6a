"""What one write key can make the stores hold, and what the budgets do when Redis refuses, on
the real servers: per-key budgets metered in-process when Redis refuses them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from conftest import new_user_id
from helpers import ThrowawayRedis, app_client

from graphsvc.api.app import create_app
from graphsvc.bootstrap import Services

MakeService = Callable[..., Services]


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


# -- per-key budgets ------------------------------------------------------------------------------


async def test_budgets_are_metered_in_process_when_redis_refuses_them(
    make_service: MakeService, service_key: str, tmp_path: Path
) -> None:
    """A Redis out of memory answers every INCR with an error: the budgets are then spent in
    the API process (the same limits, a 429 past them), not switched off."""
    refusing = ThrowawayRedis(tmp_path / "redis")
    refusing.start()
    try:
        with refusing.client() as admin:
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", "1")  # every write is refused: OOM
        services = make_service(
            rate_limits_enabled=True,
            rate_limit_reads="3 per 60 seconds",
            redis_url=refusing.url,  # the budgets' Redis only: the rest keeps the shared one
            redis_cluster=False,
        )
        async with app_client(create_app(services.settings, services), service_key) as http:
            before = metric((await http.get("/metrics")).text, "graphsvc_rate_limit_local_total")
            url = f"/v1/users/{new_user_id()}/counts"
            answers = [await http.get(url) for _ in range(5)]
            assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
            assert answers[0].headers["ratelimit-limit"] == "3"
            assert answers[0].headers["ratelimit-remaining"] == "2"
            refused = answers[3].json()["error"]
            assert refused["code"] == "rate_limited", refused
            after = metric((await http.get("/metrics")).text, "graphsvc_rate_limit_local_total")
            assert after == before + 5
    finally:
        refusing.kill9()
