"""No count field tells a number that the owner's settings hide from the viewer, on the real
servers.

The counts route hides every count of a user whose ``counts_visibility`` is private, and the
lists refuse a hidden network (``test_privacy.py``). Other answers carry numbers about users
too; each that could tell a hidden count, or count a hidden list, is checked here against a
viewer who may not see it, beside the owner (or a key that sees everything), who does:

- a post's state: ``followers`` walked, ``pushed``, and ``mode``, which tells whether the
  author is past the celebrity threshold, follow the author's ``counts_visibility``;
- a suggestion's ``mutual_count`` and ``via``, served from the cache, count and name only the
  people whose following the user may see now (a following made private, or shown to
  followers or mutuals when a tie it needs is gone, no longer counts);
- rankings: a similar account's score divides by the root of its follower count, so an
  account that hides its counts is left out of the accounts similar to a seed; a suggestion
  whose candidate hides its counts is scored with its count features at the model's centre
  (computed, cached, and in the explainer), and a cached score computed before it hid them is
  not served (the trending and popular fills: ``test_cold_start.py``); a path through an
  intermediary that hides its counts is damped by a constant, not by its degree.

The other count fields are the user's own view (relationships, follow requests and
approve-all's ``pending``, mutes, blocks' ``removed_follows``, impressions' ``recorded``),
for admin and internal keys only (statuses' ``progress``, the explainer, the ranker's
report), or count only lists the user may see (``shared_followers`` of similar accounts:
``test_similar.py``; the totals of the common and familiar lists).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from graphsvc.adapters.neo4j.ranker_models import NewModel
from graphsvc.bootstrap import Services
from graphsvc.domain.access import Scope
from graphsvc.domain.ranker.scoring import Ranker
from tests.support.driver import AsViewer, Driver

MakeDriver = Callable[..., Driver]
Uid = Callable[[str], str]
READ_WRITE = frozenset({Scope.READ, Scope.WRITE})
AT = datetime(2026, 11, 1, tzinfo=UTC)


async def bound_to(make_driver: MakeDriver, backends: Services, user: str) -> Driver:
    """A driver with a key bound to ``user``."""
    key = await backends.access.create(READ_WRITE, user=user)
    return make_driver(key=key.token)


# -- a post's state -----------------------------------------------------------------------------


async def test_a_post_state_hides_its_fan_out_figures_where_the_author_hides_its_counts(
    driver: Driver, make_driver: MakeDriver, backends: Services, uid: Uid, as_viewer: AsViewer
) -> None:
    author, fan, stranger = uid("author"), uid("fan"), uid("stranger")
    await driver.follow_pairs((fan, author))
    await driver.publish(author, "p1", AT)
    await driver.drain()
    full = await driver.post(author, "p1")  # an admin key naming no viewer sees everything
    assert (full.mode, full.followers, full.counts_hidden) == ("push", 1, False)
    await driver.set_privacy(author, counts_visibility="private")
    for viewer in (None, fan, stranger):
        async with as_viewer(viewer) as graph:
            hidden = await graph.post(author, "p1")
        assert (hidden.mode, hidden.followers, hidden.pushed) == (None, None, None), viewer
        assert hidden.counts_hidden is True, viewer
        # how far the fan-out got tells how many it walks: published, whether done or not
        assert (hidden.post_id, hidden.author, hidden.state) == ("p1", author, "published")
    async with as_viewer(author) as graph:
        assert await graph.post(author, "p1") == full
    async with await bound_to(make_driver, backends, author) as own:
        assert await own.post(author, "p1") == full
    assert await driver.post(author, "p1") == full
    await driver.set_privacy(author, counts_visibility="public")
    async with as_viewer(stranger) as graph:
        assert await graph.post(author, "p1") == full


# -- suggestions served from the cache ----------------------------------------------------------


async def served_from_cache(driver: Driver, me: str, target: str) -> tuple[int, list[str]]:
    """The target's reasons as a read of the cached list serves them (the entry is there)."""
    stored, _ = await driver.services.suggestions.cache.get(me)
    assert stored is not None, "the list was to be served from the cache"
    reasons = (await driver.suggested(me))[target].reasons
    return reasons.mutual_count, reasons.via


async def test_a_cached_suggestion_counts_and_names_only_whom_the_user_may_see_follow_now(
    driver: Driver, uid: Uid
) -> None:
    """Five people I follow follow the target (the three closest named: equal affinities, so
    the smaller ids); then their settings change, which drops no entry of my cache, and one
    of them stops following me, which drops none either."""
    me, target = uid("me"), uid("target")
    m1, m2, m3, m4, m5 = sorted(uid(f"m{n}") for n in range(5))
    await driver.follows(me, m1, m2, m3, m4, m5)
    await driver.follow_pairs((m2, me), *((m, target) for m in (m1, m2, m3, m4, m5)))
    reasons = (await driver.suggested(me))[target].reasons
    assert (reasons.mutual_count, reasons.via) == (5, [m1, m2, m3])

    await driver.set_privacy(m1, following_visibility="private")  # named: hidden
    await driver.set_privacy(m2, following_visibility="mutuals")  # we follow each other: seen
    await driver.set_privacy(m3, following_visibility="followers")  # I follow it: seen
    await driver.set_privacy(m4, following_visibility="private")  # not named: hidden
    assert await served_from_cache(driver, me, target) == (3, [m2, m3, m5])

    await driver.unfollow(m2, me)  # mutuals no more: m2's following is hidden from me now
    assert await served_from_cache(driver, me, target) == (2, [m3, m5])

    await driver.services.suggestions.cache.invalidate(me)  # computed afresh: the same
    reasons = (await driver.suggested(me))[target].reasons
    assert (reasons.mutual_count, reasons.via) == (2, [m3, m5])


