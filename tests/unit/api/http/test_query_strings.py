"""A lean route's query string is read as the framework reads it: the same parameters and
values, the last of a repeated one winning, for plain strings split directly and escaped ones
through the general parser."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams

from graphsvc.api.http.lean import query_of

ASKED = [
    b"",
    b"limit=20",
    b"limit=20&cursor=abc.def",
    b"limit=1&limit=2",
    b"limit=",
    b"limit",
    b"a=1&&b=2",
    b"&",
    b"=x",
    b"cursor=a%2Eb&limit=3",
    b"languages=en%2Cde",
    b"q=a+b",
    b"name=%C3%A9t%C3%A9",
    b"v=\xe9",
    b"a=1=2",
    b"since_after=2026-11-01T00:00:00Z&since_before=2026-11-02T00:00:00%2B00:00",
]


@pytest.mark.parametrize("raw", ASKED)
def test_a_query_string_reads_as_the_framework_reads_it(raw: bytes) -> None:
    framework = QueryParams(raw)
    assert query_of({"query_string": raw}) == {key: framework[key] for key in framework}
