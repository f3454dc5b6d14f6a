"""The rounds a batch of edge writes commits in: each user's writes in arrival order, and
follows (or unfollows) sharing users in one statement, row by row."""

from __future__ import annotations

from graphsvc.domain.edge_writes import SHARING, EdgeWrite, Round, WriteKind, plan_rounds

FOLLOW, UNFOLLOW, BLOCK = WriteKind.FOLLOW, WriteKind.UNFOLLOW, WriteKind.BLOCK


def placed(rounds: list[Round]) -> list[list[int]]:
    return [sorted(i for rows in r.by_kind.values() for i, _ in rows) for r in rounds]


def test_writes_of_one_kind_share_a_round_and_others_wait_for_their_users() -> None:
    writes = [
        EdgeWrite(FOLLOW, "a", "b"),
        EdgeWrite(FOLLOW, "c", "d"),
        EdgeWrite(FOLLOW, "c", "b"),  # follows again: joins the first round
        EdgeWrite(UNFOLLOW, "a", "b"),  # another kind for a and b: the next round
        EdgeWrite(BLOCK, "b", "d"),  # a block never shares: after b's unfollow
        EdgeWrite(FOLLOW, "e", "a"),  # a's last write was an unfollow: the round after it
    ]
    assert placed(plan_rounds(writes)) == [[0, 1, 2], [3], [4, 5]]


def test_a_round_holds_each_user_in_one_kind_and_each_followers_rows_in_arrival_order() -> None:
    kinds = [FOLLOW, UNFOLLOW, BLOCK]
    users = "abcde"
    writes = [
        EdgeWrite(kinds[(n * 7) % 3 if n % 4 else 0], users[n % 5], users[(n * 3 + 1) % 5])
        for n in range(60)
        if users[n % 5] != users[(n * 3 + 1) % 5]
    ]
    rounds = plan_rounds(writes)
    assert sorted(i for r in placed(rounds) for i in r) == list(range(len(writes)))
    seen_round: dict[str, int] = {}
    for number, r in enumerate(rounds):
        kind_of: dict[str, WriteKind] = {}
        for kind, rows in r.by_kind.items():
            ends = [u for _, w in rows for u in (w.src, w.dst)]
            if kind not in SHARING:
                assert len(ends) == len(set(ends))
            for user in ends:
                assert kind_of.setdefault(user, kind) is kind
            positions = [i for i, _ in rows]
            by_src = [(w.src, i) for i, w in rows]
            assert by_src == sorted(by_src) and len(set(positions)) == len(positions)
        # every write of a user comes after its earlier writes: in a later round, or a later
        # row of this one
        for rows in r.by_kind.values():
            for _, w in rows:
                for user in (w.src, w.dst):
                    assert seen_round.get(user, -1) <= number
        for user in kind_of:
            seen_round[user] = number


def test_one_followers_import_is_one_round() -> None:
    writes = [EdgeWrite(FOLLOW, "importer", f"u{n}") for n in range(500)]
    (only,) = plan_rounds(writes)
    assert [i for i, _ in only.by_kind[FOLLOW]] == list(range(500))
