"""The client's tests speak to `graphsvc serve` in a process of its own, over TCP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphsvc.settings import Settings
from tests.support.helpers import served_api


@pytest.fixture(scope="module")
def api(server_settings: Settings) -> Iterator[str]:
    """The base URL of `graphsvc serve` over the suite's servers, one process per module (a
    module that needs other settings serves its own)."""
    with served_api(server_settings) as url:
        yield url
