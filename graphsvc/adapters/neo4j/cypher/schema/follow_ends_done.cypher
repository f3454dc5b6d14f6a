// follow_ends_done: whether every FOLLOWS carries the ids of its ends (src, dst), which the
// list indexes of schema.cypher order by: true once follow_ends.cypher has run to its end on
// this database (the mark it leaves: a Checkpoint named 'follow_ends').
// Params: none. Returns: done.
OPTIONAL MATCH (cp:Checkpoint {name: 'follow_ends'})
RETURN cp IS NOT NULL AS done
