"""Every route's documented example is a real exchange with the service: this scenario plays
one request per operation against the app on the real stores, in an order that gives each a
meaningful answer, and checks the answer has the documented example's shape (same keys, same
JSON types, recursively). With RECORD_EXAMPLES=1 it writes the answers as the examples
(graphsvc/api/http/examples.json), the run's unique ids written back as plain names."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from graphsvc.api.http.contract import EXAMPLES, EXAMPLES_PATH

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "lena", "mallory", "gone", "zoe"]
NOW = datetime.now(UTC).replace(microsecond=0)
EARLIER = (NOW - timedelta(hours=1)).isoformat().replace("+00:00", "Z")

# (operation id, method, path, query, body): {name} is a user of this run, {key_id} the key
# the scenario creates, {list_id} the list it creates. The order matters: each step leaves what
# the next one shows.
SCENARIO: list[tuple[str, str, str, dict[str, Any], Any]] = [
    ("follow", "PUT", "/v1/users/{alice}/following/{bob}", {"notify": "true", "languages": "en,de"}, None),
    ("unfollow", "DELETE", "/v1/users/{alice}/following/{zoe}", {}, None),
    ("remove_follower", "DELETE", "/v1/users/{bob}/followers/{dave}", {}, None),
    ("remove_followers", "POST", "/v1/users/{bob}/followers/remove", {}, {"ids": ["{erin}", "{frank}"]}),
    ("follower_changes", "GET", "/v1/users/{bob}/followers/changes", {"limit": 10}, None),
    ("following_changes", "GET", "/v1/users/{alice}/following/changes", {"limit": 10}, None),
    ("follower_series", "GET", "/v1/users/{bob}/followers/series", {"bucket": "day", "from": EARLIER}, None),
    ("following_series", "GET", "/v1/users/{alice}/following/series", {"bucket": "hour", "from": EARLIER}, None),
    ("get_relationships", "GET", "/v1/users/{alice}/relationships", {"ids": "{bob},{carol}"}, None),
    ("block", "PUT", "/v1/users/{alice}/blocks/{mallory}", {}, None),
    ("list_blocks", "GET", "/v1/users/{alice}/blocks", {"limit": 10}, None),
    ("unblock", "DELETE", "/v1/users/{alice}/blocks/{mallory}", {}, None),
    ("mute", "PUT", "/v1/users/{alice}/mutes/{dave}", {}, {"notifications": True, "duration_seconds": 86400}),
    ("list_mutes", "GET", "/v1/users/{alice}/mutes", {"limit": 10}, None),
    ("unmute", "DELETE", "/v1/users/{alice}/mutes/{dave}", {}, None),
    ("create_list", "POST", "/v1/users/{alice}/lists", {}, {"name": "Graph people", "description": "who writes about graphs"}),
    ("change_list_members", "POST", "/v1/users/{alice}/lists/{list_id}/members", {}, {"add": ["{bob}", "{carol}", "{dave}"], "remove": []}),
    ("list_members", "GET", "/v1/users/{alice}/lists/{list_id}/members", {"limit": 10}, None),
    ("update_list", "PATCH", "/v1/users/{alice}/lists/{list_id}", {}, {"name": "Graph folk", "private": True}),
    ("get_list", "GET", "/v1/users/{alice}/lists/{list_id}", {}, None),
    ("list_lists", "GET", "/v1/users/{alice}/lists", {"member": "{bob}", "limit": 10}, None),
    ("set_privacy", "PUT", "/v1/users/{lena}/privacy", {}, {"locked": True, "followers_visibility": "mutuals"}),
    ("get_privacy", "GET", "/v1/users/{lena}/privacy", {}, None),
    ("list_follow_requests", "GET", "/v1/users/{lena}/follow-requests", {"limit": 10}, None),
    ("list_sent_follow_requests", "GET", "/v1/users/{erin}/follow-requests/sent", {"limit": 10}, None),
    ("approve_follow_request", "PUT", "/v1/users/{lena}/follow-requests/{erin}", {}, None),
    ("reject_follow_request", "DELETE", "/v1/users/{lena}/follow-requests/{frank}", {}, None),
    ("approve_all_follow_requests", "POST", "/v1/users/{lena}/follow-requests/approve-all", {}, None),
    ("list_followers", "GET", "/v1/users/{carol}/followers", {"limit": 3}, None),
    ("list_following", "GET", "/v1/users/{alice}/following", {"limit": 3}, None),
    ("list_friends", "GET", "/v1/users/{alice}/friends", {"limit": 3}, None),
    ("get_counts", "GET", "/v1/users/{carol}/counts", {}, None),
    ("list_common_following", "GET", "/v1/users/{alice}/common-following/{bob}", {"limit": 10}, None),
    ("list_common_followers", "GET", "/v1/users/{carol}/common-followers/{dave}", {"limit": 10}, None),
    ("list_familiar_followers_many", "GET", "/v1/users/{alice}/familiar-followers", {"ids": "{carol},{bob}"}, None),
    ("get_distance", "GET", "/v1/users/{erin}/distance/{alice}", {}, None),
    ("count_audience", "POST", "/v1/audiences/count", {}, {"expr": {"and": [{"followers": "{carol}"}, {"followers": "{bob}"}, {"not": {"following": "{alice}"}}]}}),
    ("page_audience", "POST", "/v1/audiences/page", {}, {"expr": {"or": [{"followers": "{carol}"}, {"followers": "{dave}"}]}, "limit": 3}),
    ("list_familiar_followers", "GET", "/v1/users/{alice}/familiar-followers/{carol}", {"limit": 3}, None),
    ("set_status", "PUT", "/v1/users/{mallory}/status", {}, {"status": "spam"}),
    ("get_status", "GET", "/v1/users/{mallory}/status", {}, None),
    ("erase_user", "DELETE", "/v1/users/{gone}", {}, None),
    ("record_interactions", "POST", "/v1/interactions", {}, [{"actor": "{alice}", "target": "{bob}", "kind": "message", "at": EARLIER}]),
    ("get_suggestions", "GET", "/v1/users/{alice}/suggestions", {"limit": 3}, None),
    ("get_similar", "GET", "/v1/users/{alice}/suggestions/similar/{bob}", {"limit": 3}, None),
    ("dismiss_suggestion", "DELETE", "/v1/users/{alice}/suggestions/{frank}", {}, None),
    ("record_impressions", "POST", "/v1/users/{alice}/suggestions/impressions", {}, {"ids": ["{dave}", "{erin}"]}),
    ("get_affinities", "GET", "/v1/internal/users/{alice}/affinities", {"limit": 3}, None),
    ("get_suggestions_report", "GET", "/v1/internal/suggestions/report", {}, None),
    ("explain_suggestion", "GET", "/v1/internal/users/{alice}/suggestions/explain/{dave}", {}, None),
    ("publish_post", "PUT", "/v1/users/{bob}/posts/p1", {}, {"at": EARLIER, "language": "en"}),
    ("get_post", "GET", "/v1/users/{bob}/posts/p1", {}, None),
    ("get_timeline", "GET", "/v1/users/{alice}/timeline", {"limit": 3}, None),
    ("list_timeline", "GET", "/v1/users/{alice}/lists/{list_id}/timeline", {"limit": 3}, None),
    ("update_list", "PATCH", "/v1/users/{alice}/lists/{list_id}", {}, {"private": False}),
    ("follow_list", "PUT", "/v1/users/{erin}/followed-lists/{list_id}", {}, None),
    ("list_followed_lists", "GET", "/v1/users/{erin}/followed-lists", {"limit": 10}, None),
    ("unfollow_list", "DELETE", "/v1/users/{erin}/followed-lists/{list_id}", {}, None),
    ("create_list", "POST", "/v1/users/{alice}/lists", {}, {"name": "Spam accounts", "purpose": "moderation"}),
    ("change_list_members", "POST", "/v1/users/{alice}/lists/{list_id}/members", {}, {"add": ["{dave}", "{frank}"]}),
    ("subscribe_list", "PUT", "/v1/users/{erin}/list-subscriptions/{list_id}", {}, {"action": "block"}),
    ("except_list_member", "PUT", "/v1/users/{erin}/list-subscriptions/{list_id}/exceptions/{frank}", {}, None),
    ("list_subscription_exceptions", "GET", "/v1/users/{erin}/list-subscriptions/{list_id}/exceptions", {"limit": 10}, None),
    ("unexcept_list_member", "DELETE", "/v1/users/{erin}/list-subscriptions/{list_id}/exceptions/{frank}", {}, None),
    ("get_list_subscription", "GET", "/v1/users/{erin}/list-subscriptions/{list_id}", {}, None),
    ("list_list_subscriptions", "GET", "/v1/users/{erin}/list-subscriptions", {"limit": 10}, None),
    ("unsubscribe_list", "DELETE", "/v1/users/{erin}/list-subscriptions/{list_id}", {}, None),
    ("delete_list", "DELETE", "/v1/users/{alice}/lists/{list_id}", {}, None),
    ("delete_post", "DELETE", "/v1/users/{bob}/posts/p1", {}, None),
    ("create_key", "POST", "/v1/keys", {}, {"scopes": ["read", "write"], "name": "timeline service"}),
    ("list_keys", "GET", "/v1/keys", {}, None),
    ("revoke_key", "DELETE", "/v1/keys/{key_id}", {}, None),
    ("import_relations", "POST", "/v1/users/{alice}/imports/mutes", {"mode": "merge"}, [{"account": "{zoe}", "hide_notifications": True}, {"account": "nobody here"}]),
    ("get_import", "GET", "/v1/users/{alice}/imports/mutes/{import_id}", {}, None),
    ("export_relations", "GET", "/v1/users/{alice}/exports/following", {"format": "json"}, None),
    ("add_alias", "PUT", "/v1/users/{zoe}/aliases/{erin}", {}, None),
    ("list_aliases", "GET", "/v1/users/{zoe}/aliases", {}, None),
    ("move", "POST", "/v1/users/{erin}/move", {}, {"target": "{zoe}"}),
    ("get_move", "GET", "/v1/users/{erin}/move", {}, None),
    ("remove_alias", "DELETE", "/v1/users/{zoe}/aliases/{erin}", {}, None),
    ("health", "GET", "/healthz", {}, None),
    ("livez", "GET", "/livez", {}, None),
    ("readyz", "GET", "/readyz", {}, None),
]  # fmt: skip
NOT_JSON = {
    "metrics",
    "stream_new_followers",
    "stream_notifications",
}  # text answers, documented by hand


def _shape(value: Any) -> Any:
    """What a JSON value's shape is: keys and types, recursively (a list by its first item)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def _fits(example: Any, real: Any) -> bool:
    """The real answer has the example's keys and types; an empty list or a null on either
    side fits any value (the example's data and the run's differ)."""
    if example is None or real is None or example == [] or real == []:
        return True
    if isinstance(example, dict):
        return (
            isinstance(real, dict)
            and set(example) == set(real)
            and all(_fits(example[k], real[k]) for k in example)
        )
    if isinstance(example, list):
        return isinstance(real, list) and _fits(example[0], real[0])
    if isinstance(example, bool) or isinstance(real, bool):
        return isinstance(real, bool) and isinstance(example, bool)
    if isinstance(example, int | float) and isinstance(real, int | float):
        return True
    return type(example) is type(real)


