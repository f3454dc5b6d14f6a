"""Degrees of connection against the real servers: equal to networkx's shortest follow path on
a small random graph (more than three: none), over only the follows the viewer may see, and
within the declared budget of follows read beside a hub of 12,000 mutual follows."""

from __future__ import annotations

import random
from collections.abc import Callable

import networkx as nx

from graphsvc.bootstrap import Services
from graphsvc.ops.data.edge_files import Edges
from graphsvc.ops.data.loader import load_edges
from tests.support.driver import AsViewer, Driver, refused

UserIds = Callable[[str], str]
MakeDriver = Callable[..., Driver]


async def test_the_distance_is_networkx_shortest_follow_path(driver: Driver, uid: UserIds) -> None:
    rng = random.Random(11)
    users = [uid(f"u{n}") for n in range(30)]
    graph = nx.DiGraph()
    graph.add_nodes_from(users)
    graph.add_edges_from((a, b) for a in users for b in users if a != b and rng.random() < 0.05)
    await driver.follow_pairs(*graph.edges)
    lengths = dict(nx.all_pairs_shortest_path_length(graph, cutoff=3))
    pairs = [(a, b) for a in users[:12] for b in users if a != b]
    for a, b in pairs:
        found = await driver.distance(a, b)
        assert (found.distance, found.exact) == (lengths[a].get(b), True), (a, b)
    assert {lengths[a].get(b) for a, b in pairs} >= {1, 2, 3, None}  # every answer was asked


async def test_only_follows_the_viewer_may_see_connect(
    driver: Driver, as_viewer: AsViewer, uid: UserIds
) -> None:
    me, secret, target = uid("me"), uid("secret"), uid("target")
    await driver.follow_pairs((me, secret), (secret, target))
    await driver.set_privacy(secret, following_visibility="private")
    await driver.set_privacy(target, followers_visibility="private")
    assert (await driver.distance(me, target)).distance == 2  # a key that sees all
    async with as_viewer(uid("stranger")) as graph:
        assert (await graph.distance(me, target)).distance is None
    async with as_viewer(secret) as graph:  # its own following
        assert (await graph.distance(me, target)).distance == 2
    await refused(driver.distance(me, me), 403, "self_action")


async def test_a_hub_never_makes_the_search_read_more_than_its_budget(
    make_driver: MakeDriver, service: Services, uid: UserIds
) -> None:
    hub, target = uid("hub"), uid("target")
    fans = [uid(f"fan{n}") for n in range(12_000)]
    mutual = ((row) for n, fan in enumerate(fans) for row in ((fan, hub, 2 * n), (hub, fan, 2 * n)))
    half = ((fan, target, 1) for fan in fans[:6_000])  # the target: followed by half the fans
    await load_edges(service, Edges.from_rows([*mutual, *half]), progress=False)
    lonely = uid("lonely")  # lonely -> hub -> a fan -> target: three follows
    async with make_driver(distance_edges_max=5_000) as graph:
        await graph.follow(lonely, hub)
        through = await graph.distance(fans[0], fans[-1])  # fan -> hub -> fan
        assert (through.distance, through.exact) == (2, True) and through.edges_read <= 5_000
        # both next steps would read past the budget: the search stops there
        stopped = await graph.distance(lonely, target)
        assert (stopped.distance, stopped.exact) == (None, False)
        assert stopped.edges_read <= 5_000
    async with make_driver(distance_edges_max=50_000) as graph:
        whole = await graph.distance(lonely, target)
        assert (whole.distance, whole.exact) == (3, True) and whole.edges_read <= 50_000
