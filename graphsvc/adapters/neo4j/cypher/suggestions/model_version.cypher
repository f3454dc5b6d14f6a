// model_version: the newest version number of the ranker named $name (0: none), read by every
// API process every PYMK_MODEL_REFRESH_SECONDS to notice a new model without reading it.
// Params: $name. Returns: version.
OPTIONAL MATCH (m:RankerModel {name: $name})
RETURN coalesce(max(m.version), 0) AS version
