"""The ranker's model registry as rules: when the worker trains a new model, whether a trained
one is promoted, and which users an A/B split ranks with the challenger.

Triggers: a training is due, unless a model it promoted is still on trial
(``trial``), once the graph holds RANKER_TRAIN_MIN_EDGES follows and either no
attempt was ever made, or RANKER_TRAIN_EVERY_SECONDS passed since the last attempt
(RANKER_TRAIN_RETRY_SECONDS after a failed one, or while no model is served), or the follow
edges grew by the share RANKER_TRAIN_GROWTH since the served model was trained, or since the
last attempt if that is later: a rejected candidate is not fitted again on the same graph.

Promotion (``verdict``): a candidate is promoted only when its precision@10 on the validation
users is above both the served ranking's and the best classic heuristic's beyond a paired
bootstrap's spread, and no band of users loses to the heuristic (``validation``); the
heuristic is computed exactly, on the whole training view, when the training could read it.
When it is not, the best of the service's own heuristics is served when it beats what is
served, or when what is served is the built-in default: a graph on which no fit beats the
textbook gets the textbook.

Staleness: the served model is stale when the follow edges changed past RANKER_TRAIN_GROWTH
since it was trained (grown or shrunk: either way it ranks a graph it was not fitted on), when
the last training failed, or when none is served although the graph has RANKER_TRAIN_MIN_EDGES
follows. It is information for an operator, never a reason to stop serving: a stale model
still ranks better than none, and the worker trains again on its own triggers.

A/B split: a user goes to the challenger when a hash of the challenger's version and the
user's id falls in the first ``share`` of [0, 1): stable for the user while the split lasts
(so its cached suggestions stay one model's), and independent from one experiment to the
next (the version salts the hash).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from graphsvc.domain.ranker.validation import Scores

# A model's status: served, challenger (of an A/B split, or on trial), retired (served or a
# challenger before), rejected (its training did not promote it, or it lost its trial). A
# training attempt's outcome: on trial, promoted, rolled back, rejected, or failed (nothing
# stored).


class TrainError(Exception):
    """The graph cannot train a model (too small, no held-out edges); the message says why."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """The trigger settings (RANKER_TRAIN_*)."""

    every_seconds: float
    retry_seconds: float
    growth: float
    min_edges: int


@dataclass(frozen=True, slots=True)
class TrainingState:
    """What the triggers read from the registry: the served version (0: none this code can
    read), the edges it was trained on, and the last attempt (None before the first)."""

    served: int = 0
    served_edges: int | None = None
    attempt_at: float | None = None  # unix seconds
    attempt_outcome: str | None = None
    attempt_edges: int | None = None
    attempt_why: str | None = None
    trial: bool = False  # a promoted model is on trial (``trial``)


# Why a served model is stale, as a metric's label: the graph changed past the growth bound,
# the last training failed, no model is served although the graph is large enough.
STALE_REASONS = ("graph_changed", "training_failed", "no_model")


@dataclass(frozen=True, slots=True)
class Stale:
    """One reason the served model is stale: ``reason`` (of STALE_REASONS) for a metric's
    label, ``line`` for an operator."""

    reason: str
    line: str


def due_at(state: TrainingState, schedule: Schedule) -> tuple[float | None, int]:
    """When the next training is due: (unix seconds, None for at once; follow edges from which
    it is due whatever the time)."""
    if state.attempt_at is None:
        return None, schedule.min_edges
    # a model rolled back on its trial is not fitted again at once on the same graph
    quick = state.attempt_outcome == "failed" or (
        not state.served and state.attempt_outcome != "rolled back"
    )
    wait = schedule.retry_seconds if quick else schedule.every_seconds
    grown = max(schedule.min_edges, math.ceil(baseline(state) * (1 + schedule.growth)))
    return state.attempt_at + wait, grown


def baseline(state: TrainingState) -> int:
    """The follow edges the growth trigger counts from: the served model's, or the last
    attempt's if that saw more (a rejected candidate is not fitted again on the same graph)."""
    return max(state.served_edges or 0, state.attempt_edges or 0)


def trigger(state: TrainingState, edges: int, now: float, schedule: Schedule) -> str | None:
    """Why a training is due now (None: it is not, nor while a promoted model is on trial)."""
    if edges < schedule.min_edges or state.trial:
        return None
    at, grown = due_at(state, schedule)
    if at is None:
        return "no model is served yet" if not state.served else "no training recorded yet"
    if now >= at:
        return f"{now - (state.attempt_at or now):.0f} s since the last training"
    if edges >= grown:
        return f"the graph grew to {edges:,} follow edges (due at {grown:,})"
    return None


