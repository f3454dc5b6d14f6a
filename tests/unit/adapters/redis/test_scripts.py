"""The Lua scripts' sources as the Redis adapter sends them."""

from __future__ import annotations

from graphsvc.adapters.redis.scripts import script_source


def test_read_only_script_keeps_its_flags_line_first() -> None:
    source = script_source("page")
    assert source.startswith("#!lua flags=no-writes\n")
    assert "local function apply_edge" in source
