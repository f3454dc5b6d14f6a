"""The Neo4j adapter: the source of truth. One store class per family of named queries
(``cypher/<family>.cypher``), all running through ``store.Neo4jStore``."""
