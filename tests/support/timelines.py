"""Timelines as their tests set the service up: celebrities at TIMELINE_CELEBRITY_FOLLOWERS = 3
followers (pushed again below 2, TIMELINE_HYSTERESIS = 0.5), so a handful of users shows every
case."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from tests.support.driver import Driver

FEED = {"timeline_celebrity_followers": 3, "timeline_hysteresis": 0.5}


@pytest.fixture
async def timeline_driver(make_driver: Callable[..., Driver]) -> AsyncIterator[Driver]:
    """A driver over a service with FEED's thresholds, its timeline events ready (a test
    module binds it to the name its tests ask for: ``api = timelines.timeline_driver``)."""
    async with make_driver(**FEED) as graph:
        await graph.services.background.timeline_events.prepare()
        yield graph
