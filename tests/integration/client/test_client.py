"""graphsvc.client against `graphsvc serve` on the real servers: the methods, paging across
pages, the typed exceptions, retries (a 429's Retry-After honoured, measured; connection
errors backed off), and the async client answering as the sync one does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from graphsvc.bootstrap import Services
from graphsvc.client import (
    AsyncGraphClient,
    BadRequest,
    Conflict,
    Forbidden,
    GraphClient,
    GraphError,
    NewFollower,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from graphsvc.domain.access import Scope
from graphsvc.settings import Settings
from tests.support.helpers import free_port, served_api
from tests.support.run import new_user_id


@pytest.fixture(scope="module")
def api(server_settings: Settings) -> Iterator[str]:
    # a hot list of 50: the walks below cross from the Redis mirror into Neo4j
    with served_api(server_settings, RATE_LIMITS_ENABLED="0", HOT_LIST_CAP="50") as url:
        yield url


def test_follow_counts_and_a_walk_across_pages(api: str, service_key: str) -> None:
    star, fans = new_user_id("star"), [new_user_id("fan") for _ in range(120)]
    with GraphClient(api, service_key) as graph:
        for fan in fans:
            assert graph.follow(fan, star).created is True
        assert graph.follow(fans[0], star).created is False  # idempotent
        assert graph.counts(star).followers == 120
        walked = [item.user_id for item in graph.followers(star, page_size=7)]
        assert walked == list(reversed(fans))  # newest first, every one once, over 18 pages
        pages = list(graph.followers(star, page_size=50).pages())
        assert [len(p.items) for p in pages] == [50, 50, 20]
        assert [i.user_id for i in graph.followers(star, page_size=7, limit=10)] == walked[:10]
        frame = graph.followers(star, limit=5).to_pandas()
        assert list(frame["user_id"]) == walked[:5] and "since" in frame
        rel = graph.relationships(fans[0], [star]).relationships[star]
        assert rel.following and not rel.followed_by


async def test_the_async_client_answers_as_the_sync_one(api: str, service_key: str) -> None:
    star, fans = new_user_id("star"), [new_user_id("fan") for _ in range(30)]
    async with AsyncGraphClient(api, service_key) as graph:
        for fan in fans:
            await graph.follow(fan, star)
        walked = [item.user_id async for item in graph.followers(star, page_size=4)]
        pages = [page async for page in graph.followers(star, page_size=4).pages()]
        counts = await graph.counts(star)
    with GraphClient(api, service_key) as sync:
        assert walked == [item.user_id for item in sync.followers(star, page_size=4)]
        assert counts == sync.counts(star)
        assert [len(p.items) for p in pages] == [4] * 7 + [2] and pages[-1].next_cursor is None


def test_errors_are_typed(api: str, service_key: str) -> None:
    me = new_user_id("me")
    with GraphClient(api, service_key) as graph:
        with pytest.raises(BadRequest) as bad:
            graph.follow(me, "not valid")
        assert bad.value.status is None and bad.value.code == "invalid_user_id"  # never sent
        with pytest.raises(BadRequest) as bad:
            graph.relationships(me, ["not valid"])
        assert bad.value.status == 422 and bad.value.code == "invalid_user_id"
        with pytest.raises(Forbidden) as own:
            graph.follow(me, me)
        assert own.value.code == "self_follow"
    with GraphClient(api, api_key=None) as anonymous, pytest.raises(Unauthorized):
        anonymous.counts(me)


def test_an_id_of_dots_never_reaches_another_route(api: str, service_key: str) -> None:
    """httpx removes the dot-segments of a URL: ``unfollow(me, "..")`` would be
    ``DELETE /v1/users/{me}``, an erasure with an admin key. The client refuses the id."""
    me, friend = new_user_id("me"), new_user_id("friend")
    with GraphClient(api, service_key) as graph:
        graph.follow(me, friend)
        for call in (
            lambda: graph.unfollow(me, ".."),
            lambda: graph.unblock(me, "."),
            lambda: graph.dismiss(me, ".."),
            lambda: graph.delete_post(me, ".."),
            lambda: graph.unfollow("..", me),
        ):
            with pytest.raises(BadRequest, match="not only dots"):
                call()
        assert graph.counts(me).following == 1
        assert [item.user_id for item in graph.following(me)] == [friend]


def test_a_429_is_retried_after_its_retry_after(
    server_settings: Settings, service_key: str
) -> None:
    with served_api(server_settings, RATE_LIMIT_READS="2 per 2 seconds") as url:
        with GraphClient(url, service_key, max_retries=0) as impatient:
            time.sleep(2 - time.time() % 2 + 0.05)  # budgets are windows aligned to the clock
            impatient.counts(new_user_id())
            impatient.counts(new_user_id())
            with pytest.raises(RateLimited) as spent:
                impatient.counts(new_user_id())
            assert 1 <= spent.value.retry_after <= 2
        with GraphClient(url, service_key, max_retries=2) as patient:
            started = time.monotonic()
            assert patient.counts(new_user_id()).followers == 0  # waited for the next window
            assert time.monotonic() - started >= 0.9


def test_an_unreachable_server_is_retried_then_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    waits: list[float] = []
    monkeypatch.setattr("graphsvc.client._sync.client.time.sleep", waits.append)
    with GraphClient(url, "k", max_retries=3, backoff=0.05) as graph, pytest.raises(Unavailable):
        graph.counts("someone")
    # three short, jittered backoffs: at most 0.05, 0.1 and 0.2 s
    assert len(waits) == 3
    assert all(0 <= wait <= 0.05 * 2**n for n, wait in enumerate(waits)), waits


def test_helpers_for_data_scientists(api: str, service_key: str) -> None:
    hub, fans = new_user_id("hub"), [new_user_id("fan") for _ in range(6)]
    far = new_user_id("far")
    with GraphClient(api, service_key) as graph:
        for fan in fans:
            graph.follow(fan, hub)
        graph.follow(hub, fans[0])
        graph.follow(far, fans[1])  # two hops from the hub
        many = graph.counts_many([hub, *fans, hub])
        assert list(many) == [hub, *fans] and many[hub].followers == 6
        strangers = [new_user_id("x") for _ in range(230)]
        rels = graph.relationships_many(hub, [*fans, *strangers])  # 3 calls of <= 100
        assert len(rels) == 236 and rels[fans[0]].mutual and not rels[strangers[0]].following
        one = graph.ego_graph(hub)
        assert set(one.nodes) == {hub, *fans}
        assert set(one.predecessors(hub)) == set(fans) and set(one.successors(hub)) == {fans[0]}
        since = {i.user_id: i.since for i in graph.followers(hub)}
        assert all(one.edges[fan, hub]["since"] == since[fan] for fan in fans)
        two = graph.ego_graph(hub, radius=2)
        assert far in two and two.has_edge(far, fans[1])
        assert graph.ego_graph(hub, radius=2, max_nodes=4).number_of_nodes() == 4
        sub = graph.subgraph([hub, fans[0], fans[1], far])
        assert set(sub.edges) == {(fans[0], hub), (fans[1], hub), (hub, fans[0]), (far, fans[1])}


def test_a_failure_says_what_where_and_which_request(api: str, service_key: str) -> None:
    me = new_user_id("me")
    with GraphClient(api, service_key) as graph:
        with pytest.raises(Forbidden) as refused:
            graph.follow(me, me)
        error = refused.value
        assert (error.status, error.code, error.method) == (403, "self_follow", "PUT")
        assert error.url == f"{api}/v1/users/{me}/following/{me}"
        assert error.request_id and error.request_id in str(error)
        with pytest.raises(BadRequest) as invalid:
            graph.set_privacy(me, followers_visibility="everyone")  # type: ignore[arg-type]
        assert invalid.value.code == "invalid_argument" and invalid.value.status is None
        with pytest.raises(TypeError):
            graph.set_privacy(me, followers_visibilty="mutuals")  # type: ignore[call-arg]
    dead = GraphClient(f"http://127.0.0.1:{free_port()}", "k", max_retries=0)
    with dead, pytest.raises(Unavailable) as unreachable:
        dead.counts(me)
    assert unreachable.value.code == "unreachable" and unreachable.value.status is None
    assert "could not reach http://127.0.0.1:" in str(unreachable.value)


def test_an_ego_graph_is_networkx_s_on_the_same_follows(api: str, service_key: str) -> None:
    """The neighbourhood and every follow among its nodes, as networkx.ego_graph has them
    (undirected=True: followers and followings both count as neighbours)."""
    import random

    import networkx

    rng = random.Random(5)
    users = [new_user_id(f"n{i}") for i in range(14)]
    follows = {(a, b) for a in users for b in users if a != b and rng.random() < 0.18}
    truth = networkx.DiGraph(sorted(follows))
    truth.add_nodes_from(users)
    with GraphClient(api, service_key) as graph:
        for a, b in sorted(follows):
            graph.follow(a, b)
        for radius in (1, 2):
            for user in users[:4]:
                expected = networkx.ego_graph(truth, user, radius=radius, undirected=True)
                got = graph.ego_graph(user, radius=radius)
                assert set(got.nodes) == set(expected.nodes), (user, radius)
                assert set(got.edges) == set(expected.edges), (user, radius)


async def test_an_ego_graph_holds_what_its_viewer_may_see(
    api: str, service_key: str, backends: Services
) -> None:
    hub, fan, shy, far, stranger = (new_user_id(n) for n in ("hub", "fan", "shy", "far", "x"))
    with GraphClient(api, service_key) as admin:
        for src, dst in ((fan, hub), (shy, hub), (hub, fan), (shy, far), (fan, far)):
            admin.follow(src, dst)
        admin.set_privacy(shy, following_visibility="private")
        assert admin.ego_graph(hub, radius=2).has_edge(shy, far)  # an admin sees everything
    product = (await backends.access.create(frozenset({Scope.READ}), name="ego")).token
    with GraphClient(api, product, viewer=stranger) as graph:
        seen = graph.ego_graph(hub, radius=2)
        assert seen.has_edge(fan, far) and not seen.has_edge(shy, far)
        assert (shy, "following") in seen.graph["hidden_lists"]
    with GraphClient(api, service_key) as admin:
        admin.set_privacy(hub, followers_visibility="private")
    with GraphClient(api, product, viewer=stranger) as graph:
        own = graph.ego_graph(hub)
        assert set(own.edges) == {(hub, fan)}
        assert own.graph["hidden_lists"] == [(hub, "followers")]


async def test_new_followers_stream(api: str, service_key: str) -> None:
    import asyncio

    star, fan = new_user_id("star"), new_user_id("fan")
    async with AsyncGraphClient(api, service_key) as graph:
        stream = graph.new_followers(star)

        async def first() -> NewFollower:
            return await anext(stream)

        waiting = asyncio.create_task(first())
        await asyncio.sleep(0.5)  # connected
        await graph.follow(fan, star)
        event = await asyncio.wait_for(waiting, 10)
        assert event["follower"] == fan and event["entry_id"] and not event["requested"]
        assert set(event) == set(NewFollower.__annotations__)
        await graph.set_privacy(star, locked=True)
        asker = new_user_id("asker")
        assert (await graph.follow(asker, star)).requested
        request = await asyncio.wait_for(anext(stream), 10)
        assert (request["follower"], request["requested"]) == (asker, True)
        await stream.aclose()


async def test_a_stream_the_server_ends_raises_what_it_said(
    server_settings: Settings, backends: Services
) -> None:
    """A revoked key's stream ends with a ``closed`` event: the client raises it."""
    made = await backends.access.create(frozenset({Scope.READ}), name="client stream")
    fast = {"EVENTS_RECHECK_SECONDS": "0.5", "API_KEY_CACHE_SECONDS": "0.5"}
    with served_api(server_settings, **fast) as url:
        async with AsyncGraphClient(url, made.token) as graph:
            stream = graph.new_followers(new_user_id("star"))
            waiting = asyncio.create_task(anext(stream))
            await asyncio.sleep(0.5)  # connected
            await backends.access.revoke(made.key.id)  # through another process
            with pytest.raises(GraphError) as closed:
                await asyncio.wait_for(waiting, 10)
            assert closed.value.code == "unauthenticated"


