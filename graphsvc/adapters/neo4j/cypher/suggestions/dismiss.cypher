// dismiss: $id never wants $target suggested again.
// Rules: the target must be in the graph (a dismissal never creates it: 'unknown_target'),
// and neither user may be being erased ('erasing': the erasure would only delete the
// dismissal, and must not have to chase new ones). The dismissing user is the acting one: its
// node is created when it has none yet (a newcomer dismissing a cold-start suggestion), as its
// first follow would.
// Locking: the dismissing user's node (MERGE) and both nodes when the dismissal is new.
// Params: $id, $target. Returns one row: refused (null, or the rule), created (whether the
// dismissal is new).
OPTIONAL MATCH (t:User {id: $target})
OPTIONAL MATCH (known:User {id: $id})
WITH t, CASE WHEN t IS NULL THEN 'unknown_target'
             WHEN t:Erasing OR coalesce(known:Erasing, false) THEN 'erasing' END AS refused
CALL (t, refused) {
  WITH t
  WHERE refused IS NULL
  MERGE (me:User {id: $id})
  WITH me, t
  OPTIONAL MATCH (me)-[seen:DISMISSED]->(t)
  WITH me, t, collect(seen) AS seen
  FOREACH (_ IN CASE WHEN size(seen) = 0 THEN [1] ELSE [] END | CREATE (me)-[:DISMISSED]->(t))
  RETURN count(CASE WHEN size(seen) = 0 THEN 1 END) > 0 AS created
}
RETURN refused, created
