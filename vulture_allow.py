# Names vulture cannot see used: read by frameworks or by people (enum values read back from
# Redis, fields of the evaluation's reports). The client's methods and the answers' fields are
# used by the tests, which drive the API through the client.
# `make lint` runs vulture over graphsvc, tests and bench with this file.
from bench import peer
from graphsvc.adapters.redis.multiplexed import _Connection
from graphsvc.domain.lists import Purpose
from graphsvc.domain.timeline import Mode
from graphsvc.ops.evaluation import offline as evaluation
from tests.conftest import every_touched  # a fixture other fixtures ask for by name
from tests.integration.lists.conftest import list_consumer_ready  # an autouse fixture

Mode.DRAINING
_Connection.connection_made  # asyncio's protocol methods, called by the event loop
_Connection.data_received
_Connection.connection_lost
peer.create_minimal_app  # served by name (bench.peer.MINIMAL_APP)
Purpose.MODERATION
evaluation.Split.split_at
evaluation.Scores.coverage
evaluation.Spread.low
every_touched
list_consumer_ready
