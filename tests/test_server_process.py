"""The real thing: `graphsvc serve` in its own process, spoken to over TCP."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from helpers import full_counts, served_api

from graphsvc.settings import Settings

UserIds = Callable[[str], str]


@pytest.fixture(scope="module")
def base_url(server_settings: Settings) -> Iterator[str]:
    with served_api(server_settings) as url:
        yield url


def test_served_api_follows_pages_and_counts(base_url: str, service_key: str, uid: UserIds) -> None:
    a, b, c = uid("a"), uid("b"), uid("c")
    headers = {"Authorization": f"Bearer {service_key}"}
    with httpx.Client(base_url=base_url, timeout=10, headers=headers) as http:
        assert http.put(f"/v1/users/{a}/following/{c}").json() == {
            "following": True,
            "created": True,
        }
        assert http.put(f"/v1/users/{b}/following/{c}").json()["created"] is True
        page = http.get(f"/v1/users/{c}/followers", params={"limit": 1}).json()
        assert [i["user_id"] for i in page["items"]] == [b]
        rest = http.get(f"/v1/users/{c}/followers", params={"cursor": page["next_cursor"]}).json()
        assert [i["user_id"] for i in rest["items"]] == [a] and rest["next_cursor"] is None
        assert http.get(f"/v1/users/{c}/counts").json() == full_counts(2, 0)
        bad = http.put(f"/v1/users/{a}/following/not%20valid")
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_user_id"
        assert "swagger" in http.get("/docs").text.lower()