def test_every_other_method(api: str, service_key: str) -> None:
    from datetime import UTC, datetime

    a, b, c = new_user_id("a"), new_user_id("b"), new_user_id("c")
    with GraphClient(api, service_key) as graph:
        for src, dst in ((a, b), (b, a), (a, c), (b, c), (c, a)):
            graph.follow(src, dst)
        assert [i.user_id for i in graph.friends(a)] == [c, b]
        assert {i.user_id for i in graph.following(a, not_following_back=True)} == set()
        assert list(graph.common_following(a, b)) == [c]
        page = next(graph.common_following(a, b).pages())  # the whole body, its total too
        assert (page.items, page.total, page.total_is_lower_bound) == ([c], 1, False)
        assert list(graph.common_followers(a, c)) == [b]
        assert graph.unfollow(a, c).removed is True
        assert graph.block(a, b).removed_follows == 2
        assert graph.unblock(a, b).removed is True
        assert graph.set_status(c, "suspended").status == "suspended"
        assert graph.status(c).status == "suspended"
        assert graph.set_status(c, "active").status == "active"
        now = datetime.now(UTC)
        assert graph.record_interactions([(a, c, "message", now)]).accepted == 1
        found = graph.suggestions(a)
        frame = found.to_pandas()
        assert list(frame.columns) == ["user_id", "score", "mutual_count", "via", "sources"]
        assert list(frame["user_id"]) == [s.user_id for s in found.items]
        assert graph.dismiss(a, c).dismissed is True
        shown = [s.user_id for s in found.items[:2]]  # only served suggestions' shows count
        recorded = graph.record_impressions(a, [*shown, new_user_id("never")])
        assert (recorded.recorded, recorded.ignored) == (len(shown), 1)
        assert isinstance(graph.affinities(a).items, list)
        assert graph.erase(new_user_id("ghost")).state == "absent"


