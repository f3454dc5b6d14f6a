"""Per request: an ``X-Request-ID`` (the caller's, when it sends a sane one, else a new one),
the Prometheus request count and latency by route template, and, with LOG_JSON, one JSON log
line. Pure ASGI, outermost, so it times what the caller waits for, errors included.

Labels use the route template (``/v1/users/{user_id}/followers``), never the raw path, so
the number of series stays bounded whatever the ids; requests that match no route share one
label. The method label is bounded the same way: a method outside the standard ones is
counted as ``other`` (a caller may send any token as a method).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


def json_request_logs() -> None:
    """Send the request log, one JSON object per line, to stderr (and nothing else there)."""
    if not request_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        request_log.addHandler(handler)
    request_log.setLevel(logging.INFO)
    request_log.propagate = False


class RequestTelemetry:
    def __init__(self, app: ASGIApp, *, log_requests: bool = False) -> None:
        self.app = app
        self.log_requests = log_requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        given = next((v for k, v in scope["headers"] if k == b"x-request-id"), b"").decode(
            "latin-1"
        )
        request_id = given if _SANE_ID.fullmatch(given) else uuid.uuid4().hex
        status = 500

        async def send_tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_tagged)
        finally:
            elapsed = time.perf_counter() - start
            route = scope.get("route")
            template = getattr(route, "path", UNMATCHED) if route is not None else UNMATCHED
            method = scope["method"]
            label = method if method in METHODS else OTHER_METHOD
            REQUESTS.labels(label, template, str(status)).inc()
            LATENCY.labels(label, template).observe(elapsed)
            if self.log_requests:
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
