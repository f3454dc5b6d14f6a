"""The suggestion ranker judged offline: against baselines on held-out follows, and as the
service serves it."""
