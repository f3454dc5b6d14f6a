// unblock: remove (src)-[:BLOCKS]->(dst). Follows removed by the block are not restored.
// Params: $src, $dst. Returns whether a block was removed.
OPTIONAL MATCH (:User {id: $src})-[k:BLOCKS]->(:User {id: $dst})
WITH collect(k) AS blocks
FOREACH (k IN blocks | DELETE k)
RETURN size(blocks) > 0 AS removed
