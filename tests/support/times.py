"""Times tests give the service: posts at a number of minutes after a fixed moment, and now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

BASE = datetime(2026, 11, 1, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return BASE + timedelta(minutes=minutes)


def now() -> datetime:
    return datetime.now(UTC)
