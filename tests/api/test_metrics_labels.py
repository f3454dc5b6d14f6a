"""The request metrics' labels stay bounded whatever callers send: a method outside the
standard ones is counted as ``other``, never under its own name."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import httpx

from tests.support.run import new_user_id

MakeClient = Callable[..., httpx.AsyncClient]
OTHER = re.compile(r'^graphsvc_http_requests_total\{method="other",.*\} ([0-9.e+]+)$', re.M)


def others(text: str) -> float:
    return sum(float(found) for found in OTHER.findall(text))


async def test_made_up_methods_are_counted_as_other(make_client: MakeClient) -> None:
    made_up = [f"M{uuid.uuid4().hex[:10].upper()}", f"X-{uuid.uuid4().hex[:6]}", "PURGE"]
    async with make_client() as http, make_client(key=None) as anonymous:
        before = others((await anonymous.get("/metrics")).text)
        for method in made_up:
            for path in (f"/v1/users/{new_user_id()}/counts", "/no/such/route"):
                response = await http.request(method, path)
                assert response.status_code in (404, 405), (method, path, response.status_code)
        text = (await anonymous.get("/metrics")).text
    methods = set(re.findall(r'\bmethod="([^"]*)"', text))
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}
    for method in made_up:
        assert f'method="{method}"' not in text
    assert others(text) == before + 2 * len(made_up)
