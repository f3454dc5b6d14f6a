"""What the API maps to a 503 of the stores' failures: the adapters name them, and the API
imports no adapter."""

from __future__ import annotations

from graphsvc.adapters.failures import NEO4J_UNAVAILABLE, REDIS_UNAVAILABLE

__all__ = ["NEO4J_UNAVAILABLE", "REDIS_UNAVAILABLE"]
