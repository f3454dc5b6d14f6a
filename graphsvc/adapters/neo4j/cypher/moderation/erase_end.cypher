// erase_end: delete the erased user's node once no relationship is left (a follow that
// raced the start of the erasure may still have landed: then the batches run again). The
// node is locked (its clock ticks) before the check, so no follow can slip in between.
// `version`, that tick, is newer than any status version the user had: the mirror uses it to
// forget the user's status, so a later user with the same id starts out active.
// Params: $id. Returns whether the erasure is over, and the version (null when the node was
// already gone, or is not being erased).
OPTIONAL MATCH (x:User:Erasing {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, x.clk AS version, x IS NOT NULL AND EXISTS { (x)--() } AS busy
FOREACH (_ IN CASE WHEN x IS NOT NULL AND NOT busy THEN [1] ELSE [] END | DELETE x)
RETURN NOT busy AS done, version
