"""Per request: an ``X-Request-ID`` (the caller's, when it sends a sane one, else a new one),
the Prometheus request count and latency by route template, and, with LOG_JSON, one JSON log
line. The front layer (``front.py``) calls these first and last, so they time what the caller
waits for, errors included.

Labels use the route template (``/v1/users/{user_id}/followers``), never the raw path, so
the number of series stays bounded whatever the ids; requests that match no route share one
label. The method label is bounded the same way: a method outside the standard ones is
counted as ``other`` (a caller may send any token as a method).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.types import Scope

REQUESTS = Counter(
    "graphsvc_http_requests", "HTTP requests answered", ["method", "route", "status"]
)
LATENCY = Histogram(
    "graphsvc_http_request_seconds",
    "HTTP request latency, to the last byte of the response",
    ["method", "route"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # whole value (fullmatch): no final newline
UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"

request_log = logging.getLogger("graphsvc.requests")

# The metrics' children by their labels: the series are bounded (route templates, standard
# methods, statuses), and finding a child through ``labels()`` checks and locks every time.
_COUNTED: dict[tuple[str, str, int], Any] = {}
_TIMED: dict[tuple[str, str], Any] = {}


def _record(method: str, template: str, status: int, elapsed: float) -> None:
    counted = _COUNTED.get((method, template, status))
    if counted is None:
        counted = _COUNTED[(method, template, status)] = REQUESTS.labels(
            method, template, str(status)
        )
    timed = _TIMED.get((method, template))
    if timed is None:
        timed = _TIMED[(method, template)] = LATENCY.labels(method, template)
    counted.inc()
    timed.observe(elapsed)


def json_request_logs() -> None:
    """Send the request log, one JSON object per line, to stderr (and nothing else there)."""
    if not request_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        request_log.addHandler(handler)
    request_log.setLevel(logging.INFO)
    request_log.propagate = False


def request_id_of(scope: Scope) -> str:
    """The caller's ``X-Request-ID`` when it is sane, else a new one."""
    given = next((v for k, v in scope["headers"] if k == b"x-request-id"), b"").decode("latin-1")
    return given if _SANE_ID.fullmatch(given) else os.urandom(16).hex()


def observe(scope: Scope, status: int, elapsed: float, request_id: str, log: bool) -> None:
    """Count and time an answered request by its route's template; with ``log``, its line."""
    route = scope.get("route")
    template = getattr(route, "path", UNMATCHED) if route is not None else UNMATCHED
    method = scope["method"]
    _record(method if method in METHODS else OTHER_METHOD, template, status, elapsed)
    if log:
        key = scope.get("state", {}).get("api_key")
        request_log.info(
            json.dumps(
                {
                    "ts": time.time(),
                    "request_id": request_id,
                    "method": method,
                    "route": template,
                    "path": scope["path"],
                    "status": status,
                    "ms": round(elapsed * 1000, 3),
                    "key_id": getattr(key, "id", None),
                }
            )
        )
