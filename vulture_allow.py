# Names vulture cannot see used: read by frameworks (pydantic fields of answers, enum values
# read back from Redis), or public API of the client that the project itself does not call.
# `make lint` runs vulture over graphsvc, tests and bench with this file.
from graphsvc import schemas
from graphsvc.client.aio import AsyncGraphClient
from graphsvc.client.sync import GraphClient
from graphsvc.domain.timeline import Mode
from graphsvc.ops import evaluation

schemas.BlockBody.removed_follows
schemas.CountsBody.celebrity
schemas.AffinityItem.affinity
schemas.DismissBody.dismissed
schemas.StatusBody.fanout_pending
Mode.DRAINING
GraphClient.record_interactions
GraphClient.record_impressions
GraphClient.delete_post
AsyncGraphClient.new_followers
evaluation.Split.split_at
evaluation.Scores.coverage
evaluation.Spread.low
