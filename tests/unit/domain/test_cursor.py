"""Pure logic with no server: cursors, ids, times, edge-file parsing, script files."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from itsdangerous import Signer
from pydantic import ValidationError

from graphsvc.adapters.redis.client import HiredisPacked
from graphsvc.adapters.redis.scripts import script_source
from graphsvc.api.app import create_app
from graphsvc.domain.cursor import CursorCodec, Position
from graphsvc.domain.errors import InvalidCursor, InvalidUserId
from graphsvc.domain.ids import validate_user_id, validate_user_ids
from graphsvc.domain.model import iso_utc
from graphsvc.ops.data.edge_files import LoadError, read_edge_file
from graphsvc.settings import LocalServerSettings, Settings

SECRET = "a-test-secret-of-enough-length"
CODEC = CursorCodec(SECRET)


def test_cursor_round_trip() -> None:
    position = Position(1_795_000_000_123_456, "user.42")
    token = CODEC.encode("followers|alice", position)
    assert CODEC.decode("followers|alice", token) == position


@pytest.mark.parametrize("token", ["", "abc", "abc.", ".abc", "!!!.###", "a.b.c", "x" * 300])
def test_garbage_cursor_is_rejected(token: str) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode("followers|alice", token)


def test_tampered_cursor_is_rejected() -> None:
    token = CODEC.encode("followers|alice", Position(1000, "bob"))
    body, mac = token.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    with pytest.raises(InvalidCursor, match="signature"):
        CODEC.decode("followers|alice", f"{flipped}.{mac}")


def test_a_timeline_cursor_carries_a_post_member() -> None:
    token = CODEC.encode_at("timeline|alice", 1000, "bob|post.1")
    assert CODEC.decode_at("timeline|alice", token, lambda key: "|" in key) == (1000, "bob|post.1")
    with pytest.raises(InvalidCursor, match="bad position"):
        CODEC.decode("timeline|alice", token)  # a member is not a user id


def test_cursor_is_bound_to_its_list_and_secret() -> None:
    token = CODEC.encode("followers|alice", Position(1000, "bob"))
    with pytest.raises(InvalidCursor, match="different list"):
        CODEC.decode("following|alice", token)
    with pytest.raises(InvalidCursor, match="different list"):
        CODEC.decode("followers|carol", token)
    with pytest.raises(InvalidCursor, match="signature"):
        CursorCodec("another-secret-of-enough-length").decode("followers|alice", token)


@pytest.mark.parametrize("good", ["a", "A_b.c-9", "x" * 64, "123", ".a", "a..", "-", "_"])
def test_valid_user_ids(good: str) -> None:
    assert validate_user_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", "x" * 65, "a b", "a{b}", "émile", "a/b", "a:b", "a\nb", "a\n", ".", "..", "..."]
)
def test_invalid_user_ids_name_the_id(bad: str) -> None:
    with pytest.raises(InvalidUserId) as caught:
        validate_user_id(bad, "target_id")
    assert "target_id" in caught.value.message
    assert repr(bad)[:40].strip("'") in caught.value.message


def test_dot_ids_are_refused_in_a_list_too() -> None:
    """A URL normaliser removes ``.`` and ``..``: no id may be made of dots only."""
    validate_user_ids(["a", "b.c", ".d"], "ids")
    for ids in (["a", ".."], ["..", "a"], ["."], ["a", "..."]):
        with pytest.raises(InvalidUserId, match="not only dots"):
            validate_user_ids(ids, "ids")


def test_a_long_bad_id_is_quoted_by_a_short_prefix() -> None:
    with pytest.raises(InvalidUserId) as caught:
        validate_user_id("z" * 100_000)
    assert len(caught.value.message) < 200
    assert "100000 characters" in caught.value.message


@pytest.mark.parametrize("since", [str(2**63), "9" * 30, "\u00b2", "1\u0663"])
def test_an_absurd_cursor_position_is_a_bad_cursor(since: str) -> None:
    """A cursor signed with the secret whose time no store can take is refused here (a 400),
    not by the store (a 500)."""
    signer = Signer(
        SECRET, salt="graphsvc.cursor", key_derivation="hmac", digest_method=hashlib.sha256
    )
    forged = signer.sign(_b64(f"3|followers|alice|{since}|bob".encode())).decode()
    with pytest.raises(InvalidCursor, match="bad position"):
        CODEC.decode("followers|alice", forged)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_iso_utc_is_exact() -> None:
    assert iso_utc(1_700_000_000_123_456) == "2023-11-14T22:13:20.123456Z"
    assert iso_utc(0) == "1970-01-01T00:00:00.000000Z"


def test_edge_list_skips_self_loops_and_merges_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("# comment\n1 2 100\n2 2 101\n1 2 50\n3 1 70\n\n1 3 80\n")
    edges = read_edge_file(path, prefix="p.")
    assert edges.edges == {
        ("p.1", "p.2"): 50_000_000,
        ("p.3", "p.1"): 70_000_000,
        ("p.1", "p.3"): 80_000_000,
    }
    assert (edges.lines, edges.self_loops, edges.duplicates) == (5, 1, 1)


def test_undirected_lines_follow_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "friends.txt"
    path.write_text("a b\nb c\n")
    edges = read_edge_file(path, undirected=True)
    assert set(edges.edges) == {("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")}
    # untimed lines get increasing times in file order
    assert edges.edges[("a", "b")] < edges.edges[("b", "c")]


def test_csv_with_header_and_iso_times(tmp_path: Path) -> None:
    path = tmp_path / "edges.csv"
    path.write_text("src,dst,since\nann,bo,2024-01-02T03:04:05Z\nbo,ann,1704164645.5\n")
    edges = read_edge_file(path)
    assert edges.edges == {
        ("ann", "bo"): 1_704_164_645_000_000,
        ("bo", "ann"): 1_704_164_645_500_000,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 2\nbad{id} 3\n", r"edges.txt:2: 'bad\{id\}' is not a valid user id"),
        ("1 2 3 4\n", "edges.txt:1: expected 'src dst \\[time\\]', got 4 fields"),
        ("1 2 yesterday\n", "edges.txt:1: time 'yesterday' is neither"),
        ("1 2 -5\n", "edges.txt:1: time '-5' is before 1970"),
        ("1 2 1700000000000\n", "edges.txt:1: time '1700000000000' is in the future"),
    ],
)
def test_bad_edge_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "edges.txt"
    path.write_text(text)
    with pytest.raises(LoadError, match=message):
        read_edge_file(path)


def test_read_only_script_keeps_its_flags_line_first() -> None:
    source = script_source("page")
    assert source.startswith("#!lua flags=no-writes\n")
    assert "local function apply_edge" in source


def test_a_local_server_knob_given_to_the_serving_settings_is_refused() -> None:
    with pytest.raises(ValidationError, match="neo4j_heap, state_dir: set on LocalServerSettings"):
        Settings(state_dir="/tmp/elsewhere", neo4j_heap="1g")
    assert LocalServerSettings(state_dir="relative").state_dir.is_absolute()


def test_every_error_response_is_documented_as_json() -> None:
    paths = create_app(Settings()).openapi()["paths"]
    documented = [
        (path, method, status, response.get("content", {}))
        for path, operations in paths.items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status[0] in "45"
    ]
    assert len(documented) > 50
    assert [d for d in documented if list(d[3]) != ["application/json"]] == []


async def test_a_loop_whose_cancellation_was_swallowed_still_stops() -> None:
    import asyncio
    import contextlib

    from graphsvc.concurrency.loops import stop_if_asked, stopped

    rounds = 0

    async def loop() -> None:  # as a library awaited by a loop may do
        nonlocal rounds
        while True:
            stop_if_asked()
            rounds += 1
            with contextlib.suppress(asyncio.CancelledError):  # swallowed
                await asyncio.sleep(0.01)

    task = asyncio.get_running_loop().create_task(loop())
    await asyncio.sleep(0.05)
    await stopped([task], seconds=5)
    assert task.done() and task.cancelled()

    give_up = asyncio.Event()

    async def stubborn() -> None:  # ignores cancellation until the test lets it go
        while not give_up.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.01)

    other = asyncio.get_running_loop().create_task(stubborn())
    await asyncio.sleep(0.02)
    started = asyncio.get_running_loop().time()
    await stopped([other], seconds=0.2)  # bounded: it gives up on a task that never stops
    assert asyncio.get_running_loop().time() - started < 2 and not other.done()
    give_up.set()
    await other  # no task left behind in the session's loop


@pytest.mark.parametrize(
    "args",
    [
        ("EVALSHA", "a" * 40, 2, "gs:m:{u1}", "gs:r:{u1}", "u2", 1_700_000_000_123_456, -5),
        ("ZADD", "k", 0.1, "m", 1e20, "n", float("inf"), "o"),
        ("SET", "k", "émile", "PX", 30_000),
        ("SET", b"k", b"\x00\xff"),
        ("SCRIPT LOAD", "return 1"),
        ("CLIENT", "SETNAME", "x"),
    ],
)
def test_commands_packed_by_hiredis_are_the_bytes_redis_py_packs(args: tuple) -> None:
    ours = b"".join(HiredisPacked().pack_command(*args))
    assert ours == b"".join(aioredis.Connection().pack_command(*args))
