// model_latest: the newest version of the ranker named $name, if any was trained.
// Params: $name. Returns: version, body (JSON text), or no row.
MATCH (m:RankerModel {name: $name})
RETURN m.version AS version, m.body AS body
ORDER BY version DESC
LIMIT 1
