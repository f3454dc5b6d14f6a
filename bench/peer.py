"""The peer: the FastAPI + PostgreSQL service a team would write instead of graphsvc.

It answers the core routes with graphsvc's paths and JSON shapes, from the same edges in the
bench's PostgreSQL (``bench.postgres``: keyset indexes and a counts table):

- ``GET /v1/users/{user_id}/followers?limit&cursor``: a keyset page, newest first, with a
  signed cursor (HMAC over the position, as graphsvc signs its own);
- ``GET /v1/users/{user_id}/counts``: one primary-key read of the counts table;
- ``PUT /v1/users/{user_id}/following/{target_id}``: ``INSERT ... ON CONFLICT`` and both
  counters in one statement (one transaction, one round trip).

``create_minimal_app`` is the least a team could write for the two reads: the same queries
and bodies, no key, no bounds beyond the framework's, a plain (unsigned) cursor; what
graphsvc's checks and the peer's cost beyond the bare answer show against it.

Written as carefully as graphsvc: an asyncpg pool sized like graphsvc's store pools, the
statements prepared once per connection (asyncpg's statement cache), orjson bodies, API keys
checked against a table cached in memory, ``limit`` and ids bounded where the route declares
them. It is served by the same HTTP server code as graphsvc (``graphsvc.ops.servers.http_server``), with
the same worker count, and started and stopped by the bench:
``python -m bench.peer --dsn postgresql://... --port 28100``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Annotated

import asyncpg
import orjson
from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import ORJSONResponse

from bench import postgres
from graphsvc.ops.servers.http_server import Serving
from graphsvc.ops.servers.http_server import run as serve

ID = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
KEYS = "CREATE TABLE IF NOT EXISTS api_keys (token_sha256 text PRIMARY KEY, name text NOT NULL)"
SECRET = os.environ.get("PEER_CURSOR_SECRET", "peer-bench-secret").encode()


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def add_key(dsn: str, token: str, name: str) -> None:
    """Store a key the peer accepts (the bench gives it graphsvc's bench key)."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(KEYS)
        await conn.execute(
            "INSERT INTO api_keys VALUES ($1, $2) ON CONFLICT DO NOTHING", token_sha256(token), name
        )
    finally:
        await conn.close()


def encode_cursor(since: int, user_id: str) -> str:
    body = base64.urlsafe_b64encode(orjson.dumps([since, user_id])).rstrip(b"=")
    mac = base64.urlsafe_b64encode(hmac.digest(SECRET, body, "sha256")[:16]).rstrip(b"=")
    return f"{body.decode()}.{mac.decode()}"


def decode_cursor(cursor: str) -> tuple[int, str]:
    body, _, mac = cursor.encode().partition(b".")
    expected = base64.urlsafe_b64encode(hmac.digest(SECRET, body, "sha256")[:16]).rstrip(b"=")
    if not hmac.compare_digest(mac, expected):
        raise HTTPException(400, "invalid cursor")
    since, user_id = orjson.loads(base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4)))
    return int(since), str(user_id)


def iso(micros: int) -> str:
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{datetime.fromtimestamp(seconds, UTC).isoformat()[:19]}.{fraction:06d}Z"


def create_app() -> FastAPI:
    dsn = os.environ["PEER_DSN"]
    pool_size = int(os.environ.get("PEER_POOL_SIZE", "64"))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with asyncpg.create_pool(dsn, min_size=8, max_size=pool_size) as pool:
            app.state.pool = pool
            app.state.keys = {r[0] for r in await pool.fetch("SELECT token_sha256 FROM api_keys")}
            yield

    app = FastAPI(title="peer", lifespan=lifespan, default_response_class=ORJSONResponse)

    async def authorized(request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or token_sha256(token) not in request.app.state.keys:
            raise HTTPException(401, "unknown API key")

    Auth = Depends(authorized)

    @app.get("/v1/users/{user_id}/followers", dependencies=[Auth])
    async def followers(
        user_id: ID,
        request: Request,
        limit: Annotated[int, Query(ge=1, le=1000)] = 20,
        cursor: Annotated[str | None, Query(max_length=512)] = None,
    ) -> ORJSONResponse:
        after = decode_cursor(cursor) if cursor else postgres.NEWEST
        rows = await request.app.state.pool.fetch(
            postgres.FOLLOWERS_PAGE, user_id, after[0], after[1], limit + 1
        )
        page = rows[:limit]
        items = [{"user_id": r[0], "since": iso(r[1])} for r in page]
        more = len(rows) > limit
        next_cursor = encode_cursor(page[-1][1], page[-1][0]) if more else None
        return ORJSONResponse({"items": items, "next_cursor": next_cursor})

    @app.get("/v1/users/{user_id}/counts", dependencies=[Auth])
    async def counts(user_id: ID, request: Request) -> ORJSONResponse:
        row = await request.app.state.pool.fetchrow(postgres.COUNTS_ROW, user_id)
        followers, following = (row[0], row[1]) if row else (0, 0)
        return ORJSONResponse(
            {
                "followers": followers,
                "following": following,
                "followers_active": followers,
                "following_active": following,
            }
        )

    @app.put("/v1/users/{user_id}/following/{target_id}", dependencies=[Auth])
    async def follow(user_id: ID, target_id: ID, request: Request) -> ORJSONResponse:
        if user_id == target_id:
            raise HTTPException(403, "a user cannot follow itself")
        since = time.time_ns() // 1000
        created = await postgres.follow(request.app.state.pool, user_id, target_id, since)
        return ORJSONResponse({"following": True, "created": created})

    return app


def create_minimal_app() -> FastAPI:
    dsn = os.environ["PEER_DSN"]

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with asyncpg.create_pool(dsn, min_size=8, max_size=64) as pool:
            app.state.pool = pool
            yield

    app = FastAPI(title="minimal peer", lifespan=lifespan, default_response_class=ORJSONResponse)

    @app.get("/v1/users/{user_id}/followers")
    async def followers(
        user_id: str, request: Request, limit: int = 20, cursor: str | None = None
    ) -> ORJSONResponse:
        since, _, after = cursor.partition("|") if cursor else ("", "", "")
        after_since, after_id = (int(since), after) if cursor else postgres.NEWEST
        rows = await request.app.state.pool.fetch(
            postgres.FOLLOWERS_PAGE, user_id, after_since, after_id, limit + 1
        )
        page = rows[:limit]
        more = len(rows) > limit
        return ORJSONResponse(
            {
                "items": [{"user_id": r[0], "since": iso(r[1])} for r in page],
                "next_cursor": f"{page[-1][1]}|{page[-1][0]}" if more else None,
            }
        )

    @app.get("/v1/users/{user_id}/counts")
    async def counts(user_id: str, request: Request) -> ORJSONResponse:
        row = await request.app.state.pool.fetchrow(postgres.COUNTS_ROW, user_id)
        followers, following = (row[0], row[1]) if row else (0, 0)
        return ORJSONResponse({"followers": followers, "following": following})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="uvicorn")
    parser.add_argument("--minimal", action="store_true", help="the minimal app (no key)")
    args = parser.parse_args()
    os.environ["PEER_DSN"] = args.dsn
    app = MINIMAL_APP if args.minimal else APP
    serve(Serving(args.server, "127.0.0.1", args.port, args.workers, False, app=app))


APP = "bench.peer:create_app"
MINIMAL_APP = "bench.peer:create_minimal_app"

if __name__ == "__main__":
    main()
