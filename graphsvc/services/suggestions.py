"""People you may know: candidates from every source, ranked, cached; the cold start; dismissals.

One bounded Cypher query gathers candidates with their features from friends of friends,
followers not followed back and co-followers (the query ``suggestions/candidates``); a
user with fewer than SUGGEST_THIN of them also gets three-hop candidates
(``suggestions/three_hop``). The ranker (``domain/ranker/scoring``: the promoted model, the
challenger of an A/B split for its share of users, or the built-in default) scores them in
this process. The 50 best are cached per user
for SUGGEST_CACHE_SECONDS; writes that change them bump the user's generation (``writes``).
Shows recorded as impressions sink a suggestion when it is served (``impressions``), not in the
cache; computing a list notes its ids (the SUGGESTIONS_KEPT cached), the only ones whose
shows count. Privacy: the candidates' sources read only lists the user may see (a hidden
network is never an intermediary, and so never a via) and never suggest a user who is not
discoverable; a list served from the cache is checked against the settings as they are now,
read in the round trip that reads how often each suggestion was shown, and its reasons are
counted again (the cache keeps everyone a ``mutual_count`` counts, not only the three named):
one whose following the user no longer sees is neither counted nor named. Only those that
show their following to followers or mutual follows cost a read of the user's ties with them
in Neo4j (bounded: the followings a computation expands). Counts: a candidate that hides its
counts (the candidate queries say so, from the node they read anyway) is scored blind to them,
its count features at the model's centre, so neither its score nor its place tells them; the
cache marks such a score, and a cached score computed while a candidate showed its counts is
left out once it hides them (the settings the cached list is checked against). Too few
candidates (a user who follows nobody): trending accounts, then popular ones, fill the list,
from the charts the workers keep in Redis (``workers/cold_start_charts.py``), filtered for the
user; an account that hides its counts is no fill, as the charts rank by counts. A
dismissal names a user of the graph (it never creates one) and is refused while either user
is being erased.

Every answer carries a recommendation id naming the version of the ranker that computed its
list (a cached list keeps its version); what users do with it is counted per version
(``recommendations``).

``Candidates.rows`` is also what the ranker's training learns from (with the held-out edges made
invisible), so the model is trained on exactly the features it is served.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.failures import RedisError
from graphsvc.adapters.neo4j.suggestions import SuggestionStore
from graphsvc.adapters.redis.client import REDIS_DOWN
from graphsvc.adapters.redis.cold_start import ColdStartCharts
from graphsvc.adapters.redis.privacy import PrivacyProbe
from graphsvc.adapters.redis.suggestion_cache import SuggestionCache
from graphsvc.concurrency.breaker import Breaker
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.errors import InvalidLimit, SelfAction, UnknownUser, UserErasing
from graphsvc.domain.ids import REHEARSAL_USER, validate_user_id
from graphsvc.domain.model import Suggestion
from graphsvc.domain.privacy import privacy_ids, recounted, still_allowed, ties_to_read
from graphsvc.domain.ranker.scoring import Ranker, scored_vector, spread
from graphsvc.domain.recommendation_ids import Ranked, Recommended
from graphsvc.services.impressions import Impressions
from graphsvc.services.privacy import PrivacyRules
from graphsvc.services.ranker import RankerSource
from graphsvc.services.suggestion_feedback import SuggestionFeedback
from graphsvc.services.telemetry import SUGGESTION_CACHE_HITS, SUGGESTION_CACHE_MISSES
from graphsvc.settings import InteractionSettings, SuggestionSettings

log = logging.getLogger(__name__)

SUGGESTIONS_KEPT = 50  # computed and cached per user; `limit` takes a prefix
FILL_READ = 3  # accounts of the cold start's charts filtered per place left to fill
WIDEN = 20  # a second, wider pass for users whose first followings yield too few names


@dataclass(frozen=True, slots=True)
class Computed:
    """One computation of a user's suggestions: the candidates with their features (``rows``),
    all of them ranked (``ranked``), and the list kept (the first SUGGESTIONS_KEPT, filled
    when too few)."""

    rows: list[dict[str, Any]]
    ranked: list[Suggestion]
    kept: list[Suggestion]


class Suggestions:
    def __init__(
        self,
        store: SuggestionStore,
        cache: SuggestionCache,
        charts: ColdStartCharts,
        breaker: Breaker,
        settings: SuggestionSettings,
        interactions: InteractionSettings,
        ranker: RankerSource,
        impressions: Impressions,
        privacy: PrivacyRules,
        feedback: SuggestionFeedback,
    ) -> None:
        self._store = store
        self.cache = cache
        self.fills = Fills(store, charts, breaker)
        self.candidates = Candidates(store, settings, interactions.affinity_half_life_us)
        self._breaker = breaker
        self.ranker = ranker
        self._impressions = impressions
        self._privacy = privacy
        self.feedback = feedback

    async def suggestions(self, user_id: str, limit: int) -> list[Suggestion]:
        return (await self.recommend(user_id, limit)).items

    async def recommend(self, user_id: str, limit: int) -> Recommended:
        """The best ``limit`` suggestions now, and the recommendation id of this answer."""
        validate_user_id(user_id)
        if not 1 <= limit <= SUGGESTIONS_KEPT:
            raise InvalidLimit(f"limit must be between 1 and {SUGGESTIONS_KEPT}, got {limit}")

        async def cached() -> Ranked:
            stored, generation = await self.cache.get(user_id)
            items = [Suggestion.from_json(item) for item in stored[1]] if stored else []
            if stored is not None and all(s.recountable for s in items):
                SUGGESTION_CACHE_HITS.inc()
                return Ranked(stored[0], items)
            SUGGESTION_CACHE_MISSES.inc()
            found = await self._ranked(user_id)
            items = [s.cached_json() for s in found.items]
            await self.cache.put(user_id, generation, found.version, items)
            # what any answer from this cache entry serves: noted once, not on every read
            await self._impressions.served(user_id, found.items)
            return found

        ranked = await self._breaker.read("suggestions", cached, lambda: self._ranked(user_id))
        # The settings of the likely served (twice the page, and their vias) and the answer's
        # counters go with the shows; all the settings only if the re-rank lifted one.
        probe = PrivacyProbe(privacy_ids(ranked.items[: 2 * limit]))
        counted = self.feedback.served_on(ranked.version, min(limit, len(ranked.items)))
        found = await self._impressions.rerank(
            user_id, ranked.items, self._privacy.alongside(probe), *counted
        )
        settings = await self._privacy.of_probed(probe.user_ids, probe)
        kept = still_allowed(found, settings, limit)
        if kept is None:
            settings = await self._privacy.of(privacy_ids(found))
            kept = still_allowed(found, settings, limit)
        assert kept is not None
        ties = await self._privacy.ties_among(user_id, ties_to_read(kept, settings))
        items = [recounted(s, user_id, settings, ties) for s in kept]
        served = [s.user_id for s in items]
        return Recommended(items, self.feedback.issue(user_id, ranked.version, served))

    async def compute(self, user_id: str) -> list[Suggestion]:
        """Suggestions computed now (no cache, no impressions)."""
        return (await self.computed(user_id, await self.ranker_for(user_id))).kept

    async def ranker_for(self, user_id: str) -> Ranker:
        """The one place the model of a user's list is chosen (computing, caching and explaining
        take the same one; its version travels with the list: the cache, the recommendation
        id): the served model, or the challenger's for the users an A/B split draws."""
        return await self.ranker.ranker_for(user_id)

    async def _ranked(self, user_id: str) -> Ranked:
        """The list computed now, with the version of the ranker that ranked it."""
        ranker = await self.ranker_for(user_id)
        return Ranked(ranker.version, (await self.computed(user_id, ranker)).kept)

    async def computed(self, user_id: str, ranker: Ranker) -> Computed:
        """Every candidate, ranked by ``ranker``, and the list kept from them."""
        rows = await self.candidates.rows(user_id, now=time.time_ns() // 1_000)
        every = ranked(rows, ranker)
        found = every[:SUGGESTIONS_KEPT]
        if len(found) < SUGGESTIONS_KEPT:  # cold start, or too few: trending, then popular
            found += await self.fills.of(
                user_id, {s.user_id for s in found}, SUGGESTIONS_KEPT - len(found)
            )
        return Computed(rows, every, found)

    async def dismiss(
        self, user_id: str, target_id: str, recommendation_id: str | None = None
    ) -> bool:
        """Never suggest the target to the user again. The target must be a user of the graph
        (404 ``unknown_user``: a dismissal never creates one), and neither may be being erased
        (409 ``user_erasing``). A new one carrying a recommendation id counts for its version."""
        validate_user_id(user_id, "user_id")
        validate_user_id(target_id, "target_id")
        if user_id == target_id:
            raise SelfAction(f"user {user_id!r} cannot dismiss itself")
        recommendation = self.feedback.carried(user_id, recommendation_id)
        created, refused = await self._store.dismiss(user_id, target_id)
        if refused == "unknown_target":
            raise UnknownUser(f"no user {target_id!r} to dismiss")
        if refused == "erasing":
            raise UserErasing(f"{user_id!r} or {target_id!r} is being erased")
        try:
            await self.cache.invalidate(user_id)
        except REDIS_DOWN as exc:  # committed; a stale cache entry lives SUGGEST_CACHE_SECONDS
            self._breaker.trip(exc)
        except RedisError:
            log.exception("suggestion cache invalidation failed after a dismiss")
        await self.feedback.dismissed(recommendation, created, target_id)
        return created


class Candidates:
    """The candidates of a user with their features, as the ranker takes them, the same for
    serving and training; their reads planned before the first request needs them."""

    def __init__(
        self, store: SuggestionStore, settings: SuggestionSettings, half_life_us: int
    ) -> None:
        self._store = store
        self._settings = settings
        self._half_life_us = half_life_us
        # After Neo4j was lost, its plans of these reads are made again before the next one.
        self.plans = WarmUp("Neo4j's plans of the candidate reads", self.prepare)
        store.prepared_by(self.plans)

    async def prepare(self) -> None:
        """Have Neo4j plan the candidate reads before a request needs them: a Neo4j that has
        just started takes seconds to plan these, the largest statements, which a request's
        transaction timeout may not cover on a busy host. Reads for an id no request can name
        (nothing is found), under the long jobs' timeout, three hops included."""
        common = self._common(time.time_ns() // 1_000, None, (), ())
        await self._near(REHEARSAL_USER, common, widen=1, job=True)
        await self._far(REHEARSAL_USER, common, job=True)

    async def rows(
        self,
        user_id: str,
        *,
        now: int,
        before: int | None = None,
        hidden: Sequence[str] = (),
        hidden_back: Sequence[str] = (),
        job: bool = False,
    ) -> list[dict[str, Any]]:
        """Every candidate with its features, as the ranker takes them, the same for serving
        and training. ``before``, ``hidden`` (my follows of them), ``hidden_back`` (theirs of
        me) make edges invisible, ``now`` is the moment of the decays, ``job`` puts the reads
        under the long jobs' timeout (a training's).

        A user who follows more than SUGGEST_INTERMEDIARIES and got fewer than 50 candidates
        (many friends whose first ones yield few new names) is asked again WIDEN times wider,
        reading a WIDEN-th of the edges from each following (the same bound on work): the list
        is never filled with popular accounts while friends of friends exist. Then, if the
        neighbourhood is still thin and the user follows someone, three-hop candidates are
        added."""
        if not job:
            await self.plans.ready(self._store.timeout)
        settings = self._settings
        common = self._common(now, before, hidden, hidden_back)
        rows = await self._near(user_id, common, widen=1, job=job)
        if len(rows) >= max(SUGGESTIONS_KEPT, settings.suggest_thin):
            return rows
        following = await self._store.following_count(user_id, job=job)
        if len(rows) < SUGGESTIONS_KEPT and following > settings.suggest_intermediaries:
            rows = await self._near(user_id, common, widen=WIDEN, job=job)
        if len(rows) < settings.suggest_thin and following:  # three hops start at my follows
            merge_three_hop(rows, await self._far(user_id, common, job))
        return rows

    def _common(
        self,
        now: int,
        before: int | None,
        hidden: Sequence[str],
        hidden_back: Sequence[str],
    ) -> dict[str, Any]:
        settings = self._settings
        return {
            "now": now,
            "before": before,
            "hidden": list(hidden),
            "hidden_back": list(hidden_back),
            "fresh_h": settings.fresh_half_life_us,
            "candidates": settings.suggest_candidates,
            "edges": settings.suggest_edges_per_intermediary,
        }

    async def _far(self, user_id: str, common: dict[str, Any], job: bool) -> list[dict[str, Any]]:
        settings = self._settings
        far = await self._store.three_hop(
            user_id,
            job=job,
            intermediaries=settings.suggest_intermediaries,
            items=settings.suggest_cofollowers,
            **common,
        )
        return [dict(row) for row in far]

    async def _near(
        self, user_id: str, common: dict[str, Any], widen: int, job: bool
    ) -> list[dict[str, Any]]:
        settings = self._settings
        near = await self._store.candidates(
            user_id,
            job=job,
            h=self._half_life_us,
            intermediaries=settings.suggest_intermediaries * widen,
            scan=max(1, settings.suggest_scan // widen),
            items=settings.suggest_cofollow_items,
            cofollowers=settings.suggest_cofollowers,
            walks=settings.suggest_walks,
            steps=settings.suggest_walk_steps,
            fanout=settings.suggest_walk_fanout,
            restart=round(settings.suggest_walk_restart * 1_000),
            seed=walk_seed(user_id),
            **common,
        )
        return [with_closest_vias(row) for row in near]


class Fills:
    """The fills of a short list: trending, then popular accounts."""

    def __init__(self, store: SuggestionStore, charts: ColdStartCharts, breaker: Breaker) -> None:
        self._store = store
        self._charts = charts
        self._breaker = breaker

    async def of(self, user_id: str, taken: set[str], places: int) -> list[Suggestion]:
        """Up to ``places`` trending, then popular accounts, none of ``taken``: the workers'
        charts (one Redis round trip; empty before their first round, or with Redis down: never
        a scan), those that may be suggested to the user (one query over those ids, which
        leaves out those that hid their counts since). A training fills the suggestions it scores with them too."""
        trending, popular = await self._breaker.read("cold_start", self._charts.read, _no_charts)
        source: dict[str, str] = {}
        for name, accounts in (("trending", trending), ("popular", popular)):
            for uid in accounts:
                if uid not in taken:
                    source.setdefault(uid, name)
        # the charts' head: three times the places left, as few in a chart pass the filter
        wanted = list(source)[: FILL_READ * places]
        allowed = await self._store.suggestable(user_id, wanted) if wanted else []
        return [Suggestion(uid, 0.0, 0, [], [source[uid]]) for uid in allowed[:places]]


async def _no_charts() -> tuple[list[str], list[str]]:
    """No list while Redis cannot be reached: the cold start never scans Neo4j instead."""
    return [], []


def ranked(rows: Sequence[dict[str, Any]], ranker: Ranker) -> list[Suggestion]:
    """The candidates as suggestions, best first. The score is the ranker's probability, so
    impressions can discount it by multiplication; ties go to the smaller id (stable pages).
    A candidate that hides its counts is scored blind to them (``scored_vector``). Followers
    not followed back take at most half of any first places (``spread``)."""
    scored = []
    for row in rows:
        z = ranker.score(scored_vector(row, ranker))
        probability = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
        scored.append((probability, row))
    scored.sort(key=lambda item: (-item[0], item[1]["id"]))
    scored = spread(scored, lambda item: bool(item[1].get("follows_you")))
    return [
        Suggestion(
            row["id"],
            probability,
            len(row.get("mutuals") or []),  # ``paths`` weighs each by affinity
            list(row.get("via") or []),
            sorted(row["sources"]),
            list(row.get("mutuals") or []),
            bool(row.get("counts_hidden")),
        )
        for probability, row in scored
    ]


def walk_seed(user_id: str) -> int:
    """The seed of a user's random walks: the same for the same user in every process and run
    (``hash`` is salted per process), so suggestions and `graphsvc ranker train` are
    reproducible."""
    return zlib.crc32(user_id.encode())


def with_closest_vias(row: dict[str, Any], kept: int = 3) -> dict[str, Any]:
    """The row's ``mutuals``: its intermediaries, closest first (by affinity, then id), from
    ``vias`` (what ``paths`` counts), and its ``via``: the first ``kept`` of them."""
    vias = sorted(row.pop("vias", None) or [], key=lambda v: (-v["affinity"], v["id"]))
    row["mutuals"] = [v["id"] for v in vias]
    row["via"] = row["mutuals"][:kept]
    return row


def merge_three_hop(rows: list[dict[str, Any]], far: Sequence[dict[str, Any]]) -> None:
    """Add three-hop features to the candidates found closer, and the new ones as candidates."""
    known = {row["id"]: row for row in rows}
    for extra in far:
        row = known.get(extra["id"])
        if row is None:
            row = {"id": extra["id"], "sources": [], "via": [], **extra}
            rows.append(row)
            known[extra["id"]] = row
        row["hop3"], row["hop3_paths"] = extra["hop3"], extra["hop3_paths"]
        row["sources"] = [*row["sources"], "three_hop"]
