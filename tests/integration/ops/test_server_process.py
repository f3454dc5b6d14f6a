"""The real thing: `graphsvc serve` in its own process, spoken to over TCP."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from graphsvc.client import GraphClient
from graphsvc.settings import Settings
from graphsvc.wire.schemas import FollowBody
from tests.support.driver import full_counts
from tests.support.helpers import served_api

UserIds = Callable[[str], str]


@pytest.fixture(scope="module")
def base_url(server_settings: Settings) -> Iterator[str]:
    with served_api(server_settings) as url:
        yield url


def test_served_api_follows_pages_and_counts(base_url: str, service_key: str, uid: UserIds) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    with GraphClient(base_url, api_key=service_key) as graph:
        assert graph.follow(a, c) == FollowBody(following=True, created=True)
        assert graph.follow(b, c).created is True
        first, rest = graph.followers(c, page_size=1).pages()
        assert [i.user_id for i in first.items] == [b]
        assert [i.user_id for i in rest.items] == [a] and rest.next_cursor is None
        assert graph.counts(c) == full_counts(2, 0)
    headers = {"Authorization": f"Bearer {service_key}"}
    with httpx.Client(base_url=base_url, timeout=10, headers=headers) as http:
        bad = http.put(f"/v1/users/{a}/following/not%20valid")
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_user_id"
        assert "swagger" in http.get("/docs").text.lower()
