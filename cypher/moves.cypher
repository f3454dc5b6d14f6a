// Account moves: a user names the accounts it is also known as (:User)-[:KNOWN_AS {since}]->
// (:User), and an account it names may move to it: the old account is marked moved
// (`moved_to`, `moved_at`, and the label :Moving while its followers are moved), and a
// background job makes each follower follow the new account, with its options, and leave the
// old one (workers/move_jobs.py).

// name: alias
// $id names $old as an account it is also known as (so $old may move to it).
// Locking: $id's node (its clock ticks); $id is created when unknown, as a follow creates it.
// Rules: $old unknown: 'unknown_user'; a new alias needs $id to have fewer than $max.
// An alias that exists is reported.
// Params: $id, $old, $max.
// Returns: refused (null or the rule), created.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (me:User {id: $id}) ON CREATE SET me.cs = timestamp() * 1000
SET me.clk = CASE WHEN coalesce(me.clk, 0) < now_us THEN now_us ELSE me.clk + 1 END
WITH me
OPTIONAL MATCH (old:User {id: $old})
WITH me, old,
     CASE WHEN old IS NULL THEN null
          ELSE head(COLLECT { MATCH (me)-[k:KNOWN_AS]->(old) RETURN k }) END AS known
WITH me, old, known,
     CASE WHEN old IS NULL THEN 'unknown_user'
          WHEN known IS NULL AND COUNT { (me)-[:KNOWN_AS]->() } >= $max THEN 'alias_limit'
     END AS refused
FOREACH (_ IN CASE WHEN refused IS NULL AND known IS NULL THEN [1] ELSE [] END |
  CREATE (me)-[:KNOWN_AS {since: me.clk}]->(old))
RETURN refused, refused IS NULL AND known IS NULL AS created

// name: unalias
// $id no longer names $old (a move already made stays made).
// Locking: the relationship's.
// Params: $id, $old.
// Returns: removed (how many: 0 or 1).
OPTIONAL MATCH (:User {id: $id})-[k:KNOWN_AS]->(:User {id: $old})
DELETE k
RETURN count(k) AS removed

// name: aliases
// The accounts $id is also known as, newest first (at most ALIASES_MAX).
// Locking: none (a read, auto-commit).
// Params: $id.
// Returns per alias: id, since.
MATCH (:User {id: $id})-[k:KNOWN_AS]->(old:User)
RETURN old.id AS id, k.since AS since
ORDER BY since DESC, id DESC

// name: begin
// $old moves to $new: marked moved (moved_to, moved_at: its clock tick) and :Moving until its
// followers are moved (moves/finish). A repeat of the move in effect is reported, not refused.
// Locking: both users, in id order ($ids is sorted): their clocks tick, so a move and a new
// alias or another move of either are serialized.
// Rules: either user unknown: 'unknown_user'; either being erased: 'erasing'; either
// suspended: 'suspended'; $new moved itself: 'target_moved'; $new does not name $old
// (moves/alias): 'not_aliased'; $old moved less than $cooldown_us ago: 'cooldown'.
// Params: $old, $new, $ids ([$old, $new] sorted), $cooldown_us.
// Returns: refused (null or the rule), started (a new move), moved_at, retry_at (cooldown).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND $ids AS id
OPTIONAL MATCH (u:User {id: id})
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH now_us, collect(u) AS users
WITH now_us, [u IN users WHERE u.id = $old][0] AS a, [u IN users WHERE u.id = $new][0] AS b
WITH now_us, a, b, coalesce(a.moved_to = $new, false) AS repeat
WITH a, b, repeat,
     CASE
       WHEN repeat THEN null
       WHEN a IS NULL OR b IS NULL THEN 'unknown_user'
       WHEN a:Erasing OR b:Erasing THEN 'erasing'
       WHEN a.status = 'suspended' OR b.status = 'suspended' THEN 'suspended'
       WHEN b.moved_to IS NOT NULL THEN 'target_moved'
       WHEN NOT EXISTS { (b)-[:KNOWN_AS]->(a) } THEN 'not_aliased'
       WHEN a.moved_at IS NOT NULL AND a.moved_at > now_us - $cooldown_us THEN 'cooldown'
     END AS refused
FOREACH (_ IN CASE WHEN refused IS NULL AND NOT repeat THEN [1] ELSE [] END |
  SET a.moved_to = $new, a.moved_at = a.clk, a:Moving)
RETURN refused, refused IS NULL AND NOT repeat AS started, a.moved_at AS moved_at,
       CASE WHEN refused = 'cooldown' THEN a.moved_at + $cooldown_us END AS retry_at

// name: state
// Where $id's move stands: its target, when, whether its followers are still being moved,
// and how many have moved (the unfollows of the old account the move made since it began).
// Locking: none (a read, auto-commit).
// Cost: the old account's unfollow tombstones since the move (one per moved follower).
// Params: $id.
// Returns: one row when $id is known: moved_to (null: never moved), moved_at, moving, moved.
MATCH (u:User {id: $id})
RETURN u.moved_to AS moved_to, u.moved_at AS moved_at, u:Moving AS moving,
       CASE WHEN u.moved_at IS NULL THEN 0
            ELSE COUNT { ()-[t:UNFOLLOWED {cause: 'moved'}]->(u) WHERE t.at >= u.moved_at }
       END AS moved

// name: moving
// The accounts whose followers are being moved (the moves' durable marks), oldest move first.
// Locking: none (a read, auto-commit).
// Params: $limit.
// Returns per account: id.
MATCH (u:Moving)
RETURN u.id AS id
ORDER BY u.moved_at
LIMIT $limit

// name: followers_page
// $id's followers in id order after $after, at most $limit, each with its follow's options
// (relations/follow): a seek in follows_dst_src at that position, read in the index's order.
// Locking: none (a read, auto-commit).
// Params: $id, $after ('' first), $limit.
// Returns: one row, `rows`: [id, notify, reblogs, langs] per follower, in id order (options in
// their stored form; one row of lists costs the Python driver far less than a row each).
MATCH ()-[f:FOLLOWS]->()
USING INDEX f:FOLLOWS(dst, src)
WHERE f.dst = $id AND f.src > $after
WITH f
ORDER BY f.dst, f.src
LIMIT $limit
RETURN collect([f.src, f.notify, f.reblogs, f.langs]) AS rows

// name: finish
// $id's followers are all moved: the mark ends, and the old account's severance notice is
// created in the outbox (:GraphEvent `severed`, cause `move`: how many followers the move
// took), for the change feed.
// Locking: $id's node.
// Params: $id, $event (an id).
// Returns: finished (0 when the mark had ended already), followers (moved), moved_to,
// version (the notice's).
MATCH (u:User {id: $id})
WHERE u:Moving
WITH u, COUNT { ()-[t:UNFOLLOWED {cause: 'moved'}]->(u) WHERE t.at >= u.moved_at } AS moved
REMOVE u:Moving
CREATE (:GraphEvent {id: $event, type: 'severed', src: u.moved_to, dst: u.id, v: u.clk,
                     cause: 'move', followers: moved, following: 0})
RETURN count(u) AS finished, sum(moved) AS followers, head(collect(u.moved_to)) AS moved_to,
       max(u.clk) AS version
