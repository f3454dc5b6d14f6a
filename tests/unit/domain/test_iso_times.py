"""Times in responses: ``iso_utc`` (which remembers formatted seconds) gives exactly what
datetime's own ISO format gives, microseconds always shown, across the whole range."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from graphsvc.domain.model import iso_utc

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def by_datetime(micros: int) -> str:
    moment = EPOCH + timedelta(microseconds=micros)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def test_iso_utc_is_datetimes_format() -> None:
    rng = random.Random(5)
    edges = [0, 1, -1, 999_999, 1_000_000, -1_000_000, -1_000_001, 1_700_000_000_000_000]
    extremes = [-62_135_596_800_000_000, 253_402_300_799_999_999]  # years 1 and 9999
    spread = [rng.randrange(extremes[0], extremes[1]) for _ in range(20_000)]
    for micros in edges + extremes + spread:
        assert iso_utc(micros) == by_datetime(micros), micros
    assert iso_utc(1_700_000_000_000_000) == "2023-11-14T22:13:20.000000Z"


def test_iso_utc_is_exact() -> None:
    assert iso_utc(1_700_000_000_123_456) == "2023-11-14T22:13:20.123456Z"
    assert iso_utc(0) == "1970-01-01T00:00:00.000000Z"
