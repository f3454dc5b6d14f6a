// dismiss: $id never wants $target suggested again.
// Params: $id, $target. Returns whether the dismissal is new.
MERGE (me:User {id: $id})
MERGE (t:User {id: $target})
WITH me, t
OPTIONAL MATCH (me)-[known:DISMISSED]->(t)
WITH me, t, collect(known) AS known
FOREACH (_ IN CASE WHEN size(known) = 0 THEN [1] ELSE [] END | CREATE (me)-[:DISMISSED]->(t))
RETURN size(known) = 0 AS created
