"""A real-graph hub: one user with 12,000 mutual follows (friend-style graphs have them), loaded
into the running, non-empty service by transactions. Its mirror builds (the snapshot of such
a user, read in one transaction, would exceed Neo4j's transaction memory), its counts are exact, both its lists walk
whole across the hot list's seam, and its fans get friend-of-friend suggestions."""

from __future__ import annotations

from collections.abc import Callable

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import Edges
from graphsvc.ops.data.loader import load_edges
from tests.support.driver import Driver, full_counts, user_ids, walk

FANS = 12_000
T0 = 1_600_000_000_000_000


async def test_a_hub_with_12000_mutual_follows_loads_serves_and_suggests(
    driver: Driver, service: Services, uid: Callable[[str], str]
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

    assert await driver.counts(hub) == full_counts(FANS, FANS, friends=FANS)
    assert await driver.counts(fans[0]) == full_counts(1, 1, friends=1)
    # the hot list holds 10,000: the rest is Neo4j's
    for listing in (driver.followers(hub), driver.following(hub)):
        assert user_ids(await walk(listing, 200)) == fans[::-1]

    items = (await driver.suggestions(fans[0], limit=10)).items
    assert len(items) == 10
    assert all("friends_of_friends" in item.sources for item in items)
    assert all(item.user_id in set(fans) and item.reasons.via == [hub] for item in items)