def load_clock(times: int, steps: int) -> bool:
    """Whether the newest slice's times are one load's clock rather than when follows were
    made: one time for all, or most steps between its distinct times one microsecond (what
    `graphsvc load` gives rows without times, in file order). Holding out such a slice holds
    out the file's tail, not the graph's future."""
    return times <= 1 or 2 * steps >= times - 1


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a training serves next: ``promote`` names the model (``MODEL``), a heuristic, or is
    None (the served ranking stays), and why."""

    promote: str | None
    why: str


MODEL = "model"
EXACT = " (exact)"  # after a heuristic's name: computed on the whole training view, uncapped


def exact_name(heuristic: str) -> str:
    return heuristic + EXACT


def verdict(
    scores: Scores,
    served: str,
    heuristics: Sequence[str],
    default: bool,
    stale: bool = False,
    discoveries: Scores | None = None,
) -> Verdict:
    """Promote the fitted model only when its interval over the best heuristic is above zero
    (the exact heuristics, computed on the whole training view, when the scores have them;
    else the service's own, ranking its capped pool), when no band of users loses to that
    heuristic nor loses to it on the ``discoveries`` (the same lists scored without the
    held-out follow-backs, when some were held out), and when it beats the served ranking too.
    A ``stale`` served ranking (fitted on
    a graph that changed past the growth bound) only has to be matched, not beaten: a ranking
    fitted on the graph as it is wins a tie with one fitted on another.

    Else the best of the service's own heuristics (what it can serve) is served when it beats
    what is served (matches it, when that is stale), or when what is served is the built-in
    default (no one's measured choice); else what is served stays."""
    exact = [exact_name(h) for h in heuristics if exact_name(h) in scores.per_user]
    best = max(exact or heuristics, key=lambda name: scores.whole[name])
    model = f"precision@10 {scores.whole[MODEL]:.4f}"
    over_best = scores.interval(MODEL, best)
    over_served = scores.interval(MODEL, served)
    losing = scores.losing_bands(MODEL, best)
    keeps_up = over_served.above or (stale and not over_served.below)
    if discoveries is not None and best in discoveries.per_user:
        without = discoveries.interval(MODEL, best)
        losing += [("the discoveries", without)] if without.below else []
    if over_best.above and keeps_up and not losing:
        over = "matches the stale" if not over_served.above else "beats"
        return Verdict(
            MODEL,
            f"{model} beats {best} ({over_best.text()}) and {over} {served} "
            f"({over_served.text()}), and no band of users loses",
        )
    if not over_best.above:
        why = f"{model} is not above {best} beyond the bootstrap's spread ({over_best.text()})"
    elif losing:
        named = "; ".join(f"{name} {interval.text()}" for name, interval in losing)
        why = f"{model} beats {best} on average but loses to it on {named}"
    else:
        why = f"{model} is not above {served} beyond the bootstrap's spread ({over_served.text()})"
    own = max(heuristics, key=lambda name: scores.whole[name])
    over = scores.interval(own, served)
    if own != served and (default or over.above or (stale and not over.below)):
        return Verdict(own, f"{why}; {own} ({scores.whole[own]:.4f}) is served instead")
    return Verdict(None, why)


def drift(state: TrainingState, edges: int) -> float | None:
    """How much the follow edges changed since the served model was trained, as a share of
    the edges it was trained on (0.25: a quarter more; -0.1: a tenth fewer); None when no model
    is served or its edges are not known."""
    if not state.served or not state.served_edges:
        return None
    return edges / state.served_edges - 1


def staleness(state: TrainingState, edges: int, schedule: Schedule) -> list[Stale]:
    """Why the served model is stale, with ``edges`` follow edges in the graph now (empty:
    it is not)."""
    found = []
    change = drift(state, edges)
    # a rejected training validated the served model on the graph it saw: that is its age
    validated = state.attempt_edges if state.attempt_outcome == "rejected" else None
    reference = validated or state.served_edges
    if change is not None and reference:
        grown = math.ceil(reference * (1 + schedule.growth))
        shrunk = math.floor(reference * (1 - schedule.growth))
        if edges >= grown or edges <= shrunk:
            line = (
                f"the served v{state.served} was trained on {state.served_edges:,} follow "
                + (f"edges (last validated on {validated:,}), " if validated else "edges, ")
                + f"the graph has {edges:,} now ({edges / reference - 1:+.0%}, past the "
                f"{schedule.growth:.0%} bound)"
            )
            found.append(Stale("graph_changed", line))
    if state.attempt_outcome == "failed":
        why = state.attempt_why or "no reason noted"
        found.append(Stale("training_failed", f"the last training failed: {why}"))
    if not state.served and edges >= schedule.min_edges:
        line = (
            f"no trained model is served although the graph has {edges:,} follow edges "
            f"(training starts at {schedule.min_edges:,})"
        )
        found.append(Stale("no_model", line))
    return found


def stale_text(found: list[Stale]) -> str:
    """The reasons on one line, "stale: ...; ...", or "ok"."""
    return "stale: " + "; ".join(s.line for s in found) if found else "ok"


def split_bucket(user_id: str, challenger: int) -> float:
    """The user's place in [0, 1) for the split with this challenger."""
    digest = hashlib.blake2b(f"{challenger}:{user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def takes_challenger(user_id: str, challenger: int, share: float) -> bool:
    """Whether the split ranks this user's suggestions with the challenger."""
    return challenger > 0 and split_bucket(user_id, challenger) < share
