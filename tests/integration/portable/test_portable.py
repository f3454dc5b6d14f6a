"""Exports and imports of follows, blocks, mutes and lists on the real servers: Mastodon's CSV
files round-trip, bad rows are refused by name and change nothing, a retried import runs once,
an overwrite removes what the file does not hold, and a user's export is its own."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.support.driver import Driver, refused

Uid = Callable[[str], str]
CSV = {"Content-Type": "text/csv"}


async def imported(
    client: httpx.AsyncClient, driver: Driver, user: str, kind: str, body: str, mode: str = "merge"
) -> dict:
    """The import's record once its job is done."""
    answer = await client.post(
        f"/v1/users/{user}/imports/{kind}",
        params={"mode": mode},
        content=body.encode(),
        headers=CSV,
    )
    assert answer.status_code in (200, 202), answer.text
    import_id = answer.json()["id"]
    await driver.settle()
    record = (await client.get(f"/v1/users/{user}/imports/{kind}/{import_id}")).json()
    assert record["state"] == "done", record
    return record


async def exported(client: httpx.AsyncClient, user: str, kind: str) -> str:
    answer = await client.get(f"/v1/users/{user}/exports/{kind}")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    return answer.text


async def known(driver: Driver, uid: Uid, n: int) -> list[str]:
    """``n`` users the graph knows (each followed once by a stranger)."""
    users = [uid("t") for _ in range(n)]
    stranger = uid("stranger")
    for user in users:
        await driver.follow(stranger, user)
    return users


