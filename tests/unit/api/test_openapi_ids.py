"""The OpenAPI document reads well to an SDK generator: each operation's id is short, stable and
its endpoint's name, and every operation sits in a documented family (tag). The list below is
the SDKs' method names: a change to it is a breaking change for every generated client. Every
error answer is documented as JSON."""

from __future__ import annotations

from typing import Any

import pytest

from graphsvc.api.app import TAGS, create_app
from graphsvc.settings import Settings
from tests.support.paths import ROOT

OPERATION_IDS = {
    "follow", "unfollow", "remove_follower", "remove_followers", "get_relationships", "block",
    "unblock", "mute", "unmute", "list_mutes", "list_follow_requests",
    "list_sent_follow_requests", "approve_follow_request", "reject_follow_request",
    "approve_all_follow_requests", "get_privacy", "set_privacy", "list_followers",
    "list_following", "list_friends", "list_blocks", "get_counts", "list_common_following",
    "list_common_followers", "list_familiar_followers", "set_status", "get_status",
    "erase_user", "record_interactions", "get_suggestions", "get_similar",
    "dismiss_suggestion", "record_impressions", "get_affinities", "get_suggestions_report",
    "explain_suggestion", "publish_post", "get_post", "delete_post", "get_timeline",
    "list_keys", "create_key", "revoke_key", "health", "livez", "readyz", "metrics",
    "stream_new_followers", "stream_notifications", "follower_changes", "following_changes",
    "follower_series", "following_series", "list_familiar_followers_many",
    "get_distance", "count_audience", "page_audience", "create_list", "list_lists", "get_list",
    "update_list", "delete_list", "list_members", "list_timeline", "change_list_members",
    "follow_list", "unfollow_list", "list_followed_lists", "subscribe_list",
    "get_list_subscription", "unsubscribe_list", "list_list_subscriptions",
    "except_list_member", "unexcept_list_member", "list_subscription_exceptions",
    "export_relations", "import_relations", "get_import",
    "add_alias", "remove_alias", "list_aliases", "move", "get_move",
}  # fmt: skip


@pytest.fixture(scope="module")
def operations() -> list[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DEVELOPMENT", "1")  # the source's secrets: the document needs no other
        document = create_app(Settings()).openapi()
    return [op for path in document["paths"].values() for op in path.values()]


def test_operation_ids_are_short_stable_and_unique(operations: list[dict[str, Any]]) -> None:
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    assert set(ids) == OPERATION_IDS


def test_every_operation_is_in_a_documented_family(operations: list[dict[str, Any]]) -> None:
    documented = {tag["name"] for tag in TAGS}
    assert all(tag["description"] for tag in TAGS)
    for op in operations:
        assert op.get("tags") and set(op["tags"]) <= documented, op["operationId"]


def test_every_operation_has_an_example_on_the_api_page(operations: list[dict[str, Any]]) -> None:
    """One recorded exchange per operation, shown on docs/api.md (and in the document)."""
    from graphsvc.api.http.contract import EXAMPLES

    page = (ROOT / "docs" / "api.md").read_text()
    for op in operations:
        assert op["operationId"] in EXAMPLES, op["operationId"]
        assert f"<!-- example: {op['operationId']} -->" in page, op["operationId"]
    documented = [
        op for op in operations for answer in op["responses"].values()
        for media in answer.get("content", {}).values() if "example" in media
    ]  # fmt: skip
    assert len(documented) >= len(operations) - 2  # the stream and the metrics answer text


def test_each_route_is_declared_once_and_documented_with_its_bounds() -> None:
    """One declaration per method and path serves the route and documents it: no second
    handler stands behind another, and a lean route's parameters keep their bounds."""
    from fastapi.routing import APIRoute

    from graphsvc.api.http.lean import LeanRoute

    with pytest.MonkeyPatch.context() as env:
        env.setenv("DEVELOPMENT", "1")
        app = create_app(Settings())
    served = [(m, r.path) for r in app.routes if isinstance(r, APIRoute) for m in r.methods]
    assert len(served) == len(set(served))
    assert all(isinstance(r, APIRoute) for r in app.routes if r.path.startswith("/v1/"))
    lean = {r.name for r in app.routes if isinstance(r, LeanRoute)}
    assert {"follow", "unfollow", "list_followers", "list_following", "get_counts"} <= lean
    document = app.openapi()
    limit = next(
        p
        for p in document["paths"]["/v1/users/{user_id}/followers"]["get"]["parameters"]
        if p["name"] == "limit"
    )
    assert limit["schema"]["minimum"] == 1 and limit["schema"]["maximum"] > 1


def test_no_request_can_match_two_routes() -> None:
    """Two routes with a method in common never match the same path (their templates cannot
    unify), so the order routes are tried in decides nothing but speed: the app tries the
    hottest first."""
    from fastapi.routing import APIRoute

    with pytest.MonkeyPatch.context() as env:
        env.setenv("DEVELOPMENT", "1")
        routes = [r for r in create_app(Settings()).routes if isinstance(r, APIRoute)]

    def unify(one: str, other: str) -> bool:
        a, b = one.split("/"), other.split("/")
        return len(a) == len(b) and all(
            x == y or x.startswith("{") or y.startswith("{") for x, y in zip(a, b, strict=True)
        )

    for i, route in enumerate(routes):
        for other in routes[i + 1 :]:
            if route.methods & other.methods:
                assert not unify(route.path, other.path), (route.path, other.path)


def test_every_error_response_is_documented_as_json() -> None:
    paths = create_app(Settings()).openapi()["paths"]
    documented = [
        (path, method, status, response.get("content", {}))
        for path, operations in paths.items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status[0] in "45"
    ]
    assert len(documented) > 50
    assert [d for d in documented if list(d[3]) != ["application/json"]] == []
