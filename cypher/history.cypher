// History: the graph over time. A follow is its edge (FOLLOWS, by its `since`); a follow that
// ended leaves a tombstone, (follower)-[:UNFOLLOWED]->(followed), written in the transaction
// that removed the edge (relations/unfollow, relations/block), with the ended follow's
// `since`, the end's `at` (the follower's clock tick, the version of the removal), its `cause`
// ('unfollow', 'removed', 'block') and who caused it (`by`). So the changes of a list since T
// are seeks from T in three indexes of the list (the follows made: FOLLOWS and tombstones by
// since; the follows ended: tombstones by at), a growth series counts the same entries per
// bucket, and the follows that stood at a cut are the follows made by then and the tombstones
// of those ended after it (an export). Tombstones older than CHANGES_RETENTION_DAYS are
// deleted by the worker (history/expire); an erased user's go with its node
// (moderation/erase_blocks): an erasure leaves no trace of the user.

// name: follower_changes
// Oldest-first keyset page of the follows of $id made or ended strictly after ($at, $after)
// and no later than $until, leaving out inactive (suspended, spam) users as the lists do.
// Cost: six index seeks from the cursor's position (follows_dst_since,
// unfollowed_dst_since, unfollowed_dst_at), each read in its index's order and stopped by
// LIMIT after the rows at exactly $at that the cursor already passed (one microsecond's
// worth): the work is the page, at any depth, for any number of followers.
// Locking: none (a read).
// Rules: a follower's follow and its end never share a microsecond (each is a tick of the
// follower's clock), so (at, id) orders every change of the list once.
// Params: $id, $at (int, microseconds), $after (user id, '' for none), $until (int), $limit.
// Returns: at, id, op ('follow' or 'unfollow'), cause (unfollows: 'unfollow', 'removed',
// 'block'), by (who caused an unfollow); at most $limit rows, oldest first.
CALL () {
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, since, src)
  WHERE r.dst = $id AND r.since >= $at AND r.since <= $until AND r.src IS NOT NULL
  WITH f, r
  ORDER BY r.dst, r.since, r.src
  WHERE (r.since > $at OR r.src > $after) AND NOT f:Inactive
  RETURN r.since AS at, r.src AS id, 'follow' AS op, null AS cause, null AS by
  LIMIT $limit
  UNION ALL
  MATCH (f)-[r:UNFOLLOWED]->()
  USING INDEX r:UNFOLLOWED(dst, since, src)
  WHERE r.dst = $id AND r.since >= $at AND r.since <= $until AND r.src IS NOT NULL
  WITH f, r
  ORDER BY r.dst, r.since, r.src
  WHERE (r.since > $at OR r.src > $after) AND NOT f:Inactive
  RETURN r.since AS at, r.src AS id, 'follow' AS op, null AS cause, null AS by
  LIMIT $limit
  UNION ALL
  MATCH (f)-[r:UNFOLLOWED]->()
  USING INDEX r:UNFOLLOWED(dst, at, src)
  WHERE r.dst = $id AND r.at >= $at AND r.at <= $until AND r.src IS NOT NULL
  WITH f, r
  ORDER BY r.dst, r.at, r.src
  WHERE (r.at > $at OR r.src > $after) AND NOT f:Inactive
  RETURN r.at AS at, r.src AS id, 'unfollow' AS op, r.cause AS cause, r.by AS by
  LIMIT $limit
}
RETURN at, id, op, cause, by
ORDER BY at, id
LIMIT $limit

