"""Use cases, one module per family; ``writes`` is the one place of the write order. Each
service takes the adapters it needs in its constructor (``bootstrap`` builds them once)."""
