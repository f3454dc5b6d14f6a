// Privacy: each user's settings, on the user's node. A setting at its default has no property,
// so a user who never chose anything costs nothing: `pf` and `pg` (who sees the followers and
// the following lists: 'followers', 'mutuals' or 'private'; absent: public), `pc` ('private':
// counts hidden), `nd` (true: not discoverable, never suggested to others) and `lk` (true:
// locked, new follows wait for approval). A user with any setting off its default carries the
// label :Restricted, by which the Redis mirror of the settings is rebuilt.

// name: set_privacy
// Set every setting of one user at once (the service merges a partial edit into the settings
// it read under the same lock).
// Locking: the user's node (created when unknown); its clock ticks, and the tick versions the
// settings in the Redis mirror, so a late or repeated mirror write cannot undo a newer one.
// A change creates its event in the outbox (:GraphEvent, type 'privacy'), from which the relay
// repairs the mirror if the service's own write to it is lost.
// Rules: a user being erased keeps no settings (refused: erasing true, nothing written).
// Unlocking approves every pending request in the background: the user is marked for it in
// this transaction (:Approving, as requests/approve_all_begin marks it), so the work cannot be
// lost between the change and its start.
// Params: $id, $pf, $pg, $pc, $nd, $lk (null for a default), $event.
// Returns: erasing, changed, version, the previous settings (prev_pf, prev_pg, prev_pc,
// prev_nd, prev_lk), and approving (every pending request is to be approved: it unlocked).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (u:User {id: $id}) ON CREATE SET u.cs = timestamp() * 1000
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH u, u:Erasing AS erasing, [u.pf, u.pg, u.pc, u.nd, u.lk] AS previous
WITH u, erasing, previous,
     [x IN previous | coalesce(toString(x), '')] <>
       [x IN [$pf, $pg, $pc, $nd, $lk] | coalesce(toString(x), '')] AS changed
FOREACH (_ IN CASE WHEN changed AND NOT erasing THEN [1] ELSE [] END |
  SET u.pf = $pf, u.pg = $pg, u.pc = $pc, u.nd = $nd, u.lk = $lk
  CREATE (:GraphEvent {id: $event, type: 'privacy', src: $id, dst: '', v: u.clk}))
FOREACH (_ IN CASE WHEN NOT erasing AND
                        ($pf IS NOT NULL OR $pg IS NOT NULL OR $pc IS NOT NULL OR
                         $nd IS NOT NULL OR $lk IS NOT NULL) THEN [1] ELSE [] END |
  SET u:Restricted)
FOREACH (_ IN CASE WHEN NOT erasing AND $pf IS NULL AND $pg IS NULL AND $pc IS NULL AND
                        $nd IS NULL AND $lk IS NULL THEN [1] ELSE [] END |
  REMOVE u:Restricted)
FOREACH (_ IN CASE WHEN NOT erasing AND coalesce(previous[4], false) AND $lk IS NULL
                   THEN [1] ELSE [] END |
  SET u:Approving, u.approve_until = u.clk, u.approve_since = coalesce(u.approve_since, 0),
      u.approve_after = coalesce(u.approve_after, ''))
RETURN erasing, changed AND NOT erasing AS changed, u.clk AS version,
       previous[0] AS prev_pf, previous[1] AS prev_pg, previous[2] AS prev_pc,
       previous[3] AS prev_nd, previous[4] AS prev_lk,
       NOT erasing AND coalesce(previous[4], false) AND $lk IS NULL AS approving

// name: privacy_of
// The settings of some users, as they are now (where writes go: a user's own read after a
// change sees it).
// Locking: none (a read).
// Rules: an unknown id gives no row (its settings are the defaults).
// Params: $ids.
// Returns per known user: id, pf, pg, pc, nd, lk, version (the clock).
UNWIND $ids AS id
MATCH (u:User {id: id})
RETURN u.id AS id, u.pf AS pf, u.pg AS pg, u.pc AS pc, u.nd AS nd, u.lk AS lk,
       coalesce(u.clk, 0) AS version

// name: restricted_users
// Every user with a setting off its default, in id order, to rebuild the Redis mirror of the
// settings (a long job's walk, a batch at a time).
// Locking: none (a read).
// Params: $after (a user id, '' to start), $limit.
// Returns: id, pf, pg, pc, nd, lk, version; at most $limit rows.
MATCH (u:User:Restricted)
WHERE u.id > $after
RETURN u.id AS id, u.pf AS pf, u.pg AS pg, u.pc AS pc, u.nd AS nd, u.lk AS lk,
       coalesce(u.clk, 0) AS version
ORDER BY id
LIMIT $limit
