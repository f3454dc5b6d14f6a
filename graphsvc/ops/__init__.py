"""Operations tooling: the CLI, local servers, loading, bulk import, consistency checks and
reconciliation, the graph generator, the demo, and the suggestion evaluation. Serving code
never imports it; it asks ``bootstrap`` for what it needs."""
