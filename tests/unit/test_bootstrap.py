"""Each process builds what it uses and nothing else: the API none of the background work, nor
the job kinds it only records; the worker none of what only routes call. Building does no I/O
(the driver and the Redis client connect on first use), so no server is needed.

What a process built is found by walking the object graph from its parts, through every
graphsvc object's attributes (the adapters are built on first use, so an adapter nobody
reached is not there)."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from graphsvc.adapters.neo4j.store import open_driver
from graphsvc.adapters.redis.client import open_redis
from graphsvc.bootstrap import Connections, build, build_operations, build_serving, build_working
from graphsvc.builders.bundles import Serving
from graphsvc.settings import Settings
from tests.support.paths import ROOT

API = ROOT / "graphsvc" / "api"

BACKGROUND_ONLY = {
    "Relay", "InteractionFlusher", "RankerTraining", "TimelineEvents", "ModerationJobs",
    "ColdStartKeeper", "ChangeExpiry", "Worker", "RequestApprovals", "TimelineErasure",
    "BulkStore", "ExportStore",
}  # fmt: skip
ROUTES_ONLY = {
    "RateLimits", "FollowerEvents", "GraphPages", "Changes", "GrowthSeries", "Distances",
    "Audiences", "SuggestionExplainer", "SimilarAccounts", "Health", "Gauges", "Moderation",
    "Timelines", "RateLimitStore", "BulkStore", "ExportStore",
}  # fmt: skip


def _connections() -> Connections:
    settings = Settings()
    return Connections(open_driver(settings.neo4j), open_redis(settings.redis))


def _built(root: object) -> Iterator[object]:
    """Every graphsvc object reachable from ``root``."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, list | tuple | set | frozenset):
            todo.extend(item)
            continue
        if isinstance(item, dict):
            todo.extend(item.values())
            continue
        if not type(item).__module__.startswith("graphsvc."):
            continue
        yield item
        for cls in type(item).__mro__:
            todo.extend(
                getattr(item, name) for name in getattr(cls, "__slots__", ()) if hasattr(item, name)
            )
        todo.extend(getattr(item, "__dict__", {}).values())


def _kinds(root: object) -> set[str]:
    return {type(item).__name__ for item in _built(root)}


def test_the_api_builds_no_background_work() -> None:
    serving = build_serving(Settings(), _connections())
    assert not _kinds(serving) & BACKGROUND_ONLY


def test_the_worker_builds_nothing_only_routes_call() -> None:
    working = build_working(Settings(), _connections())
    assert not _kinds(working) & ROUTES_ONLY


def test_every_part_of_the_worker_is_run_by_it() -> None:
    working = build_working(Settings(), _connections())
    reached = {id(item) for item in _built(working.background.worker)}
    for part in dataclasses.fields(working.background):
        assert id(getattr(working.background, part.name)) in reached, part.name


def test_an_operations_command_builds_neither_routes_nor_background_until_it_asks() -> None:
    operations = build_operations(Settings(), _connections())
    kinds = _kinds(operations)
    # the loads and exports are its own; follow approvals it starts it runs itself
    own = {"BulkStore", "ExportStore", "RequestApprovals"}
    assert not kinds & (ROUTES_ONLY | BACKGROUND_ONLY) - own
    assert {"Maintenance", "Consistency", "BulkStore", "ExportStore"} <= kinds
    assert operations.background.relay is operations.background.relay  # built once, on use
    assert {"Relay", "Worker"} <= _kinds(operations)
    assert not _kinds(operations) & ROUTES_ONLY - own


def test_every_service_the_api_builds_is_called_by_a_route() -> None:
    """A part of ``Serving`` no route or middleware names is a part the API never uses."""
    named: set[str] = set()
    for path in API.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                named.add(node.attr)
    # plans: made by bootstrap.open_serving before the first request, not by a route
    unused = {f.name for f in dataclasses.fields(Serving)} - named - {"settings", "core", "plans"}
    assert not unused


def test_the_whole_shares_one_core_between_routes_and_background() -> None:
    """The CLI, tests and notebooks build both; the walk finds both sides' parts there."""
    services = build(Settings(), _connections())
    kinds = _kinds(services)
    assert BACKGROUND_ONLY - {"BulkStore", "ExportStore"} <= kinds
    assert ROUTES_ONLY - {"BulkStore", "ExportStore"} <= kinds
    assert services.background.worker is services.background.worker
    core_ids = {id(item) for item in _built(services.core)}
    assert id(services.relations) in core_ids and id(services.follow_pages) in core_ids
