"""`make bench`'s list rows, measured on the loaded graph in the same run as the others.

- A curate list of 5,000 members (the 5 most followed accounts among them, pulled; the others
  pushed), each member with 2 posts: its timeline read through the API by its owner and by a
  stranger (limit 20), against pull-everything in this process (every member's posts merged on
  read, as a list without a timeline of its own would be read), and the service's own read in
  this process.
- The same list's first page of members (limit 100) through the API, against the Cypher query
  alone (the store's floor: the adapter's read, no HTTP, no service).
- A subscription to a moderation list of the same 5,000 members, through the API: how long
  until it is applied (5,000 blocks through the write order, in the worker), and until
  unsubscribing has undone them all.
"""

from __future__ import annotations

import asyncio
import collections
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench.timelines import SAMPLES, _follower_counts, _micros, _timed
from graphsvc.bootstrap import Services, open_services
from graphsvc.domain.access import VIEWER_HEADER
from graphsvc.domain.lists import Purpose
from graphsvc.domain.privacy import Viewer
from graphsvc.domain.timeline import Post, newest_first
from graphsvc.settings import Settings

OWNER = "bench.list.owner"
STRANGER = "bench.list.stranger"
MEMBERS = 5_000
CELEBRITIES = 5
POSTS = 2
APPLIED_WITHIN = 600.0  # seconds a subscription's work may take before the bench gives up


def _members(followers: collections.Counter[str], threshold: int) -> list[str]:
    """The CELEBRITIES most followed accounts, then the most followed below the celebrity
    threshold, MEMBERS in all."""
    ranked = [u for u, _ in followers.most_common()]
    ordinary = [u for u in ranked if followers[u] < threshold]
    return ranked[:CELEBRITIES] + ordinary[: MEMBERS - CELEBRITIES]


async def _publish(
    services: Services, members: list[str], followers: collections.Counter[str]
) -> None:
    """Each member's POSTS posts in its author's posts (stable ids: a run publishes the same
    ones again); celebrities through the service (pulled), the others straight into their
    posts, without a fan-out (the list's timeline is built from them on its first read)."""
    base = datetime(2026, 2, 1, tzinfo=UTC)
    threshold = services.settings.timelines.timeline_celebrity_followers
    author_posts = services.core.redis.author_posts
    for n, member in enumerate(members):
        for k in range(POSTS):
            at = base + timedelta(seconds=n * POSTS + k)
            if followers[member] >= threshold:
                await services.timelines.publish(member, f"bench-l{k}", at)
            else:
                post = Post.of(member, f"bench-l{k}", int(at.timestamp() * 1e6))
                await author_posts.publish(post, f"bench-l{k}", followers=followers[member])


async def _new_list(services: Services, name: str, purpose: Purpose, members: list[str]) -> str:
    made = await services.lists.create(OWNER, name, "", private=False, purpose=purpose)
    batch = services.settings.lists.list_batch_max
    for start in range(0, len(members), batch):
        await services.lists.change_members(OWNER, made.id, members[start : start + batch], [])
    return made.id


async def _pull_everything(services: Services, members: list[str], limit: int) -> list[Post]:
    pages, inactive, _ = await services.core.redis.author_posts.pages_and_hidden(
        members, None, limit + 1, []
    )
    return [p for p in newest_first(pages) if p.author not in inactive][:limit]


async def _until(http: httpx.AsyncClient, path: str, done: Any) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < APPLIED_WITHIN:
        response = await http.get(path)
        if done(response):
            return time.perf_counter() - started
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{path}: not done within {APPLIED_WITHIN} s")


