// fanout_state: where a status fan-out starts or resumes: the user's status, a version for
// it (the clock, never older than the status's own tick) and the followed users whose
// mirrored counts a stopped job may not have refreshed. No row for an unknown user.
// Params: $id.
MATCH (x:User {id: $id})
RETURN coalesce(x.status, 'active') AS status, x.clk AS version,
       coalesce(x.refresh, []) AS refresh