async def _setup(http: httpx.AsyncClient, user: Callable[[str], str]) -> None:
    """The graph the examples are answered from."""
    follows = [
        ("alice", "carol"), ("alice", "dave"), ("alice", "zoe"), ("bob", "carol"),
        ("bob", "alice"), ("carol", "alice"), ("dave", "bob"), ("erin", "bob"),
        ("frank", "bob"), ("dave", "carol"), ("erin", "carol"), ("frank", "dave"),
        ("carol", "frank"), ("dave", "erin"), ("alice", "frank"),
        ("carol", "bob"),
    ]  # fmt: skip
    for a, b in follows:
        answer = await http.put(f"/v1/users/{user(a)}/following/{user(b)}")
        assert answer.status_code == 200, answer.text


async def test_every_documented_example_is_a_real_answer(make_client, uid) -> None:
    names = {name: uid(name) for name in NAMES}
    variables: dict[str, str] = dict(names)
    recorded: dict[str, Any] = {}
    async with make_client(changes_settle_seconds=0) as http:
        await _setup(http, names.__getitem__)
        for operation, method, path, query, body in SCENARIO:
            if operation == "list_follow_requests":  # three would-be followers of a locked user
                for fan in ("erin", "frank", "mallory"):
                    await http.put(f"/v1/users/{names[fan]}/following/{names['lena']}")
            fill = _filler(variables)
            request = {
                "method": method,
                "path": fill(path),
                "query": {k: fill(v) for k, v in query.items()},
                "body": _fill_json(body, fill),
            }
            answer = await http.request(
                method, request["path"], params=request["query"] or None, json=request["body"]
            )
            assert answer.status_code < 300, (operation, answer.status_code, answer.text)
            payload = answer.json()
            if operation == "create_key":
                variables["key_id"] = payload["id"]
            if operation == "create_list":
                variables["list_id"] = payload["id"]
            if operation == "import_relations":
                variables["import_id"] = payload["id"]
            recorded[operation] = {
                "request": request,
                "status": answer.status_code,
                "response": payload,
            }
            if not os.environ.get("RECORD_EXAMPLES"):
                documented, real = EXAMPLES[operation]["response"], _plain(payload, names)
                assert _fits(documented, real), (operation, _shape(documented), _shape(real))
    if os.environ.get("RECORD_EXAMPLES"):
        _write(recorded, names)


def _filler(variables: dict[str, str]) -> Callable[[Any], Any]:
    def fill(value: Any) -> Any:
        return value.format(**variables) if isinstance(value, str) else value

    return fill


def _fill_json(body: Any, fill: Callable[[Any], Any]) -> Any:
    if isinstance(body, dict):
        return {k: _fill_json(v, fill) for k, v in body.items()}
    if isinstance(body, list):
        return [_fill_json(v, fill) for v in body]
    return fill(body)


def _plain(value: Any, names: dict[str, str]) -> Any:
    """A JSON value with the run's ids written back as plain names (ids are also keys)."""
    text = json.dumps(value, ensure_ascii=False)
    for name, unique in sorted(names.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(unique, name)
    return json.loads(text)


def _write(recorded: dict[str, Any], names: dict[str, str]) -> None:
    """The run's ids back to plain names; the operations answered in text kept as they are."""
    text = json.dumps(_plain(recorded, names), indent=1, ensure_ascii=False)
    text = re.sub(r"gsk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", "gsk_0123456789abcdef_" + "x" * 43, text)
    examples = json.loads(text)
    examples.update({op: EXAMPLES[op] for op in NOT_JSON if op in EXAMPLES})
    EXAMPLES_PATH.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")
