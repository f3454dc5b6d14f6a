"""A user's script, type-checked with `mypy --strict` from outside the checkout
(tests/unit/client/test_client_typing.py): every public method of both clients, each answer's type
asserted. It is never run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, assert_type

import networkx
import pandas

from graphsvc.client import (
    AsyncGraphClient,
    AsyncListing,
    ErrorCode,
    GraphClient,
    GraphError,
    Listing,
    NewFollower,
    Notification,
)
from graphsvc.wire import schemas

NOW = datetime.now(UTC)


def blocking(graph: GraphClient) -> None:
    assert_type(graph.follow("a", "b", recommendation_id=None), schemas.FollowBody)
    assert_type(graph.unfollow("a", "b"), schemas.UnfollowBody)
    assert_type(graph.remove_follower("a", "b"), schemas.RemoveFollowerBody)
    assert_type(graph.remove_followers("a", ["b"]), schemas.RemoveFollowersBody)
    assert_type(graph.block("a", "b"), schemas.BlockBody)
    assert_type(graph.unblock("a", "b"), schemas.UnblockBody)
    assert_type(graph.mute("a", "b", notifications=True, duration_seconds=60), schemas.MuteBody)
    assert_type(graph.unmute("a", "b"), schemas.UnmuteBody)
    assert_type(graph.mutes("a"), Listing[schemas.MutesBody])
    made = graph.create_list("a", "Reads", description="d", private=True, purpose="curate")
    assert_type(made, schemas.ListBody)
    assert_type(graph.get_list("a", made.id), schemas.ListBody)
    assert_type(graph.update_list("a", made.id, name="R", private=False), schemas.ListBody)
    assert_type(graph.lists("a", member="b"), Listing[schemas.ListsBody])
    assert_type(graph.list_members("a", made.id), Listing[schemas.PageBody])
    assert_type(graph.list_timeline("a", made.id), Listing[schemas.TimelineBody])
    assert_type(graph.follow_list("b", made.id), schemas.ListFollowBody)
    assert_type(graph.unfollow_list("b", made.id), schemas.ListFollowBody)
    assert_type(graph.followed_lists("b"), Listing[schemas.FollowedListsBody])
    assert_type(graph.subscribe_list("b", made.id, "block"), schemas.SubscriptionBody)
    assert_type(graph.get_list_subscription("b", made.id), schemas.SubscriptionBody)
    assert_type(graph.list_subscriptions("b"), Listing[schemas.SubscriptionsBody])
    assert_type(graph.except_list_member("b", made.id, "c"), schemas.ExceptionBody)
    assert_type(graph.subscription_exceptions("b", made.id), Listing[schemas.ExceptionsBody])
    assert_type(graph.unsubscribe_list("b", made.id), schemas.UnsubscribedBody)
    changed = graph.change_list_members("a", made.id, add=["b"], remove=["c"])
    assert_type(changed, schemas.MembersChangeBody)
    assert_type(graph.delete_list("a", made.id), schemas.ListDeletedBody)
    assert_type(graph.relationships("a", ["b"]), schemas.RelationshipsBody)
    assert_type(graph.follow_requests("a"), Listing[schemas.PageBody])
    assert_type(graph.sent_follow_requests("a"), Listing[schemas.PageBody])
    assert_type(graph.approve_follow_request("a", "b"), schemas.FollowRequestBody)
    assert_type(graph.reject_follow_request("a", "b"), schemas.FollowRequestBody)
    assert_type(graph.approve_all_follow_requests("a"), schemas.ApproveAllBody)
    assert_type(graph.privacy("a"), schemas.PrivacyBody)
    assert_type(graph.set_privacy("a", followers_visibility="mutuals"), schemas.PrivacyBody)
    assert_type(graph.counts("a").followers, int | None)
    for item in graph.followers("a", limit=10, progress=True):
        assert_type(item.since, datetime)
    assert_type(graph.followers("a").to_pandas(), pandas.DataFrame)
    assert_type(graph.following("a", celebrities_only=True), Listing[schemas.PageBody])
    assert_type(graph.friends("a"), Listing[schemas.PageBody])
    assert_type(graph.blocks("a"), Listing[schemas.PageBody])
    for page in graph.common_following("a", "b").pages():
        assert_type(page.total, int)
    for other in graph.common_followers("a", "b"):
        assert_type(other, str)
    assert_type(graph.familiar_followers("a", "b", limit=3), schemas.IdPageBody)
    assert_type(graph.changes("a", since=NOW).next_cursor, str)
    assert_type(graph.series("a", bucket="day").items[0].total, int)
    assert_type(graph.familiar_followers_many("a", ["b"]).familiar["b"].total, int | None)
    assert_type(graph.distance("a", "b").distance, int | None)
    assert_type(graph.count_audience({"followers": "a"}).estimate, int | None)
    for member in graph.audience({"following": "a"}, limit=5):
        assert_type(member, str)
    assert_type(graph.series_frame("a", "following"), pandas.DataFrame)
    for change in graph.changes_since("a", "following"):
        assert_type(change.op, Literal["follow", "unfollow"])
    assert_type(graph.status("a"), schemas.StatusBody)
    assert_type(graph.set_status("a", "active"), schemas.StatusBody)
    assert_type(graph.erase("a"), schemas.EraseBody)
    assert_type(graph.record_interactions([("a", "b", "like", NOW)]), schemas.AcceptedBody)
    assert_type(graph.suggestions("a", limit=5), schemas.SuggestionsBody)
    assert_type(graph.similar("a", "b"), schemas.SimilarBody)
    assert_type(graph.dismiss("a", "b"), schemas.DismissBody)
    assert_type(graph.record_impressions("a", ["b"]), schemas.RecordedBody)
    assert_type(graph.suggestions_report(), schemas.SuggestionsReportBody)
    assert_type(graph.publish("a", "p", NOW), schemas.PostBody)
    assert_type(graph.post("a", "p"), schemas.PostBody)
    assert_type(graph.delete_post("a", "p"), schemas.PostDeletedBody)
    for entry in graph.timeline("a"):
        assert_type(entry.at, datetime)
    assert_type(graph.explain_suggestion("a", "b"), schemas.ExplanationBody)
    assert_type(graph.affinities("a"), schemas.AffinitiesBody)
    for event in graph.new_followers("a", last_event_id=None):
        assert_type(event, NewFollower)
        assert_type(event["since"], datetime)
    assert_type(graph.export_relations("a", "blocks"), schemas.ExportBody)
    assert_type(graph.import_relations("a", "blocks", [{"account": "b"}]), schemas.ImportBody)
    assert_type(graph.import_status("a", "blocks", "0" * 20), schemas.ImportBody)
    assert_type(graph.add_alias("a", "b"), schemas.AliasBody)
    assert_type(graph.aliases("a"), schemas.AliasesBody)
    assert_type(graph.move("b", "a"), schemas.MoveBody)
    assert_type(graph.move_state("b"), schemas.MoveBody)
    for told in graph.notifications("a", last_event_id=None):
        assert_type(told, Notification)
        assert_type(told["at"], datetime)
    assert_type(graph.counts_many(["a"]), dict[str, schemas.CountsBody])
    assert_type(graph.relationships_many("a", ["b"]), dict[str, schemas.RelationshipBody])
    assert_type(graph.ego_graph("a", radius=2), networkx.DiGraph)
    assert_type(graph.subgraph(["a", "b"]), networkx.DiGraph)
    graph.close()


async def awaited(graph: AsyncGraphClient) -> None:
    assert_type(await graph.follow("a", "b"), schemas.FollowBody)
    assert_type(await graph.unfollow("a", "b"), schemas.UnfollowBody)
    assert_type(await graph.remove_follower("a", "b"), schemas.RemoveFollowerBody)
    assert_type(await graph.remove_followers("a", ["b"]), schemas.RemoveFollowersBody)
    assert_type(await graph.block("a", "b"), schemas.BlockBody)
    assert_type(await graph.unblock("a", "b"), schemas.UnblockBody)
    assert_type(await graph.mute("a", "b"), schemas.MuteBody)
    assert_type(await graph.unmute("a", "b"), schemas.UnmuteBody)
    assert_type(graph.mutes("a"), AsyncListing[schemas.MutesBody])
    made = await graph.create_list("a", "Reads", description="d", private=True)
    assert_type(made, schemas.ListBody)
    assert_type(await graph.get_list("a", made.id), schemas.ListBody)
    assert_type(await graph.update_list("a", made.id, description="x"), schemas.ListBody)
    assert_type(graph.lists("a"), AsyncListing[schemas.ListsBody])
    assert_type(graph.list_members("a", made.id), AsyncListing[schemas.PageBody])
    assert_type(graph.list_timeline("a", made.id), AsyncListing[schemas.TimelineBody])
    assert_type(await graph.follow_list("b", made.id), schemas.ListFollowBody)
    assert_type(await graph.unfollow_list("b", made.id), schemas.ListFollowBody)
    assert_type(graph.followed_lists("b"), AsyncListing[schemas.FollowedListsBody])
    assert_type(await graph.subscribe_list("b", made.id, "mute"), schemas.SubscriptionBody)
    assert_type(await graph.get_list_subscription("b", made.id), schemas.SubscriptionBody)
    assert_type(graph.list_subscriptions("b"), AsyncListing[schemas.SubscriptionsBody])
    assert_type(
        await graph.except_list_member("b", made.id, "c", excepted=False), schemas.ExceptionBody
    )
    assert_type(graph.subscription_exceptions("b", made.id), AsyncListing[schemas.ExceptionsBody])
    assert_type(await graph.unsubscribe_list("b", made.id), schemas.UnsubscribedBody)
    changed = await graph.change_list_members("a", made.id, add=["b"])
    assert_type(changed, schemas.MembersChangeBody)
    assert_type(await graph.delete_list("a", made.id), schemas.ListDeletedBody)
    assert_type(await graph.relationships("a", ["b"]), schemas.RelationshipsBody)
    assert_type(graph.follow_requests("a"), AsyncListing[schemas.PageBody])
    assert_type(graph.sent_follow_requests("a"), AsyncListing[schemas.PageBody])
    assert_type(await graph.approve_follow_request("a", "b"), schemas.FollowRequestBody)
    assert_type(await graph.reject_follow_request("a", "b"), schemas.FollowRequestBody)
    assert_type(await graph.approve_all_follow_requests("a"), schemas.ApproveAllBody)
    assert_type(await graph.privacy("a"), schemas.PrivacyBody)
    assert_type(await graph.set_privacy("a", locked=True), schemas.PrivacyBody)
    assert_type(await graph.counts("a"), schemas.CountsBody)
    async for item in graph.followers("a"):
        assert_type(item.since, datetime)
    assert_type(await graph.following("a").to_pandas(), pandas.DataFrame)
    assert_type(graph.friends("a"), AsyncListing[schemas.PageBody])
    assert_type(graph.blocks("a"), AsyncListing[schemas.PageBody])
    assert_type(graph.common_following("a", "b"), AsyncListing[schemas.IdPageBody])
    assert_type(graph.common_followers("a", "b"), AsyncListing[schemas.IdPageBody])
    assert_type(await graph.familiar_followers("a", "b"), schemas.IdPageBody)
    assert_type((await graph.changes("a", cursor="c")).more, bool)
    assert_type(await graph.changes_since("a").to_pandas(), pandas.DataFrame)
    assert_type(await graph.series_frame("a", start=NOW), pandas.DataFrame)
    assert_type((await graph.distance("a", "b")).exact, bool)
    assert_type(graph.audience({"followers": "a"}), AsyncListing[schemas.AudiencePageBody])
    assert_type(
        (await graph.familiar_followers_many("a", ("b", "c"))).familiar,
        dict[str, schemas.FamiliarBody],
    )
    assert_type(await graph.status("a"), schemas.StatusBody)
    assert_type(await graph.set_status("a", "spam"), schemas.StatusBody)
    assert_type(await graph.erase("a"), schemas.EraseBody)
    assert_type(await graph.record_interactions([]), schemas.AcceptedBody)
    assert_type(await graph.suggestions("a"), schemas.SuggestionsBody)
    assert_type(await graph.similar("a", "b"), schemas.SimilarBody)
    assert_type(await graph.dismiss("a", "b"), schemas.DismissBody)
    assert_type(await graph.record_impressions("a", []), schemas.RecordedBody)
    assert_type(await graph.suggestions_report(), schemas.SuggestionsReportBody)
    assert_type(await graph.publish("a", "p", NOW), schemas.PostBody)
    assert_type(await graph.post("a", "p"), schemas.PostBody)
    assert_type(await graph.delete_post("a", "p"), schemas.PostDeletedBody)
    assert_type(graph.timeline("a"), AsyncListing[schemas.TimelineBody])
    assert_type(await graph.explain_suggestion("a", "b"), schemas.ExplanationBody)
    assert_type(await graph.affinities("a"), schemas.AffinitiesBody)
    async for event in graph.new_followers("a"):
        assert_type(event["follower"], str)
    assert_type(await graph.export_relations("a", "mutes"), schemas.ExportBody)
    assert_type(
        await graph.import_relations("a", "mutes", [], mode="overwrite"), schemas.ImportBody
    )
    assert_type(await graph.import_status("a", "blocks", "0" * 20), schemas.ImportBody)
    assert_type(await graph.add_alias("a", "b"), schemas.AliasBody)
    assert_type(await graph.aliases("a"), schemas.AliasesBody)
    assert_type(await graph.move("b", "a"), schemas.MoveBody)
    assert_type(await graph.move_state("b"), schemas.MoveBody)
    async for told in graph.notifications("a"):
        assert_type(told["post_id"], str)
    await graph.aclose()


def failures(error: GraphError) -> None:
    assert_type(error.status, int | None)
    assert_type(error.code, ErrorCode)
    assert_type(error.request_id, str | None)
    assert_type(error.url, str | None)
