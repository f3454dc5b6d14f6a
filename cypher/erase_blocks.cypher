// erase_blocks: delete one batch of the erased user's blocks, both directions.
// Params: $id, $batch. Returns how many were deleted (0: done).
MATCH (:User {id: $id})-[k:BLOCKS]-()
WITH k
LIMIT $batch
DELETE k
RETURN count(*) AS deleted
