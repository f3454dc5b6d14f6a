"""What the graph itself answers, each a bounded Neo4j read for a viewer: the lists the mirror
does not hold, the changes and growth series of lists over time, the distances between users,
audiences over many lists."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.builders.core import Core
from graphsvc.services.audiences import Audiences
from graphsvc.services.changes import Changes
from graphsvc.services.distance import Distances
from graphsvc.services.graph_pages import GraphPages
from graphsvc.services.series import GrowthSeries


@dataclass(frozen=True, slots=True)
class GraphReads:
    graph_pages: GraphPages
    changes: Changes
    growth_series: GrowthSeries
    distances: Distances
    audiences: Audiences


def build_graph_reads(core: Core) -> GraphReads:
    settings, neo4j, privacy = core.settings, core.neo4j, core.privacy
    return GraphReads(
        GraphPages(neo4j.pages, privacy, settings.pages, settings.interactions),
        Changes(neo4j.changes, privacy, settings.changes, settings.pages),
        GrowthSeries(neo4j.changes, core.redis.series, privacy, settings.changes),
        Distances(neo4j.pages, settings.pages),
        Audiences(neo4j.pages, privacy, settings.pages),
    )
