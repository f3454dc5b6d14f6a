// suggest_filter: which of $ids may be suggested to $id: known, active, not $id, not followed,
// no block either way, not dismissed. Keeps the order of $ids.
// Params: $id, $ids.
OPTIONAL MATCH (me:User {id: $id})
UNWIND $ids AS cid
MATCH (c:User {id: cid})
WHERE cid <> $id AND NOT c:Inactive AND NOT c:Erasing
  AND (me IS NULL OR NOT (EXISTS { (me)-[:FOLLOWS]->(c) } OR EXISTS { (me)-[:BLOCKS]-(c) }
                          OR EXISTS { (me)-[:DISMISSED]->(c) }))
RETURN collect(cid) AS ids
