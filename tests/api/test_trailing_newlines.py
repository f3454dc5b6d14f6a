"""An id in a path that is valid but for a final newline is refused by the app (the checks
themselves, with no server: tests/unit/project/test_trailing_newlines.py)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.support.run import new_user_id

MakeClient = Callable[..., httpx.AsyncClient]


async def test_ids_in_paths_with_a_final_newline_are_refused(make_client: MakeClient) -> None:
    async with make_client() as http:
        user = new_user_id()
        assert (await http.get(f"/v1/users/{user}/counts")).status_code == 200
        assert (await http.get(f"/v1/users/{user}%0A/counts")).status_code == 422
        key_id = "0123456789abcdef"
        assert (await http.delete(f"/v1/keys/{key_id}")).status_code == 404
        assert (await http.delete(f"/v1/keys/{key_id}%0A")).status_code == 422
