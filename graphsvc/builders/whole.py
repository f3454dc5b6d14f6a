"""Both processes' parts over one core, for scripts, tests, notebooks and the evaluations,
with the operators' door to the stores and the checks of the mirror and the timelines. A part
is reached where it lives: ``core``, ``background``, or the routes' services by name."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.builders.background import Background
from graphsvc.builders.serving import Serving
from graphsvc.services.consistency import Consistency
from graphsvc.services.maintenance import Maintenance
from graphsvc.services.timeline_check import TimelineCheck


@dataclass(frozen=True, slots=True)
class Services(Serving):
    background: Background
    maintenance: Maintenance
    consistency: Consistency
    timeline_check: TimelineCheck
