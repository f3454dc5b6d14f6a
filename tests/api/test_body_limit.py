"""Request bodies are bounded before anything parses them, and errors never repeat a body."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx

from tests.support.driver import Driver

UserIds = Callable[[str], str]
MakeClient = Callable[..., httpx.AsyncClient]


def events(actor: str, target: str, n: int) -> list[dict[str, str]]:
    return [{"actor": actor, "target": target, "kind": "like", "at": "2026-11-01T00:00:00Z"}] * n


async def test_a_body_over_the_limit_is_413_and_records_nothing(
    make_driver: Callable[..., Driver], uid: UserIds
) -> None:
    me, a = uid("me"), uid("a")
    async with make_driver(request_body_max_bytes=4_096) as driver:
        client, buffer = driver.http, driver.services.interactions.buffer
        backlog = await buffer.backlog()
        response = await client.post("/v1/interactions", json=events(me, a, 100))
        assert response.status_code == 413, response.text
        assert response.json()["error"]["code"] == "body_too_large"
        assert "REQUEST_BODY_MAX_BYTES (4096 bytes)" in response.json()["error"]["message"]

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
            yield b"["
            for _ in range(200):
                yield b'{"actor": "x", "target": "y", "kind": "like", "at": "2026-11-01"},'
            yield b"{}]"

        streamed = await client.post(
            "/v1/interactions", content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413, streamed.text
        assert await buffer.backlog() == backlog
        small = await client.post("/v1/interactions", json=events(me, a, 2))
        assert small.status_code in (202, 404), small.text  # under the bound: answered


async def test_a_big_body_without_a_key_is_401_not_413(make_client: MakeClient) -> None:
    async with make_client(key=None, request_body_max_bytes=4_096) as anonymous:
        response = await anonymous.post("/v1/interactions", content=b"x" * 100_000)
        assert response.status_code == 401


async def test_a_validation_error_quotes_a_short_prefix_of_a_bad_value(
    client: httpx.AsyncClient, uid: UserIds
) -> None:
    huge = "z" * 200_000
    response = await client.post("/v1/interactions", json=events(huge, uid("a"), 1))
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert len(message) < 400 and "200000 characters" in message, message[:500]
    cursor = await client.get(f"/v1/users/{uid('me')}/followers", params={"cursor": "q" * 5000})
    assert cursor.status_code == 400 and len(cursor.text) < 400
