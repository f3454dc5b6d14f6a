"""Adapters of the two stores: they know Cypher, Lua and the drivers, and nothing of HTTP."""