async def measure(settings: Settings, graph: Path, api_url: str, api_key: str) -> dict[str, Any]:
    followers = _follower_counts(graph)
    members = _members(followers, settings.timelines.timeline_celebrity_followers)
    run = int(time.time())
    figures: dict[str, Any] = {"members": len(members)}
    async with open_services(settings) as services:
        await _publish(services, members, followers)
        started = time.perf_counter()
        curate = await _new_list(services, f"bench {run}", Purpose.CURATE, members)
        figures["add_members_s"] = time.perf_counter() - started
        found = await services.lists.get(OWNER, curate, Viewer(OWNER))
        figures["pulled_members"] = len(
            await services.core.redis.home_timelines.pulled_among(members)
        )

        headers = {"Authorization": f"Bearer {api_key}"}
        async with httpx.AsyncClient(base_url=api_url, headers=headers, timeout=60) as http:
            timeline = f"/v1/users/{OWNER}/lists/{curate}/timeline"
            as_owner, as_stranger = {VIEWER_HEADER: OWNER}, {VIEWER_HEADER: STRANGER}

            async def read(viewer: dict[str, str]) -> None:
                response = await http.get(timeline, params={"limit": 20}, headers=viewer)
                assert response.status_code == 200, response.text
                assert len(response.json()["items"]) == 20

            first = time.perf_counter()
            await read(as_owner)  # the first read builds the list's timeline
            figures["first_read_ms"] = (time.perf_counter() - first) * 1e3
            figures["read_owner_api"] = _micros(await _timed(lambda: read(as_owner), SAMPLES))
            figures["read_stranger_api"] = _micros(await _timed(lambda: read(as_stranger), SAMPLES))
            figures["read_inproc"] = _micros(
                await _timed(
                    lambda: services.lists.timeline(OWNER, curate, Viewer(OWNER), 20), SAMPLES
                )
            )
            figures["read_pull_everything_inproc"] = _micros(
                await _timed(lambda: _pull_everything(services, members, 20), SAMPLES // 10)
            )
            ours = [
                p.member
                for p in (await services.lists.timeline(OWNER, curate, Viewer(OWNER), 20)).items
            ]
            pulled = [p.member for p in await _pull_everything(services, members, 20)]
            figures["same_answer"] = ours == pulled

            async def page() -> None:
                response = await http.get(
                    f"/v1/users/{OWNER}/lists/{curate}/members", params={"limit": 100}
                )
                assert response.status_code == 200, response.text

            figures["members_page_api"] = _micros(await _timed(page, SAMPLES))
            store = services.core.neo4j.lists
            figures["members_page_cypher"] = _micros(
                await _timed(
                    lambda: store.members_page(
                        OWNER, curate, everything=True, viewer=None, after=None, limit=101
                    ),
                    SAMPLES,
                )
            )
            figures["members_count"] = found.members

            moderation = await _new_list(services, f"bench mods {run}", Purpose.MODERATION, members)
            subscriber = f"bench.subscriber.{run}"
            path = f"/v1/users/{subscriber}/list-subscriptions/{moderation}"
            started = time.perf_counter()
            response = await http.put(path, json={"action": "block"})
            assert response.status_code == 202, response.text
            figures["subscribe_accepted_ms"] = (time.perf_counter() - started) * 1e3
            figures["applied_s"] = (
                await _until(http, path, lambda r: r.json().get("state") == "applied")
                + figures["subscribe_accepted_ms"] / 1e3
            )
            state = (await http.get(path)).json()
            figures["applied"], figures["refused"] = state["applied"], state["refused"]
            response = await http.delete(path)
            assert response.status_code == 202, response.text
            blocks = f"/v1/users/{subscriber}/blocks"
            http.headers[VIEWER_HEADER] = subscriber  # the subscriber's own view

            def none_left(answer: httpx.Response) -> bool:
                assert answer.status_code == 200, answer.text
                return not answer.json()["items"]

            figures["undone_s"] = await _until(http, blocks, none_left)
            left = (await http.get(blocks, params={"limit": 10})).json()["items"]
            figures["blocks_left"] = len(left)
        await services.lists.delete(OWNER, curate)
        await services.lists.delete(OWNER, moderation)
    return figures


def rows(f: dict[str, Any]) -> list[dict[str, Any]]:
    owner, stranger = f["read_owner_api"], f["read_stranger_api"]
    inproc, pull = f["read_inproc"], f["read_pull_everything_inproc"]
    speedup = pull["p50_us"] / inproc["p50_us"]
    page, floor = f["members_page_api"], f["members_page_cypher"]
    rate = f["applied"] / f["applied_s"] if f["applied_s"] else 0.0
    return [
        {
            "row": f"list timeline read, {f['members']:,} members ({f['pulled_members']} pulled "
            f"celebrities), limit 20: API as owner p50 {owner['p50_us']:,.0f}us p99 "
            f"{owner['p99_us']:,.0f}us, as a stranger p50 {stranger['p50_us']:,.0f}us p99 "
            f"{stranger['p99_us']:,.0f}us; in process p50 {inproc['p50_us']:,.0f}us, "
            f"pull-everything p50 {pull['p50_us']:,.0f}us (same first page: "
            f"{f['same_answer']}); first read (builds it) {f['first_read_ms']:,.0f} ms",
            "measured": f"API p99 {max(owner['p99_us'], stranger['p99_us']) / 1e3:.2f} ms; "
            f"{speedup:.1f}x faster than pull-everything (p50, in process)",
            "target": "API p99 <= 10 ms and >= 10x faster than pull-everything",
            "pass": max(owner["p99_us"], stranger["p99_us"]) <= 10_000 and speedup >= 10,
        },
        {
            "row": f"list members page, {f['members_count']:,} members, limit 100: API p50 "
            f"{page['p50_us']:,.0f}us p99 {page['p99_us']:,.0f}us; the Cypher query alone p50 "
            f"{floor['p50_us']:,.0f}us p99 {floor['p99_us']:,.0f}us ({f['add_members_s']:.1f} s "
            "to add them, 100 a request, in process)",
            "measured": f"API p99 {page['p99_us'] / 1e3:.2f} ms; "
            f"{page['p50_us'] / floor['p50_us']:.2f}x the query alone (p50)",
            "target": "API p99 <= 25 ms",
            "pass": page["p99_us"] <= 25_000,
        },
        {
            "row": f"moderation list subscription, {f['members']:,} members, block: accepted in "
            f"{f['subscribe_accepted_ms']:,.0f} ms, applied ({f['applied']:,} blocks, "
            f"{f['refused']} refused) in {f['applied_s']:,.1f} s; unsubscribed, all undone in "
            f"{f['undone_s']:,.1f} s ({f['blocks_left']} blocks left)",
            "measured": f"{rate:,.0f} blocks/s applied",
            "target": "applied <= 30 s, undone <= 30 s, nothing left",
            "pass": f["applied_s"] <= 30
            and f["undone_s"] <= 30
            and f["blocks_left"] == 0
            and f["applied"] == f["members"],
        },
    ]
