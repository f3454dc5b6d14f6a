"""Lists follow the graph: a consumer group (LIST_CONSUMER_GROUP) on the event stream.

A block takes the blocked user out of the blocker's curate lists and the blocker out of the
blocked one's (``lists/leave_blocked``), ends their follows of each other's lists, and lapses
the blocked user's subscriptions to the blocker's lists; the members that left public lists are
announced on the event stream. Reads already leave such members out while the block
stands, but hiding is not enough: a member that disappeared from a public list and came back
after an unblock would tell any reader of the list that the two had blocked each other, so the
membership goes for good, as a block ends a follow. Moderation lists keep their members (a
block list is made of the people its owner blocks).

Idempotent and order-proof: a late block event whose block is gone changes nothing.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.lists import ListStore
from graphsvc.adapters.redis.event_stream import EventStream
from graphsvc.services.lists.events import append_events
from graphsvc.settings import ListSettings
from graphsvc.workers.event_consumer import EventConsumer


class ListEvents(EventConsumer):
    def __init__(self, store: ListStore, stream: EventStream, settings: ListSettings) -> None:
        super().__init__(stream, settings.list_consumer_group)
        self._store = store

    async def apply(self, events: list[dict[str, str]]) -> None:
        pairs = [(e["src"], e["dst"]) for e in events if e.get("type") == "block"]
        await append_events(
            self._stream, await self._store.leave_blocked(list(dict.fromkeys(pairs)))
        )