// name: following_changes
// Oldest-first keyset page of the follows $id made or ended strictly after ($at, $after) and
// no later than $until, leaving out inactive users, as history/follower_changes does for
// followers (the same seeks in the src-ordered indexes: follows_src_since,
// unfollowed_src_since, unfollowed_src_at).
// Locking: none (a read).
// Rules: every change of the list is a tick of $id's own clock: no two share a microsecond.
// Params: $id, $at (int, microseconds), $after (user id, '' for none), $until (int), $limit.
// Returns: at, id (the followed user), op, cause, by; at most $limit rows, oldest first.
CALL () {
  MATCH ()-[r:FOLLOWS]->(f)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since >= $at AND r.since <= $until AND r.dst IS NOT NULL
  WITH f, r
  ORDER BY r.src, r.since, r.dst
  WHERE (r.since > $at OR r.dst > $after) AND NOT f:Inactive
  RETURN r.since AS at, r.dst AS id, 'follow' AS op, null AS cause, null AS by
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:UNFOLLOWED]->(f)
  USING INDEX r:UNFOLLOWED(src, since, dst)
  WHERE r.src = $id AND r.since >= $at AND r.since <= $until AND r.dst IS NOT NULL
  WITH f, r
  ORDER BY r.src, r.since, r.dst
  WHERE (r.since > $at OR r.dst > $after) AND NOT f:Inactive
  RETURN r.since AS at, r.dst AS id, 'follow' AS op, null AS cause, null AS by
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:UNFOLLOWED]->(f)
  USING INDEX r:UNFOLLOWED(src, at, dst)
  WHERE r.src = $id AND r.at >= $at AND r.at <= $until AND r.dst IS NOT NULL
  WITH f, r
  ORDER BY r.src, r.at, r.dst
  WHERE (r.at > $at OR r.dst > $after) AND NOT f:Inactive
  RETURN r.at AS at, r.dst AS id, 'unfollow' AS op, r.cause AS cause, r.by AS by
  LIMIT $limit
}
RETURN at, id, op, cause, by
ORDER BY at, id
LIMIT $limit

// name: expire
// Delete up to $batch tombstones of follows that ended before $before (µs): what
// CHANGES_RETENTION no longer keeps. The worker repeats it while a batch comes back full.
// Cost: a seek in the unfollowed_at index from its oldest end, stopped by LIMIT.
// Locking: the tombstones it deletes (and, as any relationship delete, sparse end nodes).
// Params: $before, $batch.
// Returns: deleted.
MATCH ()-[r:UNFOLLOWED]->()
WHERE r.at < $before
WITH r
LIMIT $batch
DELETE r
RETURN count(*) AS deleted

// name: follower_series
// The followers $id gained and lost per bucket of $width microseconds from $from (a bucket's
// start) to now, and how many follow it now: what a growth and churn series is computed from
// (the total at a bucket's end is the total now less the net gains after it). Gains are the
// follows made in the bucket (those that still stand and those that ended since), losses the
// follows that ended in it; an erased user's follows and ends went with it, so they are in no
// bucket and no total.
// Cost: three seeks in the followers' indexes from $from (follows_dst_since,
// unfollowed_dst_since, unfollowed_dst_at), each entry read once from the index (no edge is
// fetched), and the user's degree from the count store: the work is the changes since $from.
// Locking: none (a read).
// Params: $id, $from, $width (both microseconds; buckets start at multiples of $width).
// Returns: one row: total (followers now), buckets ([start, gained, lost] for each bucket
// with a change, any order).
OPTIONAL MATCH (u:User {id: $id})
RETURN CASE WHEN u IS NULL THEN 0 ELSE COUNT { (u)<-[:FOLLOWS]-() } END AS total, COLLECT {
  CALL () {
    MATCH ()-[r:FOLLOWS]->()
    USING INDEX r:FOLLOWS(dst, since, src)
    WHERE r.dst = $id AND r.since >= $from AND r.src IS NOT NULL
    RETURN r.since - r.since % $width AS start, 1 AS gained, 0 AS lost
    UNION ALL
    MATCH ()-[r:UNFOLLOWED]->()
    USING INDEX r:UNFOLLOWED(dst, since, src)
    WHERE r.dst = $id AND r.since >= $from AND r.src IS NOT NULL
    RETURN r.since - r.since % $width AS start, 1 AS gained, 0 AS lost
    UNION ALL
    MATCH ()-[r:UNFOLLOWED]->()
    USING INDEX r:UNFOLLOWED(dst, at, src)
    WHERE r.dst = $id AND r.at >= $from AND r.src IS NOT NULL
    RETURN r.at - r.at % $width AS start, 0 AS gained, 1 AS lost
  }
  WITH start, sum(gained) AS gained, sum(lost) AS lost
  RETURN [start, gained, lost]
} AS buckets

