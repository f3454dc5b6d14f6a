"""Concurrency primitives: batching, per-key locks, shared flights, the breaker, background
loops and durable jobs, and retry policies. They know no store and no settings (what they
need is passed in), so every layer above, the adapters included, can use them."""
