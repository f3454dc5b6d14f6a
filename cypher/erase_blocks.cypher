// erase_blocks: delete one batch of the erased user's blocks, both directions.
// Params: $id, $batch. Returns how many were deleted (0: done).
OPTIONAL MATCH (:User:Erasing {id: $id})-[k:BLOCKS]-()
WITH k
LIMIT $batch
WITH collect(k) AS blocks
FOREACH (k IN blocks | DELETE k)
RETURN size(blocks) AS deleted
