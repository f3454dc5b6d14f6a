"""Account moves: the job kind that moves an account's followers (its mark in Neo4j is its
record: every process may run it, the workers claim it), and the moves' service."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.services.moves import Moves
from graphsvc.workers.move_jobs import MoveJobs


def build_move_jobs(core: Core) -> MoveJobs:
    settings = core.settings
    return MoveJobs(
        core.neo4j.moves, core.relations, core.writes, core.jobs, settings.moves, settings.worker
    )


def build_moves(core: Core, jobs: MoveJobs) -> Moves:
    return Moves(core.neo4j.moves, jobs, core.settings.moves)