// name: following_series
// The follows $id made and ended per bucket of $width microseconds from $from to now, and how
// many it follows now, as history/follower_series does for followers (the same seeks in the
// src-ordered indexes: follows_src_since, unfollowed_src_since, unfollowed_src_at).
// Locking: none (a read).
// Params: $id, $from, $width.
// Returns: one row: total (followings now), buckets ([start, gained, lost]).
OPTIONAL MATCH (u:User {id: $id})
RETURN CASE WHEN u IS NULL THEN 0 ELSE COUNT { (u)-[:FOLLOWS]->() } END AS total, COLLECT {
  CALL () {
    MATCH ()-[r:FOLLOWS]->()
    USING INDEX r:FOLLOWS(src, since, dst)
    WHERE r.src = $id AND r.since >= $from AND r.dst IS NOT NULL
    RETURN r.since - r.since % $width AS start, 1 AS gained, 0 AS lost
    UNION ALL
    MATCH ()-[r:UNFOLLOWED]->()
    USING INDEX r:UNFOLLOWED(src, since, dst)
    WHERE r.src = $id AND r.since >= $from AND r.dst IS NOT NULL
    RETURN r.since - r.since % $width AS start, 1 AS gained, 0 AS lost
    UNION ALL
    MATCH ()-[r:UNFOLLOWED]->()
    USING INDEX r:UNFOLLOWED(src, at, dst)
    WHERE r.src = $id AND r.at >= $from AND r.dst IS NOT NULL
    RETURN r.at - r.at % $width AS start, 0 AS gained, 1 AS lost
  }
  WITH start, sum(gained) AS gained, sum(lost) AS lost
  RETURN [start, gained, lost]
} AS buckets

// name: export_batch
// The whole graph as it stood at a cut (a moment, µs), for `graphsvc export`, read a
// batch of users at a time in id order, each batch one round trip answering every table's
// rows of those users as lists (a list decodes far faster than a record per row).
// The follows are exact at the cut whatever commits during the export, so the batches need no
// common transaction: a batch reads the follows made by the cut (FOLLOWS, since <= cut) and
// those made by then that ended after it (the tombstones). The rest is read as it is when its
// batch is read, less what was made after the cut.
// The rows of every table for the $users users after $after (in id order), as of $cut.
// Cost: a seek in the user_id_unique index from $after, stopped at $users, then each user's
// own relationships (outgoing follows at most MAX_FOLLOWING, blocks at most MAX_BLOCKS, mutes
// at most MAX_MUTES): the work is the batch's.
// Locking: none (a read).
// Params: $after ('' for the first batch), $users, $cut.
// Returns: one row: last (the batch's last id; null when there is no user after $after),
// users ([id, status]), follows ([src, dst, since]), blocks ([src, dst, since]), mutes
// ([src, dst, since, until, notifications]).
OPTIONAL MATCH (u:User)
WHERE u.id > $after
WITH u
ORDER BY u.id
LIMIT $users
WITH collect(u) AS batch
RETURN batch[-1].id AS last,
       [u IN batch | [u.id, coalesce(u.status, 'active')]] AS users,
       COLLECT {
         UNWIND batch AS u
         MATCH (u)-[r:FOLLOWS]->()
         WHERE r.since <= $cut
         RETURN [r.src, r.dst, r.since]
         UNION ALL
         UNWIND batch AS u
         MATCH (u)-[r:UNFOLLOWED]->()
         WHERE r.since <= $cut AND r.at > $cut
         RETURN [r.src, r.dst, r.since]
       } AS follows,
       COLLECT {
         UNWIND batch AS u
         MATCH (u)-[k:BLOCKS]->(b:User)
         WHERE k.since <= $cut
         RETURN [u.id, b.id, k.since]
       } AS blocks,
       COLLECT {
         UNWIND batch AS u
         MATCH (u)-[m:MUTES]->(b:User)
         WHERE m.since <= $cut AND (m.until IS NULL OR m.until > $cut)
         RETURN [u.id, b.id, m.since, m.until, coalesce(m.notif, false)]
       } AS mutes