async def test_a_mastodon_following_file_imports_and_exports_again_the_same(
    client: httpx.AsyncClient, driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    a, b, c = await known(driver, uid, 3)
    header = "Account address,Show boosts,Notify on new posts,Languages\n"
    rows = [f"{a},true,false,\n", f'{b},false,true,"en, de"\n', f"{c},true,true,ja\n"]
    record = await imported(client, driver, me, "following", header + "".join(rows))
    assert (record["rows"], record["applied"], record["refused"]) == (3, 3, [])
    again = await exported(client, me, "following")
    assert again.startswith(header) and sorted(again.splitlines(True)[1:]) == sorted(rows)
    relation = await driver.relation(me, b)
    assert (relation.notifying, relation.showing_reblogs, relation.languages) == (
        True,
        False,
        ["en", "de"],
    )


async def test_bad_rows_are_refused_by_name_and_the_others_applied(
    client: httpx.AsyncClient, driver: Driver, uid: Uid
) -> None:
    me, blocker = uid("me"), uid("blocker")
    (a,) = await known(driver, uid, 1)
    await driver.block(blocker, me)
    ghost = uid("ghost")
    body = "\n".join(
        [
            "Account address,Show boosts,Notify on new posts,Languages",
            f"{a},true,false,",
            f"{ghost},true,false,",
            "not an id!,true,false,",
            f"{a}@elsewhere.example,true,false,",
            f"{blocker},true,false,",
            f"{me},maybe,false,",
        ]
    )
    record = await imported(client, driver, me, "following", body)
    reasons = {r["row"]: r["reason"] for r in record["refused"]}
    assert reasons == {
        3: "unknown_user",
        4: "malformed",
        5: "malformed",
        6: "blocked",
        7: "malformed",
    }
    assert (record["rows"], record["done"], record["applied"]) == (6, 6, 1)
    assert await driver.ids(me, "following") == [a]
    assert not (await driver.relation(me, ghost)).following


async def test_a_retried_import_is_the_same_import(
    client: httpx.AsyncClient, driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    a, b = await known(driver, uid, 2)
    body = f"{a}\n{b}\n"
    first = await imported(client, driver, me, "blocks", body)
    again = await client.post(f"/v1/users/{me}/imports/blocks", content=body.encode(), headers=CSV)
    assert again.status_code == 200 and again.json() == first
    assert sorted((await exported(client, me, "blocks")).splitlines()) == sorted([a, b])


async def test_an_overwrite_removes_what_the_file_does_not_hold(
    client: httpx.AsyncClient, driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    keep, drop, add = await known(driver, uid, 3)
    await driver.follows(me, keep, drop)
    body = f"Account address,Show boosts,Notify on new posts,Languages\n{keep},true,false,\n{add},true,false,\n"
    record = await imported(client, driver, me, "following", body, mode="overwrite")
    assert (record["applied"], record["removed"]) == (2, 1)
    assert sorted(await driver.ids(me, "following")) == sorted([keep, add])


async def test_mutes_and_lists_round_trip(
    client: httpx.AsyncClient, driver: Driver, uid: Uid
) -> None:
    me = uid("me")
    a, b = await known(driver, uid, 2)
    mutes = f"Account address,Hide notifications\n{a},true\n{b},false\n"
    assert (await imported(client, driver, me, "mutes", mutes))["applied"] == 2
    text = await exported(client, me, "mutes")
    assert text.startswith("Account address,Hide notifications\n")
    assert sorted(text.splitlines()[1:]) == sorted([f"{a},true", f"{b},false"])

    lists = f'Close friends,{a}\nClose friends,{b}\n"Work, mostly",{a}\n'
    assert (await imported(client, driver, me, "lists", lists))["applied"] == 3
    assert sorted((await exported(client, me, "lists")).splitlines(True)) == sorted(
        lists.splitlines(True)
    )
    json_export = (
        await client.get(f"/v1/users/{me}/exports/lists", params={"format": "json"})
    ).json()
    assert {(i["list"], i["account"]) for i in json_export["items"]} == {
        ("Close friends", a),
        ("Close friends", b),
        ("Work, mostly", a),
    }


async def test_limits_refuse_the_rows_past_them(
    make_driver: Callable[..., Driver], uid: Uid
) -> None:
    async with make_driver(max_blocks=2) as graph:
        me = uid("me")
        users = await known(graph, uid, 3)
        rows = [{"account": user} for user in users]
        record = await graph.import_relations(me, "blocks", rows)
        await graph.settle()
        done = await graph.import_status(me, "blocks", record.id)
        assert (done.state, done.applied, [r.reason for r in done.refused]) == (
            "done",
            2,
            ["limit"],
        )
        assert len((await graph.export_relations(me, "blocks")).items) == 2


async def test_an_imports_follows_are_not_paced_by_the_daily_limit(
    make_driver: Callable[..., Driver], driver: Driver, uid: Uid
) -> None:
    # the user's list brought over is no burst of its own follows: FOLLOWS_PER_DAY neither
    # refuses the import's rows nor counts them, and MAX_FOLLOWING still does
    async with make_driver(follows_per_day=2, max_following=5) as graph:
        me = uid("me")
        users = await known(driver, uid, 6)
        record = await graph.import_relations(me, "following", [{"account": u} for u in users])
        await graph.settle()
        done = await graph.import_status(me, "following", record.id)
        assert (done.applied, [r.reason for r in done.refused]) == (5, ["limit"])
        await graph.unfollow(me, users[0])  # room under MAX_FOLLOWING; the day's pace untouched
        await graph.follow(me, users[0])
        await graph.unfollow(me, users[1])
        await graph.follow(me, users[1])
        await graph.unfollow(me, users[2])
        await refused(graph.follow(me, users[2]), 429, "follow_rate_limit")


async def test_a_body_that_is_no_import_is_refused_whole(
    make_client: Callable[..., httpx.AsyncClient], uid: Uid
) -> None:
    me = uid("me")
    async with make_client(import_max_rows=2) as http:
        path = f"/v1/users/{me}/imports/blocks"
        for body, kind in (
            (b"{}", "application/json"),
            (b"\xff\xfe", "text/csv"),
            (b"a\nb\nc\n", "text/csv"),
            (b"", "text/csv"),
        ):
            answer = await http.post(path, content=body, headers={"Content-Type": kind})
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"]["code"] == "invalid_import"
        missing = await http.get(f"/v1/users/{me}/imports/blocks/{'0' * 20}")
        assert missing.status_code == 404
        assert (await http.get(f"/v1/users/{me}/exports/blocks")).text == ""


async def test_an_export_is_the_users_own(as_viewer, driver: Driver, uid: Uid) -> None:
    me, other = uid("me"), uid("other")
    (a,) = await known(driver, uid, 1)
    await driver.block(me, a)
    async with as_viewer(other) as graph:
        refused = await graph._http.get(f"/v1/users/{me}/exports/blocks")
        assert refused.status_code == 403
    async with as_viewer(me) as graph:
        mine = await graph._http.get(f"/v1/users/{me}/exports/blocks")
        assert mine.status_code == 200 and mine.text == f"{a}\n"
