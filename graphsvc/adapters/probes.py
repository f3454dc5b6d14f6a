"""Blocking one-shot probes of a server the operations tooling starts or stops: does it
answer, and what does a cluster node say of itself. Asked once, with short timeouts, so a
wait loop above decides how long to keep asking."""

from __future__ import annotations

import neo4j
import redis
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["CredentialsRejected", "neo4j_answers", "redis_answers", "redis_cluster_info"]


class CredentialsRejected(Exception):
    """A Neo4j answers but refuses the user and password: waiting would not help."""


def neo4j_answers(address: str, user: str, password: str) -> bool:
    try:
        with neo4j.GraphDatabase.driver(address, auth=(user, password), connection_timeout=2) as d:
            d.verify_connectivity()
        return True
    except AuthError as exc:
        raise CredentialsRejected(str(exc)) from exc
    except (ServiceUnavailable, Neo4jError, OSError):
        return False


def redis_answers(port: int) -> bool:
    try:
        # a port that accepts and never answers (a server stopping, or another's) is no Redis
        with redis.Redis(
            host="127.0.0.1", port=port, socket_connect_timeout=1, socket_timeout=2
        ) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


def redis_cluster_info(port: int) -> dict[str, str]:
    """The node's CLUSTER INFO; empty when it does not answer."""
    try:
        client = redis.Redis(
            host="127.0.0.1",
            port=port,
            socket_connect_timeout=1,
            socket_timeout=2,
            retry=Retry(NoBackoff(), 0),
        )
        with client:
            text = client.execute_command("CLUSTER INFO")
    except redis.RedisError:
        return {}
    if isinstance(text, bytes):
        text = text.decode()
    if isinstance(text, dict):  # some redis-py versions parse the reply
        return {str(k): str(v) for k, v in text.items()}
    return dict(line.split(":", 1) for line in text.split() if ":" in line)
