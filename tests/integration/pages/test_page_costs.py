"""The Neo4j reads behind list pages cost the same at any depth and for any list length: each
is a seek in an index of the user's list, read in its order from the cursor's position and
stopped at the page's size; common lists examine at most COMMON_SCAN_MAX entries. Asserted on
the work Neo4j counts (PROFILE's db hits), never on times."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphsvc.adapters.neo4j.pages import NEWEST
from graphsvc.bootstrap import Services
from graphsvc.domain.model import Side
from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.data.loader import load_edges
from tests.support.run import new_user_id
from tests.support.stores import db_hits

FOLLOWERS = 3_000  # of the star; the fan follows as many
SMALL = 30  # followers of a small user
TIES = 12  # of the star's followers followed at one same second
T0 = 1_700_000_000  # seconds
LIMIT = 21  # a page of 20, and the one more that says whether another follows


@pytest.fixture(scope="module")
async def graph(backends: Services, touched: set[str], tmp_path_factory: pytest.TempPathFactory):
    """A star with 3,000 followers (12 of them at one same time), a small user with 30, a fan
    who follows 3,000 users, a user followed by every third of the star's followers, and one
    followed by those and by 3,000 others."""
    prefix = new_user_id("costs") + "."
    lines = [f"f{n:04d} star {T0 + n}\n" for n in range(FOLLOWERS - TIES)]
    lines += [f"tie{n:02d} star {T0 + FOLLOWERS}\n" for n in range(TIES)]
    lines += [f"f{n:04d} other {T0 + n}\n" for n in range(0, FOLLOWERS - TIES, 3)]
    lines += [f"f{n:04d} sparse {T0 + n}\n" for n in range(0, FOLLOWERS - TIES, 3)]
    lines += [f"z{n:04d} sparse {T0 + n}\n" for n in range(FOLLOWERS)]
    lines += [f"s{n:02d} small {T0 + n}\n" for n in range(SMALL)]
    lines += [f"fan i{n:04d} {T0 + n}\n" for n in range(FOLLOWERS)]
    path = tmp_path_factory.mktemp("costs") / "edges.txt"
    path.write_text("".join(lines))
    edges = read_edge_file(path, prefix=prefix)
    touched.update(edges.users)
    await load_edges(backends, edges, progress=False)
    return prefix


def page_params(user: str, since: int = NEWEST, after: str = "") -> dict[str, Any]:
    return {"id": user, "since": since, "after": after, "limit": LIMIT}


async def test_follower_pages_cost_the_same_at_any_depth_and_any_length(
    backends: Services, graph: str
) -> None:
    star, small = graph + "star", graph + "small"
    name = "pages/followers_page"
    first = await db_hits(backends, name, page_params(star))
    # deep in the list: after the 2,000th and the 2,950th newest follower
    middle = await db_hits(backends, name, page_params(star, (T0 + 988) * 10**6, f"{graph}f0988"))
    deep = await db_hits(backends, name, page_params(star, (T0 + 38) * 10**6, f"{graph}f0038"))
    # in the tie: the twelve followers of one same time, after the 4th of them by id
    tie = await db_hits(
        backends, name, page_params(star, (T0 + FOLLOWERS) * 10**6, f"{graph}tie08")
    )
    few = await db_hits(backends, name, page_params(small))
    print(
        f"followers_page db hits: first {first}, middle {middle}, deep {deep}, tie {tie}, "
        f"of {SMALL} followers {few}"
    )
    assert first < 10 * LIMIT, "a page reads far fewer entries than the list holds"
    for other in (middle, deep):
        assert abs(other - first) <= 10, (first, other)
    assert first <= tie <= 2 * first, "a page in a tie is two seeks of at most a page each"
    assert abs(first - few) <= 10, "a list of 3,000 costs what one of 30 does"


async def test_following_pages_cost_the_same_at_any_depth(backends: Services, graph: str) -> None:
    fan = graph + "fan"
    name = "pages/following_page"
    first = await db_hits(backends, name, page_params(fan))
    deep = await db_hits(backends, name, page_params(fan, (T0 + 40) * 10**6, f"{graph}i0040"))
    celebrities = await db_hits(
        backends,
        "pages/celebrities_page",
        page_params(fan, (T0 + 40) * 10**6, f"{graph}i0040")
        | {"threshold": 1, "reader": None, "everyone": False},
    )
    print(f"following_page db hits: first {first}, deep {deep}; celebrities {celebrities}")
    assert first < 10 * LIMIT
    assert abs(deep - first) <= 10, (first, deep)
    assert celebrities < 20 * LIMIT


async def test_walks_through_neo4j_pages_see_every_follower_once_in_order(
    backends: Services, graph: str
) -> None:
    """The two seeks of a page (the rest of the cursor's own time, then older times) give the
    list's exact order across pages, through the tie too."""
    for side, user in ((Side.FOLLOWERS, graph + "star"), (Side.FOLLOWING, graph + "fan")):
        seen, after = [], None
        while True:
            entries = await backends.core.neo4j.pages.page(side, user, after, 5)
            seen += entries
            if len(entries) < 5:
                break
            after = entries[-1].position
        keys = [(e.since, e.user_id) for e in seen]
        assert len(keys) == FOLLOWERS and len(set(keys)) == FOLLOWERS
        assert keys == sorted(keys, reverse=True)


async def test_a_cold_build_reads_the_newest_followers_only(backends: Services, graph: str) -> None:
    params = {"ids": [graph + "star"], "followers_limit": 101, "following_limit": 0}
    cold = await db_hits(backends, "snapshots/snapshot", params)
    print(f"snapshot db hits, newest 101 of {FOLLOWERS} followers: {cold}")
    assert cold < 10 * 101, "reads the hot list's entries, not every follower"
    found = await backends.core.neo4j.snapshots.snapshots([graph + "star"], followers_limit=101)
    newest = found[graph + "star"].followers
    assert [e.user_id for e in newest[:TIES]] == [f"{graph}tie{n:02d}" for n in range(TIES)][::-1]
    assert len(newest) == 101


async def test_common_followers_examine_at_most_the_scan_bound(
    backends: Services, graph: str
) -> None:
    star, other = graph + "star", graph + "other"
    common = [f"{graph}f{n:04d}" for n in range(0, FOLLOWERS - TIES, 3)]

    async def run(scan: int, after: str = "", limit: int = LIMIT) -> tuple[int, dict[str, Any]]:
        params = {"a": star, "b": other, "after": after, "limit": limit, "scan": scan}
        (row,) = await backends.core.neo4j.store.read("pages/common_followers", params)
        return await db_hits(backends, "pages/common_followers", params), dict(row)

    whole, row = await run(scan=10_000)
    assert row["total"] == len(common) and row["exact"] and row["page"] == common[:LIMIT]
    bounded, row = await run(scan=100)
    assert not row["exact"] and row["total"] == len(common[:100])
    print(
        f"common_followers db hits: every one of {len(common)} counted {whole}, "
        f"at most 100 examined {bounded}"
    )
    assert bounded < 10 * 100, "examines at most the scan bound, whatever the lists' lengths"
    deep, row = await run(scan=100, after=common[-10])
    assert row["page"] == common[-9:]
    assert abs(deep - bounded) <= 50, (bounded, deep)


async def test_a_sparse_common_list_is_walked_in_short_pages(
    make_client: Callable[..., httpx.AsyncClient], graph: str, tmp_path: Path
) -> None:
    """With COMMON_SCAN_MAX at 500, each request examines at most 500 of the smaller side's
    followers (the star's 3,000, of whom every third follows the other user too): pages come
    back short, with a cursor where the request stopped, and the walk sees every common
    follower once, in id order."""
    star, other = graph + "star", graph + "sparse"
    expected = [f"{graph}f{n:04d}" for n in range(0, FOLLOWERS - TIES, 3)]
    async with make_client(common_scan_max=500) as client:
        found, cursor, pages = [], None, 0
        while True:
            params = {"limit": 200} | ({"cursor": cursor} if cursor else {})
            response = await client.get(f"/v1/users/{star}/common-followers/{other}", params=params)
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["total"] == 167 and body["total_is_lower_bound"] is True
            assert len(body["items"]) <= 167
            found += body["items"]
            pages += 1
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert found == expected
        # six requests of 500 followers examined each, and one that finds the list's end
        assert pages == FOLLOWERS // 500 + 1
