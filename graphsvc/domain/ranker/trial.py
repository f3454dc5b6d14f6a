"""The trial of a newly promoted ranker, as rules: a model a training promotes first ranks a
share of users (RANKER_TRIAL_SHARE) as the challenger of an A/B split against what was served,
and is served to everyone only when the users it ranked do not follow its suggestions less.

Online precision is follows attributed per suggestion shown (``online_figures``), counted
for each arm since the trial began. Once both arms were shown RANKER_TRIAL_MIN_SHOWN
suggestions the difference is judged with its 95% interval (a normal approximation of two
proportions): below zero, the challenger is rolled back; above zero, it is served to
everyone at once; in between, the trial goes on gathering evidence until RANKER_TRIAL_SECONDS
have passed, and the challenger is then served, as nothing shows it worse. A trial that saw
too few shows to judge by then (a service nobody asks yet) ends the same way: the model is
served on the strength of its offline validation, and the reason says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.96
PROMOTE = "promote"
ROLL_BACK = "roll back"


@dataclass(frozen=True, slots=True)
class Arm:
    """What one arm's users were shown and followed during the trial."""

    shown: int = 0
    follows: int = 0

    @property
    def precision(self) -> float:
        return self.follows / self.shown if self.shown else 0.0

    def since(self, base: Arm) -> Arm:
        """The counts made after ``base`` was read (never below zero: counters that were
        reset count from nothing)."""
        if self.shown < base.shown or self.follows < base.follows:
            return self
        return Arm(self.shown - base.shown, self.follows - base.follows)

    def text(self) -> str:
        return f"{self.precision:.4f} ({self.follows:,} follows of {self.shown:,} shown)"


@dataclass(frozen=True, slots=True)
class TrialRules:
    """The trial settings (RANKER_TRIAL_*)."""

    share: float
    seconds: float
    min_shown: int


@dataclass(frozen=True, slots=True)
class TrialVerdict:
    """``action``: PROMOTE, ROLL_BACK, or None (the trial goes on); ``why`` in words."""

    action: str | None
    why: str


def served_name(version: int) -> str:
    """How a trial names the version it is against (0: the built-in default)."""
    return f"v{version}" if version else "the built-in default"


def difference(challenger: Arm, incumbent: Arm) -> tuple[float, float, float]:
    """The challenger's precision minus the incumbent's, with its 95% interval (low, high)."""
    p, q = challenger.precision, incumbent.precision
    spread = math.sqrt(p * (1 - p) / challenger.shown + q * (1 - q) / incumbent.shown)
    return p - q, p - q - Z95 * spread, p - q + Z95 * spread


def judge(
    challenger: Arm, incumbent: Arm, elapsed: float, rules: TrialRules, served: str
) -> TrialVerdict:
    """What the trial does now, ``elapsed`` seconds after it began (``served``: how the
    incumbent is named, "v3" or "the built-in default")."""
    over = elapsed >= rules.seconds
    seen = min(challenger.shown, incumbent.shown)
    if seen < rules.min_shown:
        if not over:
            return TrialVerdict(None, f"{seen:,} of {rules.min_shown:,} shows per arm so far")
        return TrialVerdict(
            PROMOTE,
            f"served on its validation: after {rules.seconds:.0f} s of trial, {seen:,} shows "
            f"per arm, fewer than the {rules.min_shown:,} that online precision is judged on",
        )
    diff, low, high = difference(challenger, incumbent)
    figures = (
        f"online precision {challenger.text()} against {served}'s {incumbent.text()}: "
        f"{diff:+.4f} [{low:+.4f}, {high:+.4f}]"
    )
    if high < 0:
        return TrialVerdict(ROLL_BACK, f"rolled back on its trial: {figures}")
    if low > 0:
        return TrialVerdict(PROMOTE, f"won its trial: {figures}")
    if over:
        return TrialVerdict(PROMOTE, f"not worse after {rules.seconds:.0f} s of trial: {figures}")
    return TrialVerdict(None, f"undecided so far: {figures}")
