"""The events of public lists' changes, on the event stream after their commit: each list write
creates its outbox events in its transaction (``cypher/lists.cypher``), and the relay appends
those whose append here was lost (``workers/relay.py``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.domain.model import GraphEvent

log = logging.getLogger(__name__)


async def append_events(stream: EventStream, events: Sequence[GraphEvent]) -> None:
    """A committed change's events on the event stream; when Redis cannot take them now, the
    relay appends them from the outbox later (the change stands either way)."""
    try:
        await stream.append(events)
    except REDIS_DOWN as exc:
        log.warning("%d list events left to the relay (%s)", len(events), exc)