# -- rankings -----------------------------------------------------------------------------------


async def test_similar_accounts_leave_out_an_account_that_hides_its_counts(
    driver: Driver, uid: Uid
) -> None:
    """A similar account's score divides by the root of its follower count: two fake followers
    of the seed that follow it would read the count back, and its place among public
    accounts would bracket it. Shy and twin are followed by the same followers of the seed;
    shy has three more followers."""
    me, seed, shy, twin, w1, w2 = (uid(n) for n in ("me", "seed", "shy", "twin", "w1", "w2"))
    await driver.follow_pairs((me, seed), (w1, seed), (w2, seed))
    await driver.follow_pairs((w1, shy), (w2, shy), (w1, twin), (w2, twin))
    await driver.follow_pairs(*((uid("fan"), shy) for _ in range(3)))
    found = {i.user_id: i for i in (await driver.similar(me, seed, limit=50)).items}
    assert found[twin].score > found[shy].score  # the count moves the score
    await driver.set_privacy(shy, counts_visibility="private")
    found = {i.user_id: i for i in (await driver.similar(me, seed, limit=50)).items}
    assert shy not in found and twin in found
    await driver.set_privacy(shy, counts_visibility="public")
    assert shy in {i.user_id for i in (await driver.similar(me, seed, limit=50)).items}


COUNTED = {"followers": 1.0, "follows": 0.5, "paths_share": 1.0}
# A model whose score moves with the candidate's counts (and with paths, its only other term).
BY_COUNTS = Ranker(
    weights={"paths": 1.0, **COUNTED},
    scale={"followers": 2.0, "follows": 2.0, "paths_share": 0.5},
    mean={"followers": 0.7, "follows": 0.3, "paths_share": 0.2},
    std={"followers": 0.5, "follows": 0.4, "paths_share": 0.25},
)


async def served_model(services: Services, ranker: Ranker) -> None:
    """``ranker`` stored and promoted under the service's model name, and served now."""
    name = services.settings.suggestions.ranker_model_name
    body = dataclasses.replace(ranker, trained={"edges": 0}).as_json()
    new = NewModel(json.dumps(body), "{}", time.time_ns() // 1_000, 0, True, 0, "made by a test")
    _, promoted = await services.core.neo4j.ranker_models.save(name, new)
    assert promoted
    assert (await services.suggestions.ranker.refresh()).version > 0


async def test_a_suggestion_is_never_ranked_by_the_counts_its_candidate_hides(
    make_driver: MakeDriver, uid: Uid
) -> None:
    """Twins a and b are suggested to me through one friend, the same in every feature the
    model weighs but their followers: a has five more. Once both hide their counts, neither
    is served with the score the list cached before, and computed again they score the same
    (their count features at the model's centre, adding nothing), in the cache too; the
    explainer shows what is served."""
    me, m, a, b = uid("me"), uid("m"), uid("a"), uid("b")
    async with make_driver(ranker_model_name=uid("model"), ranker_refresh_seconds=3600) as d:
        await served_model(d.services, BY_COUNTS)
        await d.follow_pairs((me, m), (m, a), (m, b))
        await d.follow_pairs(*((uid("fan"), a) for _ in range(5)))
        found = await d.suggested(me)
        assert found[a].score != found[b].score  # the counts move the score

        await d.set_privacy(a, counts_visibility="private")
        await d.set_privacy(b, counts_visibility="private")
        stored, _ = await d.services.suggestions.cache.get(me)
        assert stored is not None  # a settings change drops no one else's cache entry
        found = await d.suggested(me)
        assert a not in found and b not in found  # scored with their counts: not served

        await d.services.suggestions.cache.invalidate(me)
        for _ in ("computed", "cached"):
            found = await d.suggested(me)
            assert found[a].score == found[b].score
        why = await d.explain_suggestion(me, a)
        assert why.counts_hidden and why.probability == pytest.approx(found[a].score, abs=1e-6)
        contributions = {f.name: f.contribution for f in why.features}
        assert all(contributions[n] == pytest.approx(0.0, abs=1e-9) for n in COUNTED)

        await d.set_privacy(b, counts_visibility="public")
        await d.services.suggestions.cache.invalidate(me)
        found = await d.suggested(me)
        assert found[a].score != found[b].score  # b ranked by its counts again


# A model whose score moves with the degrees of the intermediaries (resource allocation).
BY_PATHS = Ranker(
    weights={"ra": 2.0, "aa": 1.0},
    scale={"ra": 0.05, "aa": 0.2},
    mean={"ra": 0.5, "aa": 0.5},
    std={"ra": 0.5, "aa": 0.5},
)


async def test_a_path_is_never_damped_by_the_degree_its_intermediary_hides(
    make_driver: MakeDriver, uid: Uid
) -> None:
    """I follow m1 and m2, each the only path to its candidate (c1, c2), alike in all but
    their followers: m2 has thirty more. While they show their counts, the path through the
    busier one weighs less; once both hide them, c1 and c2 score the same."""
    me, m1, m2, c1, c2 = (uid(n) for n in ("me", "m1", "m2", "c1", "c2"))
    async with make_driver(ranker_model_name=uid("model"), ranker_refresh_seconds=3600) as d:
        await served_model(d.services, BY_PATHS)
        await d.follow_pairs((me, m1), (me, m2), (m1, c1), (m2, c2))
        await d.follow_pairs(*((uid("fan"), m2) for _ in range(30)))
        found = await d.suggested(me)
        assert found[c1].score > found[c2].score  # the busier intermediary damps its path

        for m in (m1, m2):
            await d.set_privacy(m, counts_visibility="private")
        await d.services.suggestions.cache.invalidate(me)
        found = await d.suggested(me)
        assert found[c1].score == pytest.approx(found[c2].score, rel=1e-6)
