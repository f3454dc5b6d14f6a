"""The ranker's fit: a logistic regression (scikit-learn) on log-scaled, standardised features.

The one module of the service that needs numpy and scikit-learn: the training imports it when
it first fits, so the API processes (which build the worker's objects but never train) never
load them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from graphsvc.domain.ranking import FEATURES, UNSCALED, Ranker
from graphsvc.workers.ranker_examples import Example


def fit(examples: Sequence[Example], seed: int) -> Ranker:
    """Each feature's scale is the median of its non-zero values, so log1p(x / scale) is about
    log 2 for a typical value whatever the units (a count of paths, a sum of 1/degree)."""
    vectors = np.array([v for e in examples for v in e.vectors], dtype=float)
    labels = np.array([y for e in examples for y in e.labels])
    scale: dict[str, float] = {}
    logged = vectors.copy()
    for n, name in enumerate(FEATURES):
        if name in UNSCALED:
            continue
        nonzero = vectors[:, n][vectors[:, n] > 0]
        scale[name] = float(np.median(nonzero)) if nonzero.size else 1.0
        logged[:, n] = np.log1p(np.maximum(vectors[:, n], 0.0) / scale[name])
    means, stds = logged.mean(axis=0), logged.std(axis=0)
    stds[stds == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=5_000, random_state=seed)
    model.fit((logged - means) / stds, labels)
    weights = {name: float(w) for name, w in zip(FEATURES, model.coef_[0], strict=True)}
    mean = {name: float(m) for name, m in zip(FEATURES, means, strict=True)}
    std = {name: float(d) for name, d in zip(FEATURES, stds, strict=True)}
    return Ranker(weights, float(model.intercept_[0]), scale, mean, std)
