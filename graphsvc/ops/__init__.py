"""Operations tooling, a folder per role: ``servers`` (the local Neo4j, Redis and PostgreSQL,
and the processes and HTTP server they run in), ``data`` (generating, loading, importing and
exporting graphs), ``repair`` (the checks of the mirror and timelines against the graph, and
their reconciliation), ``evaluation`` (the suggestion ranker judged offline and online, and its
models moved), ``keys`` (API keys from a shell) and ``cli`` (the command line over them all).
Serving code never imports it; it asks ``bootstrap`` for what it needs."""
