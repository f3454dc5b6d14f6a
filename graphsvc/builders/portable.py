"""Portable relations: the job kind that applies imports (every process records it; the
workers run it), and the exports' and imports' services (a serving process's)."""

from __future__ import annotations

from graphsvc.builders.core import Core
from graphsvc.builders.lists import build_lists
from graphsvc.services.portable.applying import Applier
from graphsvc.services.portable.exports import Exports
from graphsvc.services.portable.imports import Imports
from graphsvc.workers.import_jobs import ImportJobs


def build_import_jobs(core: Core) -> ImportJobs:
    settings, redis = core.settings, core.redis
    applier = Applier(
        core.neo4j.portable, core.relations, core.mutes, build_lists(core), settings.lists
    )
    return ImportJobs(
        redis.import_records,
        applier,
        redis.import_job_queue,
        core.jobs,
        settings.portable,
        settings.timelines,
        settings.worker,
    )


def build_exports(core: Core) -> Exports:
    return Exports(core.neo4j.portable, core.settings.writes, core.settings.lists)


def build_imports(core: Core, jobs: ImportJobs) -> Imports:
    return Imports(core.redis.import_records, jobs, core.settings.portable)
