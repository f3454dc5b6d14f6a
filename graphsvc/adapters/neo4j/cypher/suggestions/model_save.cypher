// model_save: store a trained ranker as the next version of the model named $name. Every API
// process reads the newest version (model_latest.cypher). Two trainers racing for the same
// version: the ranker_model_version constraint fails one of them, which the trainer reports.
// Params: $name, $body (the model as JSON text), $created (µs), $metrics (JSON text).
// Returns: version.
OPTIONAL MATCH (old:RankerModel {name: $name})
WITH coalesce(max(old.version), 0) + 1 AS version
CREATE (m:RankerModel {name: $name, version: version, created: $created, body: $body,
                       metrics: $metrics})
RETURN version
