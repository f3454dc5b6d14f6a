"""A real-graph hub: one user with 12,000 mutual follows (friend-style graphs have them), loaded
into the running, non-empty service by transactions. Its mirror builds (the snapshot of such
a user, read in one transaction, would exceed Neo4j's transaction memory), its counts are exact, both its lists walk
whole across the hot list's seam, and its fans get friend-of-friend suggestions."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from helpers import counts, full_counts, walk

from graphsvc.bootstrap import Services
from graphsvc.ops.edge_files import Edges
from graphsvc.ops.loader import load_edges

FANS = 12_000
T0 = 1_600_000_000_000_000


async def test_a_hub_with_12000_mutual_follows_loads_serves_and_suggests(
    client: httpx.AsyncClient, service: Services, uid: Callable[[str], str]
) -> None:
    hub = uid("hub")
    fans = [uid(f"fan{n}") for n in range(FANS)]
    edges = Edges.from_rows(
        row
        for n, fan in enumerate(fans)
        for row in ((fan, hub, T0 + 2 * n), (hub, fan, T0 + 2 * n + 1))
    )
    report = await load_edges(service, edges, progress=False)
    assert (report.edges, report.users) == (2 * FANS, FANS + 1)

    assert await counts(client, hub) == full_counts(FANS, FANS, friends=FANS)
    assert await counts(client, fans[0]) == full_counts(1, 1, friends=1)
    for side in ("followers", "following"):  # the hot list holds 10,000: the rest is Neo4j's
        walked = [item["user_id"] for item in await walk(client, hub, side, 200)]
        assert walked == fans[::-1], side

    response = await client.get(f"/v1/users/{fans[0]}/suggestions", params={"limit": 10})
    assert response.status_code == 200
    items = response.json()["items"]
    assert len(items) == 10
    assert all("friends_of_friends" in item["sources"] for item in items)
    assert all(item["user_id"] in set(fans) and item["reasons"]["via"] == [hub] for item in items)
