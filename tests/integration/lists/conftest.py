"""The lists' tests: the list consumer's group is made before each test writes anything, as a
timeline test makes the timeline consumer's (a test before may have emptied Redis, the group
with it; one made again only by the next read would start after the test's own events)."""

from __future__ import annotations

import pytest

from graphsvc.bootstrap import Services


@pytest.fixture(autouse=True)
async def list_consumer_ready(backends: Services) -> None:
    await backends.background.list_events.prepare()
