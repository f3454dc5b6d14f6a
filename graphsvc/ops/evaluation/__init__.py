"""The suggestion ranker judged: offline against baselines on held-out follows, online by
version, and its models as operators move them."""
