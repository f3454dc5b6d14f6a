// erase_blocks: delete one batch of the erased user's other relationships, both directions:
// blocks, interactions (affinity) and dismissed suggestions.
// Params: $id, $batch. Returns how many were deleted (fewer than $batch: caught up; what
// arrives later goes with the node, erase_end.cypher).
OPTIONAL MATCH (:User:Erasing {id: $id})-[k:BLOCKS|INTERACTS|DISMISSED]-()
WITH k
LIMIT $batch
WITH collect(k) AS gone
FOREACH (k IN gone | DELETE k)
RETURN size(gone) AS deleted
