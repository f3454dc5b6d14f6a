"""The ranker's fit: a logistic regression on log-scaled, standardised features, with every
evidence feature's weight kept non-negative (``domain/ranker/scoring.weight_bounds``).

Why constrained: an unconstrained fit on a held-out slice that is not what serving sees (a
graph's newest edges that are all one community, say) learns that more common friends make a
follow less likely, and serves that to everyone. A bounded fit can only re-weigh evidence. The
loss is scikit-learn's (L2-penalised log-loss, C = 1), minimised by SciPy's L-BFGS-B, which
takes bounds per weight.

The one module of the service that needs numpy and SciPy: the training imports it when it
first fits, so the API processes (which build the worker's objects but never train) never load
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from graphsvc.domain.ranker.scoring import FEATURES, UNSCALED, Ranker, weight_bounds
from graphsvc.workers.ranker.examples import Example

C = 1.0  # the inverse of the L2 penalty's strength, as scikit-learn's LogisticRegression
# The least spread a feature is standardised by. A feature that barely varies where the model
# was fitted (the freshness of paths in a graph loaded in one go: every edge made within a
# second) would otherwise be divided by almost nothing, and the shift the passing of time
# gives it by the time it is served would swamp every other feature.
STD_FLOOR = 0.01
MIN_PART_POSITIVES = 20  # held-out follows a part's model needs (else one model for all)


def fit(examples: Sequence[Example], seed: int) -> Ranker:
    """One model for the candidates that follow the user and one for the others
    (``Ranker.followers``), when each has MIN_PART_POSITIVES held-out follows to learn from;
    else one for all. ``seed`` is kept for the fitting functions' common signature: this fit
    is deterministic."""
    del seed
    vectors = np.array([v for e in examples for v in e.vectors], dtype=float)
    labels = np.array([y for e in examples for y in e.labels], dtype=float)
    follower = vectors[:, FEATURES.index("follows_you")] > 0
    parts = (follower, ~follower)
    if min(labels[part].sum() for part in parts) < MIN_PART_POSITIVES:
        return _fitted(vectors, labels)
    return dataclasses.replace(
        _fitted(vectors[~follower], labels[~follower]),
        followers=_fitted(vectors[follower], labels[follower]),
    )


def _fitted(vectors: np.ndarray, labels: np.ndarray) -> Ranker:
    """Each feature's scale is the median of its non-zero values, so log1p(x / scale) is about
    log 2 for a typical value whatever the units (a count of paths, a sum of 1/degree)."""
    scale: dict[str, float] = {}
    logged = vectors.copy()
    for n, name in enumerate(FEATURES):
        if name in UNSCALED:
            continue
        nonzero = vectors[:, n][vectors[:, n] > 0]
        scale[name] = float(np.median(nonzero)) if nonzero.size else 1.0
        logged[:, n] = np.log1p(np.maximum(vectors[:, n], 0.0) / scale[name])
    means, stds = logged.mean(axis=0), np.maximum(logged.std(axis=0), STD_FLOOR)
    weights, intercept = bounded_logistic((logged - means) / stds, labels)
    return Ranker(
        {name: float(w) for name, w in zip(FEATURES, weights, strict=True)},
        intercept,
        scale,
        {name: float(m) for name, m in zip(FEATURES, means, strict=True)},
        {name: float(d) for name, d in zip(FEATURES, stds, strict=True)},
    )


def bounded_logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """(weights, intercept) minimising ``0.5 |w|^2 + C * sum(log-loss)`` within
    ``weight_bounds`` (the intercept is free and not penalised, as in scikit-learn)."""
    sign = 2.0 * y - 1.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        margin = sign * (x @ w + b)
        value = 0.5 * w @ w - C * log_expit(margin).sum()
        residual = -C * sign * expit(-margin)  # d(loss)/d(score) per example
        return float(value), np.append(w + x.T @ residual, residual.sum())

    bounds = [*weight_bounds(), (None, None)]
    start = np.array([lo if lo is not None else 0.0 for lo, _ in bounds])
    found = minimize(
        loss, start, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 5_000}
    )
    return found.x[:-1], float(found.x[-1])
