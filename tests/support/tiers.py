"""How long each tier of the suite took: the unit, integration and api folders under tests/,
each the sum of its tests' setup, call and teardown times (on a parallel run, the sum over
the workers), then the run's own time from its start. Printed at the end of every run,
fastest first, so the slowest tier is the last line of the table."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

_started = time.monotonic()


def start() -> None:
    """The run starts now (its wall-clock time is counted from here)."""
    global _started
    _started = time.monotonic()


def tier_of(nodeid: str) -> str:
    """A test's tier: the folder under tests/ it sits in (``tests/unit/domain/test_x.py::t``
    is ``unit``)."""
    parts = nodeid.split("::")[0].split("/")
    return parts[1] if parts[0] == "tests" and len(parts) > 2 else parts[0]


def report(reporter: pytest.TerminalReporter) -> None:
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for reports in reporter.stats.values():
        for each in reports:
            if isinstance(each, pytest.TestReport):
                tier = tier_of(each.nodeid)
                seconds[tier] += each.duration
                tests[tier].add(each.nodeid)
    if not seconds:
        return
    reporter.write_sep("-", "time per tier")
    ordered = sorted(seconds, key=seconds.__getitem__)
    for tier in ordered:
        slowest = "  (slowest)" if tier == ordered[-1] and len(ordered) > 1 else ""
        reporter.write_line(
            f"{tier:<12} {seconds[tier]:10.1f}s  {len(tests[tier]):5d} tests{slowest}"
        )
    workers = reporter.config.getoption("numprocesses", None) or 0
    on = f" on {workers} workers" if workers else ""
    reporter.write_line(f"{'the run':<12} {time.monotonic() - _started:10.1f}s{on}, from its start")
