"""``keys create|list|revoke|local``: API keys, made and revoked where the service stores them.
A key is shown once, when made; afterwards only its id names it."""

from __future__ import annotations

from typing import Annotated

import typer

from graphsvc.ops.cli.running import command, say

app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)


@command(app)
async def create(
    scopes: Annotated[
        str, typer.Option(metavar="TEXT", help="comma-separated: read,write,admin,internal")
    ],
    user: Annotated[
        str | None, typer.Option(metavar="TEXT", help="bind the key to this acting user")
    ] = None,
    name: Annotated[str | None, typer.Option(metavar="TEXT", help="what the key is for")] = None,
) -> None:
    """Create a key (shown once)."""
    from graphsvc.domain.access import parse_scopes
    from graphsvc.ops import keys as api_keys
    from graphsvc.settings import get_settings

    new = await api_keys.create(get_settings(), parse_scopes(scopes), user, name or "")
    say(f"key id: {new.key.id}")
    say(f"key (shown once, keep it): {new.token}")


@command(app, "list")
async def listing() -> None:
    """Every key (never the keys themselves)."""
    from graphsvc.ops import keys as api_keys
    from graphsvc.settings import get_settings

    for line in api_keys.lines(await api_keys.listing(get_settings())):
        say(line)


@command(app)
async def revoke(key: Annotated[str, typer.Argument(metavar="ID", help="the key's id")]) -> None:
    """Revoke a key by id."""
    from graphsvc.domain.access import InvalidKeyRequest, key_id_of
    from graphsvc.ops import keys as api_keys
    from graphsvc.settings import get_settings

    whole = key_id_of(key)
    if whole is not None:  # a whole key: named by its id, never echoed
        raise InvalidKeyRequest(f"keys revoke takes a key's id, not the key (its id: {whole})")
    changed = await api_keys.revoke(get_settings(), key)
    say(f"revoked {key}" if changed else f"{key} was already revoked")


@command(app)
async def local() -> None:
    """The local admin key of `make run` (created if needed)."""
    from graphsvc.ops import keys as api_keys
    from graphsvc.settings import get_local_server_settings, get_settings

    path = get_local_server_settings().state_dir / "admin-key"
    token, created = await api_keys.local_admin(get_settings(), api_keys.saved_key(path))
    if created:  # shown once; afterwards, where it is
        api_keys.save_key(path, token)
        say(f"local admin key (created; saved in {path}, shown once): {token}")
    else:
        say(f"local admin key: the one in {path} (KEY=$(cat {path}))")
