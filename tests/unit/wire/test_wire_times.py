"""The wire contract's times: a datetime in Python, the server's one text on the wire."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphsvc.domain.model import iso_utc
from graphsvc.wire.schemas import Item, MuteItem, TimelineItem


@pytest.mark.parametrize("micros", [0, 1, 999_999, 1_700_000_000_000_000, 1_700_000_000_123_456])
def test_a_time_is_sent_as_the_server_formats_it(micros: int) -> None:
    text = iso_utc(micros)
    item = Item.model_validate({"user_id": "a", "since": text})
    assert isinstance(item.since, datetime)
    assert item.since.utcoffset() is not None and item.since.utcoffset().total_seconds() == 0
    assert item.model_dump(mode="json")["since"] == text
    assert item.model_dump_json() == f'{{"user_id":"a","since":"{text}"}}'


def test_every_answered_time_is_a_datetime() -> None:
    text = iso_utc(1_700_000_000_000_000)
    mute = MuteItem.model_validate(
        {"user_id": "a", "since": text, "expires_at": None, "notifications": False}
    )
    post = TimelineItem.model_validate({"post_id": "p", "author": "a", "at": text})
    assert mute.since == post.at == datetime.fromtimestamp(1_700_000_000, UTC)
    assert mute.expires_at is None
