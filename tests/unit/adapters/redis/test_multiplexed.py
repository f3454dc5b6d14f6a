"""What the multiplexed connections decide without a server: which Redis they reach, the name
a script goes by, and the exception an error reply becomes."""

from __future__ import annotations

import hashlib

import pytest
from redis.exceptions import BusyLoadingError, NoScriptError, ReadOnlyError, ResponseError

from graphsvc.adapters.redis.multiplexed import Lua, Multiplexed, error_of
from graphsvc.settings import Settings


def test_a_script_goes_by_the_sha1_of_its_source() -> None:
    source = "return ARGV[1]"
    assert Lua(source).sha == hashlib.sha1(source.encode()).hexdigest()


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("NOSCRIPT No matching script. Please use EVAL.", NoScriptError),
        ("LOADING Redis is loading the dataset in memory", BusyLoadingError),
        ("READONLY You can't write against a read only replica.", ReadOnlyError),
        ("WRONGTYPE Operation against a key holding the wrong kind of value", ResponseError),
    ],
)
def test_an_error_reply_becomes_redis_pys_exception(reply: str, kind: type[Exception]) -> None:
    error = error_of(ResponseError(reply))
    assert type(error) is kind and str(error) == reply


@pytest.mark.parametrize(
    ("url", "cluster", "reached"),
    [
        ("redis://127.0.0.1:6380/2", False, True),
        ("unix:///tmp/redis.sock?db=1", False, True),
        ("rediss://127.0.0.1:6380/0", False, False),  # TLS stays with the pool
        ("redis://127.0.0.1:6380/0", True, False),  # a cluster stays with the pool
    ],
)
def test_only_a_single_redis_without_tls_is_multiplexed(
    url: str, cluster: bool, reached: bool
) -> None:
    settings = Settings().with_values(redis_url=url, redis_cluster=cluster)
    assert (Multiplexed.for_settings(settings.redis) is not None) is reached
