// erase_end: delete the erased user's node once no relationship is left (a follow that
// raced the start of the erasure may still have landed: then the batches run again).
// `version` is newer than any status version the user had (a tick of its clock): the mirror
// uses it to forget the user's status, so a later user with the same id starts out active.
// Params: $id. Returns whether the node is gone (also true when it was already gone).
OPTIONAL MATCH (x:User {id: $id})
WITH x, x IS NOT NULL AND EXISTS { (x)--() } AS busy, datetime.realtime() AS now
WITH x, busy, now.epochSeconds * 1000000 + now.microsecond AS now_us
WITH x, busy,
     CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END AS version
FOREACH (_ IN CASE WHEN x IS NOT NULL AND NOT busy THEN [1] ELSE [] END | DELETE x)
RETURN NOT busy AS done, version