def test_a_conflict_is_typed(server_settings: Settings, service_key: str) -> None:
    me = new_user_id("me")
    limited = served_api(server_settings, RATE_LIMITS_ENABLED="0", MAX_FOLLOWING="1")
    with limited as url, GraphClient(url, service_key) as graph:
        graph.follow(me, new_user_id("one"))
        with pytest.raises(Conflict) as full:
            graph.follow(me, new_user_id("two"))
        assert full.value.status == 409 and full.value.code == "following_limit"


def test_timelines_through_the_client(api: str, service_key: str) -> None:
    from datetime import UTC, datetime, timedelta

    reader, author = new_user_id("reader"), new_user_id("author")
    start = datetime.now(UTC) - timedelta(hours=1)
    with GraphClient(api, service_key) as graph:
        assert list(graph.timeline(reader)) == []  # a first read: the reader is active now
        graph.follow(reader, author)
        posted = [graph.publish(author, f"p{n}", start + timedelta(minutes=n)) for n in range(3)]
        assert [p.mode for p in posted] == ["push"] * 3
        assert graph.publish(author, "p0", start).created is False
        for _ in range(200):  # the fan-outs run in the server
            if all(graph.post(author, f"p{n}").state == "done" for n in range(3)):
                break
            time.sleep(0.05)
        walked = [item.post_id for item in graph.timeline(reader, page_size=2)]
        assert walked == ["p2", "p1", "p0"]
        assert graph.delete_post(author, "p1").deleted is True
        frame = graph.timeline(reader).to_pandas()
        assert list(frame["post_id"]) == ["p2", "p0"] and set(frame) == {"post_id", "author", "at"}
        assert graph.post(author, "p1").state in ("deleting", "deleted")
