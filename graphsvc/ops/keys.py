"""`graphsvc keys`: create, list and revoke API keys from a shell, and the local admin key
that `make run` creates on a first start (kept in STATE_DIR/admin-key, readable by its owner
only, so the README's curl examples can use it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from graphsvc.bootstrap import open_operations
from graphsvc.domain.access import ALL_SCOPES, ApiKey, NewKey, Scope, Unauthenticated
from graphsvc.domain.model import iso_utc
from graphsvc.settings import Settings

LOCAL_KEY_NAME = "local admin (make run)"


async def create(
    settings: Settings, scopes: frozenset[Scope], user: str | None, name: str
) -> NewKey:
    async with open_operations(settings) as operations:
        return await operations.access.create(scopes, user=user, name=name)


async def listing(settings: Settings) -> Sequence[ApiKey]:
    async with open_operations(settings) as operations:
        return await operations.access.list()


async def revoke(settings: Settings, key_id: str) -> bool:
    async with open_operations(settings) as operations:
        return await operations.access.revoke(key_id)


def saved_key(path: Path) -> str | None:
    return path.read_text().strip() if path.exists() else None


def save_key(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")


async def local_admin(settings: Settings, saved: str | None) -> tuple[str, bool]:
    """The local admin key (every scope): the saved one while it still works, else a new
    one. Returns (key, created now)."""
    async with open_operations(settings) as operations:
        if saved:
            try:
                await operations.access.authenticate(saved)
                return saved, False
            except Unauthenticated:
                pass  # revoked, or made under another API_KEY_SECRET: make a new one
        new = await operations.access.create(ALL_SCOPES, name=LOCAL_KEY_NAME)
        return new.token, True


def lines(keys: Sequence[ApiKey]) -> list[str]:
    rows = [f"{'id':16}  {'scopes':26}  {'user':16}  {'created':27}  state    name"]
    for key in keys:
        scopes = ",".join(sorted(s.value for s in key.scopes))
        state = "revoked" if key.revoked else "live"
        rows.append(
            f"{key.id:16}  {scopes:26}  {key.user or '-':16}  {iso_utc(key.created):27}  "
            f"{state:7}  {key.name}"
        )
    return rows
