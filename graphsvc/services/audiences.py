"""Audiences: how many users, and which, an expression over users' lists names ("followers of A
who also follow B but not C"), for a product's targeting or a data scientist's question.

Each conjunction of the expression (``domain.audience``) walks its shortest list in id order
and tests each entry against its other lists: a list no longer than the bound is read once
over the walked range and looked up in, a longer one probed per entry with an edge test. So
the work is bounded by AUDIENCE_SCAN_MAX entries per list of a conjunction, whatever the
lists' sizes. A count within that is
exact; past it, the count is of the entries examined (``total_is_lower_bound``) and an
``estimate`` scales it to the whole driving list, labelled as such. Pages walk in id order
with a signed cursor; a page that examined its bound without filling up is short, with a
cursor where it stopped, as common lists do.

Privacy: the answer is read from every list named, so each must be visible to the viewer
(403 ``network_hidden`` otherwise), as for any answer derived from several lists.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from graphsvc.adapters.neo4j.pages import PageStore
from graphsvc.domain.audience import Conjunction, Operand, parse
from graphsvc.domain.cursor import CursorCodec, Position
from graphsvc.domain.privacy import Viewer
from graphsvc.services.paging import Pager
from graphsvc.services.privacy import PrivacyRules
from graphsvc.settings import PageSettings


@dataclass(frozen=True, slots=True)
class AudienceCount:
    total: int
    exact: bool
    estimate: int | None  # when not exact: the total scaled to the whole driving lists
    examined: int


@dataclass(frozen=True, slots=True)
class _Plan:
    driver: Operand  # the list walked: the conjunction's shortest
    tests: list[tuple[Operand, bool, bool]]  # each other list, negated?, read whole?
    size: int  # the driving list's length


class Audiences:
    def __init__(self, pages: PageStore, privacy: PrivacyRules, settings: PageSettings) -> None:
        self._pages = pages
        self._privacy = privacy
        self._operands = settings.audience_operands_max
        self._conjunctions = settings.audience_conjunctions_max
        self._scan = settings.audience_scan_max
        self._pager = Pager(settings)
        self._codec = CursorCodec(settings.cursor_secret)

    async def count(self, expr: Any, *, viewer: Viewer) -> AudienceCount:
        conjunctions = self._parse(expr)
        plans = await self._plans(conjunctions, viewer)
        found: set[str] = set()
        exact, estimate, examined = True, 0.0, 0
        for plan in plans:
            scan = await self._pages.audience_scan(plan.driver, plan.tests, "", self._scan)
            found.update(scan.matched)
            examined += scan.examined
            if scan.examined >= self._scan:
                exact = False
            if scan.examined:
                estimate += len(scan.matched) / scan.examined * plan.size
        total = len(found)
        return AudienceCount(total, exact, None if exact else max(total, round(estimate)), examined)

    async def page(
        self, expr: Any, limit: int | None, cursor: str | None, *, viewer: Viewer
    ) -> tuple[list[str], str | None]:
        """A page of the audience in id order, and the next page's cursor (None: the end)."""
        limit = self._pager.limit(limit)
        conjunctions = self._parse(expr)
        scope = _scope(conjunctions)
        after = self._codec.decode(scope, cursor).user_id if cursor else ""
        plans = await self._plans(conjunctions, viewer)
        matched: set[str] = set()
        stops = []
        for plan in plans:
            scan = await self._pages.audience_scan(plan.driver, plan.tests, after, self._scan)
            matched.update(scan.matched)
            if scan.examined >= self._scan and scan.last is not None:
                stops.append(scan.last)  # past here this conjunction was not read
        boundary = min(stops) if stops else None
        ids = sorted(i for i in matched if boundary is None or i <= boundary)
        items = ids[:limit]
        resume = items[-1] if len(ids) > limit else boundary
        return items, self._codec.encode(scope, Position(0, resume)) if resume else None

    def _parse(self, expr: Any) -> list[Conjunction]:
        return parse(expr, max_operands=self._operands, max_conjunctions=self._conjunctions)

    async def _plans(self, conjunctions: list[Conjunction], viewer: Viewer) -> list[_Plan]:
        """Each conjunction's walk, once the viewer was checked against every list named."""
        operands = list(dict.fromkeys(o for c in conjunctions for o in (*c.lists, *c.without)))
        await self._privacy.check_answer([(o.owner, o.side) for o in operands], viewer)
        sizes = await self._pages.list_sizes(operands)
        plans = []
        for c in conjunctions:
            driver = min(c.lists, key=lambda o: (sizes[o], o.key))
            named = [(o, False) for o in c.lists if o != driver] + [(o, True) for o in c.without]
            tests = [(o, neg, sizes[o] <= self._scan) for o, neg in named]
            plans.append(_Plan(driver, tests, sizes[driver]))
        return plans


def _scope(conjunctions: list[Conjunction]) -> str:
    """The cursor's scope: the expression's meaning, so a cursor serves no other audience."""
    meaning = [[[o.key for o in c.lists], [o.key for o in c.without]] for c in conjunctions]
    digest = hashlib.sha256(json.dumps(meaning).encode()).hexdigest()[:16]
    return f"audience|{digest}"
