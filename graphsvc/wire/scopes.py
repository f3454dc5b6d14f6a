"""An API key's scopes: part of the contract, since keys are created and described over HTTP
and the client names them."""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"
    INTERNAL = "internal"
