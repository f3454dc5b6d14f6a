"""The suite ends by comparing the mirror of every user any test touched with Neo4j."""

from __future__ import annotations

import pytest

from graphsvc.bootstrap import Services
from tests.support.run import TOUCHED, assert_consistent


@pytest.mark.suite_end
async def test_every_touched_user_is_consistent(backends: Services) -> None:
    assert TOUCHED, "the suite touched no users"
    await assert_consistent(backends, set(TOUCHED))
