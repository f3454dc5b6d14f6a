"""A batch of edge writes says where its time went: each step of it (the users' locks, the
Neo4j transaction, the mirror round trip) and its size are in /metrics."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from tests.support.run import new_user_id

MakeClient = Callable[..., httpx.AsyncClient]
STEPS = ("locks", "neo4j", "mirror")


def sample(text: str, name: str, labels: str = "") -> float:
    where = f"{{{labels}}}" if labels else ""
    found = re.search(rf"^{name}{where} ([0-9.e+-]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


async def test_a_follow_is_counted_in_each_step_of_its_batch(make_client: MakeClient) -> None:
    follower, target = new_user_id(), new_user_id()
    async with make_client() as http, make_client(key=None) as anonymous:
        before = (await anonymous.get("/metrics")).text
        response = await http.put(f"/v1/users/{follower}/following/{target}")
        assert response.status_code == 200 and response.json()["created"] is True
        after = (await anonymous.get("/metrics")).text
    batches = "graphsvc_write_batch_writes_count"
    assert sample(after, batches) >= sample(before, batches) + 1
    for step in STEPS:
        name, labels = "graphsvc_write_batch_seconds_count", f'step="{step}"'
        assert sample(after, name, labels) >= sample(before, name, labels) + 1, step
        assert sample(after, "graphsvc_write_batch_seconds_sum", labels) > 0, step
    assert "graphsvc_deadlock_victims_total" in after
